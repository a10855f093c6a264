"""Probe a live ROS 2 system over DDS: ``mwperf-agent probe-ros2`` joins the DDS domain (Cyclone
DDS, configured as a ROS 2 node on rmw_cyclonedds_cpp in this environment would be:
ROS_AUTOMATIC_DISCOVERY_RANGE, ROS_STATIC_PEERS, CYCLONEDDS_URI), lists every participant, writer and reader from discovery and the nodes from
``ros_discovery_info``, subscribes to the topics as serialized CDR (best-effort, volatile
readers unless ``--reliable``; it creates no writer), and prints one line per event and per
sample (ros2_log.py). Its log goes to a temporary file; its CPU and peak memory come from
os.wait4. The document is built by ros2_document.py."""

import tempfile
from pathlib import Path

from ..agent import find_agent
from .agent_child import run_probe_agent
from .ros2_document import Ros2ProbeResult, Ros2Request, build
from .ros2_log import read_log

def probe_ros2(request: Ros2Request, duration_s: float) -> Ros2ProbeResult:
    """Run the agent on ``request`` for the discovery time and ``duration_s``."""
    agent = find_agent()
    args = [str(agent.path), "probe-ros2", "--domain", str(request.domain),
            "--discovery-time", f"{request.discovery_ns}ns",
            "--duration", f"{int(duration_s * 1e9)}ns"]
    if request.interface:
        args += ["--interface", request.interface]
    args += ["--discovery-range", request.discovery.range]
    for peer in request.discovery.peers_used:
        args += ["--static-peer", peer]
    if request.cyclonedds_uri:
        args += ["--cyclonedds-uri", request.cyclonedds_uri]
    if request.reliable:
        args.append("--reliable")
    for topic in request.topics:
        args += ["--topic", topic]
    with tempfile.TemporaryDirectory(prefix="mwperf-probe-") as work:
        log = Path(work) / "probe-ros2.txt"
        done = run_probe_agent(args, log, "--ros2")
        return build(read_log(log), request, done.cpu_s, done.max_rss_bytes, done.exit_ns)
