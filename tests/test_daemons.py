"""Daemons for real: mosquitto, rosmaster, topic_tools relay started, ready, measured and stopped;
a missing program, a daemon that never gets ready and one that ignores SIGTERM stay bounded.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import xmlrpc.client
from pathlib import Path

import pytest
from conftest import alive, children, read_saved, run_mwperf, traced_pids

from mwperf.daemons import DaemonSet, DaemonSpec
from mwperf.daemons import base, mosquitto, ros1
from mwperf.errors import RunError
from mwperf.procs import AgentSet

needs_mosquitto = pytest.mark.skipif(shutil.which(mosquitto.PROGRAM) is None,
                                     reason="mosquitto not installed (apt-get install mosquitto)")
needs_ros1 = pytest.mark.skipif(
    shutil.which(ros1.MASTER_PROGRAM) is None or shutil.which(ros1.RELAY_PROGRAM) is None,
    reason="rosmaster/topic_tools relay not installed (apt-get install python3-rosmaster topic-tools)")


def test_free_port_is_bindable() -> None:
    port = base.free_port()
    assert 1024 <= port <= 65535


@needs_mosquitto
def test_mosquitto_start_ready_measure_stop(tmp_path: Path) -> None:
    with DaemonSet(tmp_path) as daemons:
        broker = daemons.start(lambda: mosquitto.spec(tmp_path, 25))
        host, port = broker.address.split(":")
        assert host == "127.0.0.1" and mosquitto.connack(int(port))
        pid = broker.popen.pid
        daemons.sample_all()
    assert not alive(pid) and not mosquitto.connack(int(port))
    (entry,) = daemons.describe()
    assert entry["name"] == "mosquitto" and entry["argv"][0] == mosquitto.PROGRAM
    assert entry["peak_rss_kib"] > 0 and entry["cpu_user_s"] >= 0 and not entry["killed"]
    assert entry["version"] and entry["version"][0].isdigit()
    conf = (tmp_path / "daemons" / "mosquitto.conf").read_text()
    assert f"listener {port} 127.0.0.1" in conf and "max_queued_messages 25" in conf
    assert "set_tcp_nodelay true" in conf and "persistence false" in conf
    assert "mwperf-ready" in (tmp_path / "daemons" / "mosquitto.log").read_text()


@needs_ros1
def test_rosmaster_and_relay(tmp_path: Path) -> None:
    with DaemonSet(tmp_path) as daemons:
        master = daemons.start(lambda: ros1.master_spec(tmp_path))
        assert master.address.startswith("http://127.0.0.1:") and master.address.endswith("/")
        assert xmlrpc.client.ServerProxy(master.address).getPid("/t")[0] == 1
        relay = daemons.start(lambda: ros1.relay_spec(tmp_path, master.address, "mwperf_t"))
        assert ros1.subscribed(master.address, "/mwperf/mwperf_t/ping")
        pids = [master.popen.pid, relay.popen.pid]
    assert not any(alive(pid) for pid in pids)
    assert [d["name"] for d in daemons.describe()] == ["rosmaster", "relay"]
    assert (tmp_path / "ros").is_dir()  # ROS_HOME in the run, not ~/.ros


def test_missing_program_names_the_package(tmp_path: Path) -> None:
    spec = DaemonSpec(name="mosquitto", argv=["/nonexistent/mosquitto"], package="mosquitto",
                      ready=lambda d: True)
    with DaemonSet(tmp_path) as daemons, pytest.raises(RunError) as caught:
        daemons.start(lambda: spec)
    assert str(caught.value) == ("mosquitto: /nonexistent/mosquitto not found; install it with "
                                 "'apt-get install mosquitto' (or 'make setup')")


def test_never_ready_is_bounded_and_stopped(tmp_path: Path) -> None:
    spec = DaemonSpec(name="sleeper", argv=["sleep", "60"], package="coreutils",
                      ready=lambda d: False, ready_timeout_s=0.5)
    started = time.monotonic()
    with DaemonSet(tmp_path) as daemons, pytest.raises(RunError, match="sleeper did not become "
                                                       "ready within 0.5 s"):
        daemons.start(lambda: spec)
    # bounded by the ready timeout, not by the daemon: far short of the sleeper's own 60 s
    # (a fixed 4 s guessed how fast this machine stops a process)
    assert time.monotonic() - started < 60 / 2
    assert not alive(daemons.daemons[0].popen.pid)


def test_exit_before_ready_gives_its_last_words(tmp_path: Path) -> None:
    spec = DaemonSpec(name="quitter", argv=["sh", "-c", "echo 'bad config line 3' >&2; exit 3"],
                      package="dash", ready=lambda d: False)
    with DaemonSet(tmp_path) as daemons, pytest.raises(
            RunError, match=r"quitter exited before it was ready \(exit code 3\): bad config"):
        daemons.start(lambda: spec)


def test_port_race_is_retried(tmp_path: Path) -> None:
    attempts = []

    def make() -> DaemonSpec:
        attempts.append(1)
        if len(attempts) == 1:
            return DaemonSpec(name="racer", argv=["sh", "-c", "echo 'Address in use' >&2"],
                              package="dash", ready=lambda d: False)
        return DaemonSpec(name="racer", argv=["sleep", "30"], package="coreutils",
                          ready=lambda d: True)

    with DaemonSet(tmp_path) as daemons:
        daemons.start(make)
    assert len(attempts) == 2


def test_sigterm_ignored_means_sigkill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "STOP_GRACE_S", 0.3)
    spec = DaemonSpec(name="stubborn", argv=["sh", "-c", "trap '' TERM; echo up; sleep 60"],
                      package="dash", ready=lambda d: "up" in d.log_text())
    with DaemonSet(tmp_path) as daemons:
        daemon = daemons.start(lambda: spec)
        group = daemon.popen.pid
    assert daemon.killed and not alive(group)
    assert daemons.describe()[0]["killed"] is True


def fake_with(fake_env: dict[str, str], *transports: str) -> dict[str, str]:
    return {**fake_env, "FAKE_AGENT_TRANSPORTS": ",".join(transports)}


@needs_mosquitto
def test_run_records_the_broker(fake_env: dict[str, str], tmp_path: Path) -> None:
    """Fake agents, real broker: the result lists it and its log is saved with the result."""
    done = run_mwperf("run", "--transport", "mqtt", "--duration", "300ms", "--depth", "50",
                      "--opt", "qos=1", "--results", str(tmp_path / "r"),
                      env=fake_with(fake_env, "mqtt"))
    assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "r").glob("*/")
    result = read_saved(folder / "result.json")
    (broker,) = result["daemons"]
    assert broker["name"] == "mosquitto" and broker["peak_rss_kib"] > 0
    assert (folder / "daemons" / "mosquitto.log").is_file()
    assert "max_queued_messages 50" in (folder / "daemons" / "mosquitto.conf").read_text()
    assert (result["config"]["depth"], result["config"]["opts"]) == (50, ["qos=1"])
    trace = Path(fake_env["FAKE_AGENT_TRACE"])
    for role in ("ping", "pong"):
        args = json.loads((trace / f"{role}.argv.json").read_text())
        assert args[args.index("--depth") + 1] == "50" and args[args.index("--opt") + 1] == "qos=1"
        assert "--reliability" not in args  # not given: the agent's own default applies
    pong = json.loads((trace / "pong.argv.json").read_text())
    port = (folder / "daemons" / "mosquitto.conf").read_text().split()[1]
    assert pong[pong.index("--listen") + 1] == f"127.0.0.1:{port}"
    assert "daemon        mosquitto" in done.stdout


@needs_mosquitto
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_leaves_no_daemon(fake_env: dict[str, str], tmp_path: Path,
                                    sig: signal.Signals) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "mwperf.cli", "run", "--transport", "mqtt",
                             "--duration", "30s", "--results", str(tmp_path / "r")],
                            env=fake_with(fake_env, "mqtt"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    trace = Path(fake_env["FAKE_AGENT_TRACE"])
    deadline = time.monotonic() + 15
    while len(traced_pids(trace)) < 2 and time.monotonic() < deadline:  # both agents started
        time.sleep(0.05)
    time.sleep(0.5)
    spawned = children(proc.pid)
    assert len(spawned) == 3  # broker, pong, ping
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 3, err
    assert not [pid for pid in spawned if alive(pid)]
    (folder,) = (tmp_path / "r").glob("*/")
    assert read_saved(folder / "result.json")["daemons"][0]["name"] == "mosquitto"


def test_interrupt_while_master_starts_leaves_nothing(fake_env: dict[str, str],
                                                      tmp_path: Path) -> None:
    """Ctrl-C while mwperf waits for its master to answer: one line, exit 130, the master gone.
    A master that never answers stands in (first in PATH), so the signal always lands in that
    wait: with the real one, a stress run's test found it only once it was up and the point
    measuring (which then ends partial, as it should)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "rosmaster").write_text("#!/bin/sh\n# a rosmaster that never answers\n"
                                       "while :; do sleep 1; done\n")
    (bin_dir / "rosmaster").chmod(0o755)
    env = fake_with(fake_env, "ros1")
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.Popen([sys.executable, "-m", "mwperf.cli", "run", "--transport", "ros1",
                             "--duration", "30s", "--no-save"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 15
    while not running(proc.pid, "rosmaster") and time.monotonic() < deadline:
        time.sleep(0.02)
    spawned = running(proc.pid, "rosmaster")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=15)
    assert "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == "mwperf: error: interrupted", err
    assert proc.returncode == 130, err
    assert spawned and not [pid for pid in spawned if alive(pid)]


def running(parent: int, name: str) -> list[int]:
    """The children of ``parent`` whose command line mentions ``name``."""
    found = []
    for pid in children(parent):
        try:
            if name in Path(f"/proc/{pid}/cmdline").read_text():
                found.append(pid)
        except OSError:
            pass
    return found


def test_missing_daemon_through_the_cli(fake_env: dict[str, str], tmp_path: Path) -> None:
    """A transport whose daemon is not installed: one line naming the package, exit 1."""
    bin_dir = tmp_path / "bin"  # a PATH with python3 (for the fake agent) but no rosmaster
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    (bin_dir / "python3").chmod(0o755)
    env = {**fake_with(fake_env, "ros1"), "PATH": str(bin_dir)}
    done = run_mwperf("run", "--transport", "ros1", "--duration", "200ms", "--no-save", env=env)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1] == (
        "mwperf: error: rosmaster: rosmaster not found; install it with "
        "'apt-get install python3-rosmaster' (or 'make setup')")


@pytest.mark.parametrize(("args", "message"), [
    (["--transport", "udp", "--pong", "relay"],
     "--pong relay: only with --transport cyclonedds or fastdds or rustdds or ros1 or ros2"),
    (["--transport", "udp", "--pong", "bot"], "--pong: unknown pong 'bot'; allowed: agent, relay"),
    (["--history", "keep-some"], "--history: unknown history 'keep-some'"),
    (["--depth", "0"], "--depth: must be >= 1, got 0"),
    (["--reliability", "maybe"], "--reliability: unknown reliability 'maybe'"),
    (["--opt", "mode"], "--opt: 'mode' is not KEY=VALUE"),
    (["--transport", "udp", "--opt", "mode=client"],
     "--opt mode: not an option of udp; allowed: none (it takes no --opt)"),
    (["--discovery-timeout", "soon"], "--discovery-timeout: cannot parse 'soon'"),
])
def test_new_flags_are_checked(fake_env: dict[str, str], args: list[str], message: str) -> None:
    done = run_mwperf("run", *args, "--no-save", env=fake_env)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert message in done.stderr


def test_zenoh_client_mode_starts_a_router(fake_env: dict[str, str], tmp_path: Path) -> None:
    """Fake agents (incl. 'router'): the router's endpoint is the address of both agents."""
    done = run_mwperf("run", "--transport", "zenoh", "--opt", "mode=client", "--duration",
                      "300ms", "--json-out", str(tmp_path / "out.json"), "--no-save",
                      env=fake_with(fake_env, "zenoh"))
    assert done.returncode == 0, done.stderr
    (router,) = json.loads((tmp_path / "out.json").read_text())["daemons"]
    assert router["name"] == "zenoh-router" and router["address"].startswith("tcp/127.0.0.1:")
    assert router["argv"][1:] == ["router", "--transport", "zenoh", "--listen", "tcp/127.0.0.1:0"]
    trace = Path(fake_env["FAKE_AGENT_TRACE"])
    pong = json.loads((trace / "pong.argv.json").read_text())
    assert pong[pong.index("--listen") + 1] == router["address"]
    assert ["--opt", "mode=client"] == pong[pong.index("--opt"):pong.index("--opt") + 2]


def test_zenoh_peer_mode_needs_no_daemon(fake_env: dict[str, str], tmp_path: Path) -> None:
    done = run_mwperf("run", "--transport", "zenoh", "--duration", "200ms", "--json-out",
                      str(tmp_path / "out.json"), "--no-save", env=fake_with(fake_env, "zenoh"))
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "out.json").read_text())["daemons"] == []
    pong = json.loads((Path(fake_env["FAKE_AGENT_TRACE"]) / "pong.argv.json").read_text())
    assert pong[pong.index("--listen") + 1] == "tcp/127.0.0.1:0"


@pytest.mark.parametrize(("transport", "listen"), [
    ("iceoryx2", "auto"), *((dds, "$ROS_DOMAIN_ID/auto") for dds in ("cyclonedds", "fastdds",
                                                                     "rustdds"))])
def test_listen_addresses(fake_env: dict[str, str], tmp_path: Path, transport: str,
                          listen: str) -> None:
    done = run_mwperf("run", "--transport", transport, "--duration", "200ms", "--no-save",
                      env=fake_with(fake_env, transport))
    assert done.returncode == 0, done.stderr
    pong = json.loads((Path(fake_env["FAKE_AGENT_TRACE"]) / "pong.argv.json").read_text())
    # the domain: conftest's, one per test worker
    assert pong[pong.index("--listen") + 1] == listen.replace("$ROS_DOMAIN_ID",
                                                             os.environ["ROS_DOMAIN_ID"])


@pytest.mark.parametrize("transport", ["cyclonedds", "fastdds", "rustdds"])
def test_dds_runs_in_the_domain_of_ros_domain_id(fake_env: dict[str, str], tmp_path: Path,
                                                  transport: str) -> None:
    env = {**fake_with(fake_env, transport), "ROS_DOMAIN_ID": "42"}
    done = run_mwperf("run", "--transport", transport, "--duration", "200ms", "--no-save",
                      env=env)
    assert done.returncode == 0, done.stderr
    pong = json.loads((Path(fake_env["FAKE_AGENT_TRACE"]) / "pong.argv.json").read_text())
    assert pong[pong.index("--listen") + 1] == "42/auto"


@pytest.mark.parametrize("value", ["233", "x", "-1"])
def test_a_bad_ros_domain_id_is_a_usage_error_naming_it(fake_env: dict[str, str],
                                                        value: str) -> None:
    env = {**fake_with(fake_env, "rustdds"), "ROS_DOMAIN_ID": value}
    done = run_mwperf("run", "--transport", "rustdds", "--duration", "200ms", "--no-save",
                      env=env)
    assert done.returncode == 2
    assert f"$ROS_DOMAIN_ID: must be a DDS domain id 0-232, got '{value}'" in done.stderr


def test_daemon_that_dies_during_the_run_is_a_warning(tmp_path: Path) -> None:
    spec = DaemonSpec(name="brief", argv=["sh", "-c", "echo up; sleep 0.2; echo 'out of memory'"],
                      package="dash", ready=lambda d: "up" in d.log_text())
    with DaemonSet(tmp_path) as daemons:
        daemons.start(lambda: spec)
        time.sleep(0.6)
        daemons.sample_all()
    (warning,) = daemons.warnings()  # a stream's and a graph's
    assert warning["code"] == "daemon-exited"
    assert warning["message"] == "brief exited during the run (exit code 0): out of memory"


def interrupting_popen(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every Popen hear a Ctrl-C just after its child started, before it returns: the
    moment a real Ctrl-C hits while Popen waits for the child's exec."""
    real = subprocess.Popen

    def popen(*args: object, **kwargs: object) -> subprocess.Popen:
        started = real(*args, **kwargs)  # type: ignore[call-overload]
        signal.raise_signal(signal.SIGINT)
        return started
    monkeypatch.setattr(subprocess, "Popen", popen)


def test_a_ctrl_c_while_a_daemon_starts_still_registers_it_and_stops_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = DaemonSpec(name="sleeper", argv=["sleep", "60"], package="coreutils",
                      ready=lambda d: True)
    interrupting_popen(monkeypatch)
    with DaemonSet(tmp_path) as daemons:
        with pytest.raises(KeyboardInterrupt):
            daemons._spawn(spec)
        (daemon,) = daemons.daemons
        assert alive(daemon.popen.pid)
    assert daemon.popen.poll() is not None
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_ctrl_c_while_an_agent_starts_still_registers_it_and_stops_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    interrupting_popen(monkeypatch)
    with AgentSet(tmp_path) as agents:
        with pytest.raises(KeyboardInterrupt):
            agents.spawn("pub", ["sleep", "60"])
        (agent,) = agents.agents
        assert alive(agent.popen.pid)
    assert agent.popen.poll() is not None
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
