"""The raw DDS transports (cyclonedds: Debian Cyclone DDS 0.10; fastdds: Debian Fast DDS 2.9;
rustdds) with ``--opt ros2-type`` against real rclpy nodes of mwperf's managed Kilted (its
rmw_fastrtps_cpp on the wheels' Fast DDS 3.x; missing, these fail naming the install command),
both ways:

- an rclpy relay (tests/ros2peers/rclpy_node.py --role relay: take from .../ping, publish on
  .../pong) echoes every message of a raw DDS ping: the ping gets each back intact and the
  relay's own count says it relayed them;
- an rclpy publisher of mwperf messages (tests/ros2peers/mwperf_talker.py) is received by a raw
  DDS sub: as many intact messages as the publisher says it sent, none lost, each with a one-way
  latency above zero (the publisher stamped it on CLOCK_MONOTONIC before publishing it).

Plus the usage errors of the option (exit 2, naming it and what is allowed)."""

import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest

from conftest import REAL_AGENT, run_mwperf
from mwperf import fastdds_shm, ros2
from ros2peers.peers import Peer
from test_probe_ros2_rclpy_e2e import RclpyNode, shell

pytestmark = pytest.mark.agent

RAW = ("cyclonedds", "fastdds", "rustdds")
COUNT = 300
TYPE = "std_msgs/msg/UInt8MultiArray"
TALKER = Path(__file__).resolve().parent / "ros2peers" / "mwperf_talker.py"



@pytest.fixture(autouse=True)
def no_shared_memory_left() -> object:
    """The rclpy peers' Fast DDS 3 may leave shared-memory files nobody maps: those that
    appeared during a test go with it (as the ros2 relay daemon's do: fastdds_shm.py)."""
    before = fastdds_shm.entries()
    yield
    fastdds_shm.remove_orphaned(before)


def domain() -> int:
    """This test run's DDS domain (conftest: ROS_DOMAIN_ID from MWPERF_TEST_DOMAIN_FIRST)."""
    return int(os.environ["ROS_DOMAIN_ID"])


def agent(role: str, transport: str, address: str, *opts: str) -> tuple[dict, str]:
    """``mwperf-agent <role>`` of ``transport`` with the ROS 2 type, reliable and deep enough
    for every message (a slow rclpy peer makes no keep-last writer drop any); (its JSON report,
    its stderr)."""
    flag = "--connect" if role in ("ping", "pub") else "--listen"
    done = subprocess.run([str(REAL_AGENT), role, "--transport", transport, flag, address,
                           "--opt", f"ros2-type={TYPE}", "--depth", "1000", "--json", "-",
                           "--quiet", *opts],
                          capture_output=True, text=True, timeout=120,
                          env=shell(domain()))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


@pytest.mark.parametrize("transport", RAW)
def test_an_rclpy_relay_echoes_a_raw_dds_ping(kilted: ros2.Distribution, transport: str) -> None:
    base = f"relay_{transport}_{uuid.uuid4().hex[:8]}"
    relay = RclpyNode(kilted, shell(domain()), "--role", "relay", "--node", "echo",
                      "--type", "bytes", "--topic", f"/mwperf/{base}/ping",
                      "--to", f"/mwperf/{base}/pong", "--depth", "1000")
    try:
        report, _ = agent("ping", transport, f"{domain()}/{base}", "--rate", "200",
                          "--count", str(COUNT), "--payload", "64")
    finally:
        relayed = relay.result("relayed")
    m = report["measurement"]
    accounting = m["accounting"]
    assert accounting["sent"] == accounting["received"] == COUNT, accounting
    assert accounting["corrupted"] == accounting["lost"] == 0, accounting
    # the relay's own count: the measured messages and what the ping sent before them
    # (discovery probes) and after (end-of-stream) all went through it
    assert relayed >= COUNT, relayed
    rtt = m["response"]
    assert rtt["count"] == COUNT, rtt
    assert 0 < rtt["min_ns"] <= rtt["p50_ns"] <= rtt["max_ns"], rtt


@pytest.mark.parametrize("transport", RAW)
def test_a_raw_dds_sub_receives_an_rclpy_publisher(kilted: ros2.Distribution,
                                                   transport: str) -> None:
    base = f"talk_{transport}_{uuid.uuid4().hex[:8]}"
    sub = subprocess.Popen([str(REAL_AGENT), "sub", "--transport", transport, "--listen",
                            f"{domain()}/{base}", "--opt", f"ros2-type={TYPE}", "--depth", "1000",
                            "--json", "-", "--quiet"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=shell(domain()))
    talker = Peer(f"rclpy talker {transport}",
                  [str(kilted.python), str(TALKER), "--topic", f"/mwperf/{base}/ping",
                   "--count", str(COUNT), "--rate", "200", "--payload", "64"],
                  env=kilted.child_env(base=shell(domain())))
    try:
        talker.json_line("ready", 60)
        sent = int(talker.json_line("sent", 60)["sent"])
        out, err = sub.communicate(timeout=30)
    finally:
        talker.stop()
        if sub.poll() is None:
            sub.kill()
            sub.communicate()
    assert sub.returncode == 0, err
    report = out[out.index("{"):]  # after the READY line
    m = json.loads(report)["measurement"]
    accounting = m["accounting"]
    assert sent == COUNT
    assert accounting["received"] == sent, accounting
    assert accounting["lost"] == accounting["corrupted"] == accounting["malformed"] == 0, \
        accounting
    one_way = m["response"]
    assert one_way["count"] == sent, one_way
    assert 0 < one_way["min_ns"] <= one_way["p50_ns"] <= one_way["max_ns"], one_way


def mwperf_run(*args: str) -> subprocess.CompletedProcess[str]:
    return run_mwperf("run", *args, "--duration", "1s", "--no-save",
                      env={**shell(domain()), "MWPERF_AGENT": str(REAL_AGENT)}, timeout=120)


def test_the_option_on_a_transport_without_it_is_a_usage_error() -> None:
    done = mwperf_run("--transport", "zenoh", "--opt", f"ros2-type={TYPE}")
    assert done.returncode == 2, done.stderr
    assert "--opt ros2-type" in done.stderr and "allowed:" in done.stderr, done.stderr


def test_a_type_mwperf_does_not_carry_is_refused_with_the_ones_it_does() -> None:
    done = mwperf_run("--transport", "fastdds", "--opt", "ros2-type=sensor_msgs/msg/Imu")
    assert done.returncode == 2, done.stderr
    assert ("--opt ros2-type=sensor_msgs/msg/Imu (allowed: std_msgs/msg/UInt8MultiArray, "
            "sensor_msgs/msg/PointCloud2, sensor_msgs/msg/Image)") in done.stderr, done.stderr


def test_a_relay_without_the_ros2_type_is_a_usage_error() -> None:
    done = mwperf_run("--transport", "cyclonedds", "--pong", "relay")
    assert done.returncode == 2, done.stderr
    assert "add --opt ros2-type=" in done.stderr, done.stderr
