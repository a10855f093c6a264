"""`mwperf run --transport ros2 --mode service` with the real agents as real ROS 2 nodes (an rcl
service server and rcl clients of rcl_interfaces/srv/GetParameters on rmw_fastrtps_cpp, mwperf's
managed Kilted, and Jazzy with ``--opt distro=jazzy``): every call answered and counted by both
sides, 64 KiB replies, nothing of Fast DDS's left in /dev/shm; a server killed mid-run is a
partial result naming the silence, not a hang; ``--opt type`` (the topics' message type) on a
service point is a usage error before anything starts. The real rclpy peers are in
test_ros2_services_rclpy_e2e.py; the graph runs with services in test_graph_services_e2e.py."""

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import REAL_AGENT, read_saved, run_mwperf_own_shm, run_mwperf
from mwperf import ros2
from test_ros2_transport_e2e import fastdds_files, leftovers

pytestmark = pytest.mark.agent


def mwperf(*args: str) -> subprocess.CompletedProcess[str]:
    return run_mwperf("run", "--no-save", "--transport", "ros2", "--mode", "service", "--duration",
                      "1s", "--warmup", "200ms", *args, timeout=120)


@pytest.mark.parametrize("args", [
    ("--payload", "64"), ("--payload", "64", "--reply-payload", "64KiB", "--rate", "50"),
    ("--payload", "64KiB", "--rate", "50"), ("--payload", "64", "--opt", "distro=jazzy"),
    ("--payload", "64", "--clients", "2", "--in-flight", "2")])
def test_every_call_is_answered_and_counted_by_both_sides(tmp_path: Path,
                                                         args: tuple[str, ...]) -> None:
    out = tmp_path / "result.json"
    done, left = run_mwperf_own_shm("run", "--no-save", "--transport", "ros2", "--mode",
                                    "service", "--duration", "1s", "--warmup", "200ms", "--rate",
                                    "200", *args, "--json-out", str(out))
    assert done.returncode == 0, done.stderr
    result = read_saved(out)
    assert result["status"] == "complete", result["status_reason"]
    m = result["measurement"]
    calls = m["calls"]
    assert m["accounting"]["sent"] == m["accounting"]["received"] == calls["answered"] > 20
    assert m["accounting"]["corrupted"] == calls["unchecked"] == 0  # every reply checked
    assert (calls["timeouts"], calls["errors"], calls["unmatched"]) == (0, 0, 0)
    # the server's own count of the measured requests
    assert calls["server"]["server_time"]["count"] == calls["answered"]
    assert calls["server"]["foreign"] == 0
    assert left == [], f"left in /dev/shm: {left}"


def test_the_topics_type_option_is_refused_on_a_service_point() -> None:
    done = mwperf("--opt", "type=std_msgs/msg/UInt8MultiArray")
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert "--opt type" in line and "rcl_interfaces/srv/GetParameters" in line, line


def agent(role: str, *args: str, **popen: object) -> subprocess.Popen[str]:
    env = ros2.pick("kilted", env={}).child_env()
    return subprocess.Popen([str(REAL_AGENT), role, "--transport", "ros2", *args, "--quiet"],
                            env=env, text=True, **popen)


def remove_crashed(before: set[str]) -> None:
    """Remove what a SIGKILLed peer left in /dev/shm since ``before`` and nobody maps (the next
    ros2 or fastdds process does it too, once they are older than fastdds_shm's STALE_AFTER:
    crates/mwperf-transports/tests/transports/fastdds_shm.rs). Every such file, not only its
    domain's ports (``leftovers``): a killed participant's unicast port is not one of them
    (fastdds_port7000, fastdds_port64411 were left); the tests that call this run alone."""
    for name in leftovers(before, any_domain=True):
        (Path("/dev/shm") / name).unlink(missing_ok=True)


# serial: the killed peer's Fast DDS files stay in /dev/shm, unmapped, until the test removes
# them; another test's "nothing left" check running meanwhile would count them as its own
@pytest.mark.serial
def test_a_server_killed_mid_run_is_a_partial_result_not_a_hang(tmp_path: Path) -> None:
    first = fastdds_files()
    server = agent("server", "--listen", f"{os.environ['ROS_DOMAIN_ID']}/auto",
                   stdout=subprocess.PIPE)
    assert server.stdout is not None
    ready = server.stdout.readline().split()
    assert ready[:2] == ["READY", "ros2"], ready
    before = fastdds_files()  # the server's own are there: a crash leaves them
    client = agent("client", "--connect", ready[2], "--rate", "200", "--duration", "30s",
                   "--call-timeout", "300ms", "--peer-timeout", "500ms", "--json",
                   str(tmp_path / "client.json"))
    try:
        time.sleep(3.0)
        server.kill()
        server.wait()
        killed = time.monotonic()
        assert client.wait(timeout=20) == 3  # partial
        ended = time.monotonic() - killed
    finally:
        client.kill()
        client.wait()
        server.kill()
        server.wait()
    # silent for the call timeout + the peer timeout with calls outstanding, then it ends
    assert 0.3 + 0.5 <= ended < 0.3 + 0.5 + 3.0, ended
    report = json.loads((tmp_path / "client.json").read_text())
    assert report["status"] == "partial" and "silent" in report["status_reason"], report[
        "status_reason"]
    calls = report["measurement"]["calls"]
    assert calls["answered"] > 100 and calls["timeouts"] > 0
    assert calls["answered"] + calls["timeouts"] == report["measurement"]["accounting"]["sent"]
    # nothing running, and the client left none of its Fast DDS files
    assert server.poll() is not None and client.poll() is not None
    assert not leftovers(before)
    remove_crashed(first)
