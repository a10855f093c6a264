"""A real ROS 2 node under test as the echo (issue 40, item 2): ``--pong-cmd`` starts
tests/ros2nodes/delay_echo.py (an rclpy node whose topics are set by ROS 2 remapping, as a
user's are) with mwperf's topics and type; it sleeps 2 ms in each callback, so no round trip is
shorter than that (the injected floor); its own count of what it echoed checks mwperf's; a node
that stops echoing mid-run is a partial result naming it; nothing of it is left running."""

import re
import subprocess
import uuid
from pathlib import Path

import pytest

from conftest import read_saved, run_mwperf

pytestmark = pytest.mark.agent

NODE = Path(__file__).parent / "ros2nodes" / "delay_echo.py"
DELAY_NS = 2_000_000
START = ("--discovery-timeout", "60s")
"""the ping's discovery wait includes the program's own start (an rclpy import: seconds, and
beside a loaded machine's other work over 10 s: a stress run's rustdds ping gave up at the 10 s
default before the node's participant was up); a node that never comes up still ends the point"""


def command(*extra: str) -> tuple[str, str]:
    tag = uuid.uuid4().hex
    return (f"python3 {NODE} --type {{type}} --tag {tag} {' '.join(extra)} "
            "--ros-args -r input:={in} -r output:={out}"), tag


def running(tag: str) -> list[str]:
    done = subprocess.run(["pgrep", "-f", tag], capture_output=True, text=True, check=False)
    return done.stdout.split()


def test_a_ros2_node_under_test_is_the_echo(tmp_path: Path):
    cmd, tag = command("--delay-ms", str(DELAY_NS / 1e6))
    done = run_mwperf("run", "--transport", "ros2", "--rate", "50", "--duration", "2s",
                      "--warmup", "500ms", "--pong-cmd", cmd, *START, "--results",
                      str(tmp_path),
                      timeout=180)
    assert done.returncode == 0, done.stderr + done.stdout
    folder = next(tmp_path.glob("*/result.json")).parent
    result = read_saved(folder / "result.json")
    assert result["config"]["pong_cmd"] == cmd
    accounting = result["measurement"]["accounting"]
    assert accounting["received"] == accounting["sent"] == 100
    assert accounting["lost"] == accounting["corrupted"] == 0
    assert result["measurement"]["response"]["min_ns"] >= DELAY_NS  # the node's own sleep
    daemon = next(d for d in result["daemons"] if d["name"] == "pong-cmd")
    assert daemon["peak_rss_kib"] > 0 and daemon["cpu_user_s"] is not None
    log = (folder / daemon["log"]).read_text()
    echoed = int(re.search(r"^echoed (\d+)$", log, re.MULTILINE).group(1))
    # the node's own count: every measured message, the warm-up's and the discovery probes'
    measured = accounting["received"] + accounting["warmup_received"]
    assert measured <= echoed <= measured + result["discovery"]["probes"]
    assert running(tag) == []


def test_a_node_that_stops_echoing_is_a_partial_result_naming_it(tmp_path: Path):
    # the node stops after 30 echoes (the 10 warm-up messages, a probe, ~19 measured: ~0.6 s of
    # the ping's 6.2 s schedule at 50 Hz), so the ping's last ~5.6 s go unanswered: well past
    # its --peer-timeout of 3 s, however late the node echoed (with the default 2 s and 60
    # echoes the margin was ~0.2 s, and a stress run's ping finished "complete" inside it).
    # The node's exit (its 0.5 s wait for acknowledgements, then rclpy's teardown) must come
    # before the ping's silence ends the run, to be "exited during the run": a 1 s silence was
    # shorter than that teardown beside two busy loops (the node still alive at the run's end)
    cmd, tag = command("--exit-after", "30")
    done = run_mwperf("run", "--transport", "ros2", "--rate", "50", "--duration", "6s",
                      "--warmup", "200ms", "--peer-timeout", "3s", "--pong-cmd", cmd, *START,
                      "--results", str(tmp_path),
                      timeout=180)
    assert done.returncode == 3, done.stderr + done.stdout
    result = read_saved(next(tmp_path.glob("*/result.json")))
    assert result["status"] == "partial"
    warnings = [w for w in result["warnings"] if w["code"] == "daemon-exited"]
    assert warnings and "pong-cmd exited during the run (exit code 0)" in warnings[0]["message"]
    assert running(tag) == []


@pytest.mark.parametrize("transport", ["cyclonedds", "fastdds", "rustdds"])
def test_a_ros2_node_echoes_a_raw_dds_ping_in_a_ros2_type(tmp_path: Path, transport: str):
    cmd, tag = command()
    done = run_mwperf("run", "--transport", transport, "--opt",
                      "ros2-type=std_msgs/msg/UInt8MultiArray", "--rate", "50", "--duration",
                      "2s", "--warmup", "500ms", "--pong-cmd", cmd, *START, "--results",
                      str(tmp_path),
                      timeout=180)
    if done.returncode == 1 and "(a known crash: Cyclone DDS 0.10.2" in done.stderr:
        # the ping died in Cyclone's own type lookup on the ROS 2 node's Fast DDS type
        # information, named by the point's error (known_crashes.py): upstream's defect, rare
        # (1 of the stress runs of 2026-12-01), not this path's
        pytest.xfail(done.stderr.strip().splitlines()[-1])
    assert done.returncode == 0, done.stderr + done.stdout
    folder = next(tmp_path.glob("*/result.json")).parent
    result = read_saved(folder / "result.json")
    accounting = result["measurement"]["accounting"]
    assert accounting["received"] == accounting["sent"] == 100 and accounting["corrupted"] == 0
    log = (folder / "daemons" / "pong-cmd.log").read_text()
    echoed = int(re.search(r"^echoed (\d+)$", log, re.MULTILINE).group(1))
    measured = accounting["received"] + accounting["warmup_received"]
    assert measured <= echoed <= measured + result["discovery"]["probes"]
    assert running(tag) == []


def test_a_raw_dds_ping_needs_the_ros2_type_for_a_ros2_node(tmp_path: Path):
    cmd, _ = command()
    done = run_mwperf("run", "--transport", "cyclonedds", "--duration", "1s", "--pong-cmd", cmd,
                      "--no-save", timeout=60)
    assert done.returncode == 2
    assert "--pong-cmd (a ROS 2 program) with --transport cyclonedds: a ROS 2 node reads real " \
           "ROS 2 messages; add --opt ros2-type=<type>" in done.stderr
