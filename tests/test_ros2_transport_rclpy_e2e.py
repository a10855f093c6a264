"""The ros2 transport against real rclpy nodes of mwperf's managed Kilted (tests/ros2peers/
rclpy_node.py; missing, these fail naming the install command):

- an rclpy subscription of std_msgs/msg/UInt8MultiArray (sensor_msgs/msg/PointCloud2, Image
  with ``--opt type``) on /mwperf/<base>/ping deserializes every message mwperf's ros2 pub
  publishes (mwperf's own CDR read by the RMW's type support): as many whole mwperf messages in
  its data as the pub reported sending, and the end-of-stream markers;
- an rclpy relay (take from .../ping, publish on .../pong: topic_tools relay's job) echoes every
  message of mwperf's ros2 ping, which gets each back intact (the ping checks each message's
  header checksum and payload: nothing corrupted)."""

import json
import subprocess
import uuid

import pytest

from conftest import REAL_AGENT
from mwperf import ros2
from ros2peers import peers
from test_probe_ros2_rclpy_e2e import RclpyNode, shell

pytestmark = pytest.mark.agent

COUNT = 300



def agent(dist: ros2.Distribution, env: dict[str, str], role: str, address: str,
          *opts: str) -> dict:
    """``mwperf-agent <role> --transport ros2`` to ``address`` as the control plane starts it
    (the distribution's environment), COUNT messages of 64 B at 200 Hz, reliable and deep enough
    for all of them (a slow rclpy peer makes no keep-last writer drop any); its JSON report."""
    done = subprocess.run([str(REAL_AGENT), role, "--transport", "ros2", "--connect", address,
                           "--rate", "200", "--count", str(COUNT), "--payload", "64",
                           "--depth", "1000", "--json", "-", "--quiet", *opts],
                          capture_output=True, text=True, timeout=120,
                          env=dist.child_env(base=env))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("peer_type,opts", [
    ("bytes", ()), ("pointcloud2", ("--opt", "type=sensor_msgs/msg/PointCloud2")),
    ("image", ("--opt", "type=sensor_msgs/msg/Image"))])
def test_an_rclpy_subscription_reads_what_mwperf_publishes(
        kilted: ros2.Distribution, peer_type: str, opts: tuple[str, ...]) -> None:
    dom, base = peers.domain(7), f"rclpy_sub_{uuid.uuid4().hex[:8]}"
    env = shell(dom)
    sub = RclpyNode(kilted, env, "--role", "sub", "--node", "listener", "--type", peer_type,
                    "--topic", f"/mwperf/{base}/ping", "--depth", "1000")
    try:
        report = agent(kilted, env, "pub", f"{dom}/{base}", *opts)
        counts = sub.result("received")
        totals = sub.json_line("received")
    finally:
        sub.stop()
    assert report["sent"] == COUNT, report
    assert totals["data"] == COUNT, totals
    assert totals["intact"] == totals["received"] == counts > COUNT, totals  # + end of stream


def test_an_rclpy_relay_echoes_mwperfs_ping(kilted: ros2.Distribution) -> None:
    dom, base = peers.domain(7), f"rclpy_relay_{uuid.uuid4().hex[:8]}"
    env = shell(dom)
    relay = RclpyNode(kilted, env, "--role", "relay", "--node", "echo", "--type", "bytes",
                      "--topic", f"/mwperf/{base}/ping", "--to", f"/mwperf/{base}/pong",
                      "--depth", "1000")
    try:
        report = agent(kilted, env, "ping", f"{dom}/{base}")
    finally:
        relay.stop()
    accounting = report["measurement"]["accounting"]
    assert accounting["sent"] == accounting["received"] == COUNT, accounting
    assert accounting["corrupted"] == accounting["lost"] == 0, accounting
