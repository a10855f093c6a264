"""`mwperf probe --ros2` end to end with a fake agent (tests/fakes/fake_probe_ros2.py prints the
canned log of tests/fixtures/probe_ros2/): the arguments the agent gets (ROS names as rt/...,
the domain from --domain or $ROS_DOMAIN_ID), the text, JSON and saved folder; and the errors:
one line, exit 2 or 1, the agent never started for a bad --domain, nothing saved."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_inprocess import run_inprocess

FAKE = Path(__file__).parent / "fakes" / "fake_probe_ros2.py"
ROS2_ENV = ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_STATIC_PEERS", "CYCLONEDDS_URI",
            "ROS_LOCALHOST_ONLY")
"""what the probe reads of the environment (a ROS 2 node's discovery settings)"""


def probe(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ROS2_ENV}
    environ |= {"MWPERF_AGENT": str(FAKE), "FAKE_PROBE_ROS2_ARGV": str(tmp_path / "argv.json")}
    environ |= env
    return run_inprocess(["probe", "--ros2", "--results", str(tmp_path / "results"), *args],
                         environ, timeout=60)  # as a child would run it (cli_inprocess)


def agent_args(tmp_path: Path) -> list[str]:
    return json.loads((tmp_path / "argv.json").read_text())


def test_happy_path_text_and_saved(tmp_path: Path) -> None:
    done = probe(tmp_path, "--interface", "lo", "/chatter", "rt/scan", "DDSPerfRDataKS",
                 "--duration", "2s", "--discovery-time", "500ms")
    assert done.returncode == 0, done.stderr
    args = agent_args(tmp_path)
    assert args[:3] == ["probe-ros2", "--domain", "0"]
    assert args[args.index("--duration") + 1] == "2000000000ns"
    assert args[args.index("--discovery-time") + 1] == "500000000ns"
    assert args[args.index("--interface") + 1] == "lo" and "--reliable" not in args
    assert [args[i + 1] for i, a in enumerate(args) if a == "--topic"] == [
        "rt/chatter", "rt/scan", "DDSPerfRDataKS"]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ros2 domain 0 (interface lo): probed 2.00 s, 3 topics")
    assert lines[3] == ("  no data flows from /sensors/lidar to /listener on /scan: reliability: "
                        "the reader asks for reliable, the writer offers best-effort")
    folder = Path(lines[-1].removeprefix("saved in "))
    assert (folder / "probe.json").is_file() and (folder / "probe.txt").is_file()
    shown = run_inprocess(["show", str(folder)], timeout=60)
    assert shown.returncode == 0 and "no data flows from /sensors/lidar" in shown.stdout
    query = run_inprocess(["query", "--results", str(tmp_path / "results"),
                           "SELECT topic, publisher_nodes FROM probes ORDER BY topic",
                           "--format", "json"], timeout=60)
    assert query.returncode == 0, query.stderr
    assert json.loads(query.stdout)[0] == {"topic": "/chatter", "publisher_nodes": "/talker"}


def test_json_domain_from_the_environment_and_reliable(tmp_path: Path) -> None:
    done = probe(tmp_path, "--reliable", "--json", "--no-save", "--duration", "1s",
                 ROS_DOMAIN_ID="7")
    assert done.returncode == 0, done.stderr
    args = agent_args(tmp_path)
    assert args[1:3] == ["--domain", "7"] and "--reliable" in args and "--topic" not in args
    doc = json.loads(done.stdout)
    assert doc["ros2"]["reliable"] is True and len(doc["topics"]) == 6
    assert not (tmp_path / "results").exists()


def flag_values(args: list[str], flag: str) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args) if a == flag]


def test_the_environment_discovers_as_a_ros2_node_would(tmp_path: Path) -> None:
    """ROS_AUTOMATIC_DISCOVERY_RANGE, ROS_STATIC_PEERS and CYCLONEDDS_URI go to the agent
    (which maps them as rmw_cyclonedds_cpp does) and into the document."""
    uri = "<CycloneDDS><Domain><General><Interfaces><NetworkInterface name='lo'/>"
    done = probe(tmp_path, "--json", "--no-save", "--duration", "1s",
                 ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", ROS_STATIC_PEERS="10.0.0.7;robot",
                 CYCLONEDDS_URI=uri)
    assert done.returncode == 0, done.stderr
    args = agent_args(tmp_path)
    assert flag_values(args, "--discovery-range") == ["LOCALHOST"]
    assert flag_values(args, "--static-peer") == ["10.0.0.7", "robot"]
    assert flag_values(args, "--cyclonedds-uri") == [uri]
    doc = json.loads(done.stdout)
    assert (doc["ros2"]["discovery_range"], doc["ros2"]["static_peers"],
            doc["ros2"]["cyclonedds_uri"]) == ("LOCALHOST", ["10.0.0.7", "robot"], uri)
    assert doc["system"] == ("ros2 domain 0 (interface lo, ROS_AUTOMATIC_DISCOVERY_RANGE="
                             "LOCALHOST, ROS_STATIC_PEERS=10.0.0.7;robot, CYCLONEDDS_URI set)")


def test_unset_is_subnet_and_system_default_drops_the_static_peers(tmp_path: Path) -> None:
    assert probe(tmp_path, "--no-save", "--duration", "1s").returncode == 0
    args = agent_args(tmp_path)
    assert flag_values(args, "--discovery-range") == ["SUBNET"]
    assert "--static-peer" not in args and "--cyclonedds-uri" not in args
    done = probe(tmp_path, "--no-save", "--duration", "1s",
                 ROS_AUTOMATIC_DISCOVERY_RANGE="SYSTEM_DEFAULT", ROS_STATIC_PEERS="10.0.0.7")
    assert done.returncode == 0, done.stderr
    args = agent_args(tmp_path)
    assert flag_values(args, "--discovery-range") == ["SYSTEM_DEFAULT"]
    assert "--static-peer" not in args  # as rmw: static peers are ignored there


@pytest.mark.parametrize(("args", "env", "words"), [
    ([], {"ROS_AUTOMATIC_DISCOVERY_RANGE": "OFF"},
     "$ROS_AUTOMATIC_DISCOVERY_RANGE=OFF: a ROS 2 node started here discovers no other process"),
    ([], {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCAL"},
     "$ROS_AUTOMATIC_DISCOVERY_RANGE: expected one of LOCALHOST, SUBNET, OFF, SYSTEM_DEFAULT"),
    ([], {"ROS_STATIC_PEERS": "a b"}, "$ROS_STATIC_PEERS: expected host names or IP addresses"),
    (["--domain", "233"], {}, "--domain: must be a DDS domain id 0-232, got '233'"),
    (["--domain", "x"], {}, "--domain: must be a DDS domain id 0-232, got 'x'"),
    ([], {"ROS_DOMAIN_ID": "500"}, "$ROS_DOMAIN_ID: must be a DDS domain id 0-232, got '500'"),
    (["--discovery-time", "0s"], {}, "--discovery-time: must be > 0"),
    (["//"], {}, "TOPICS: '//' is not a ROS 2 topic name"),
])
def test_bad_input_is_exit_2_before_the_agent_runs(tmp_path: Path, args: list[str],
                                                   env: dict[str, str], words: str) -> None:
    done = probe(tmp_path, *args, **env)
    assert done.returncode == 2, done.stderr
    assert words in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "argv.json").exists(), "the agent ran"
    assert not (tmp_path / "results").exists()


def test_ros2_options_need_ros2(tmp_path: Path) -> None:
    done = run_inprocess(["probe", "--zenoh", "tcp/h:7447", "--domain", "3"], timeout=60)
    assert done.returncode == 2 and "--domain: only with --ros2" in done.stderr
    both = probe(tmp_path, "--zenoh", "tcp/h:7447")
    assert both.returncode == 2 and "give one system to listen to" in both.stderr


@pytest.mark.parametrize(("behaviour", "code", "words"), [
    ("usage", 2, "--ros2: --interface eth9: no such interface (this host has: lo, eth0)"),
    ("fail", 1, "--ros2: nothing discovered on DDS domain 0 (interface lo) within 3 s"),
])
def test_agent_errors_are_one_line_and_nothing_is_saved(tmp_path: Path, behaviour: str, code: int,
                                                        words: str) -> None:
    done = probe(tmp_path, "--interface", "eth9", "--duration", "1s", FAKE_PROBE_ROS2=behaviour)
    assert done.returncode == code, done.stderr
    assert done.stderr.splitlines() == [f"mwperf: error: {words}"], done.stderr
    assert not (tmp_path / "results").exists() and done.stdout == ""


def test_an_interrupt_stops_the_agent_and_saves_nothing(tmp_path: Path) -> None:
    environ = {k: v for k, v in os.environ.items() if k not in ROS2_ENV}
    environ |= {"MWPERF_AGENT": str(FAKE), "FAKE_PROBE_ROS2": "hang",
                            "FAKE_PROBE_ROS2_ARGV": str(tmp_path / "argv.json")}
    child = subprocess.Popen([sys.executable, "-m", "mwperf", "probe", "--ros2", "--results",
                              str(tmp_path / "results"), "--duration", "30s"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environ)
    deadline = time.monotonic() + 20
    while not (tmp_path / "argv.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # past READY
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=30)
    assert child.returncode == 130, err
    assert (tmp_path / "argv.json.term").read_text() == "SIGTERM", "the agent was not stopped"
    assert not (tmp_path / "results").exists()
