"""A graph node with ``client: rclpy`` (clients.py) in a run: its command line (the ROS 2
distribution's Python running python/mwperf/ros2/graph_node.py on the node's spec, in rclpy's
executor and callback groups the graph file asks for, in the run's QoS) and its report, made by
``mwperf-agent node-collect`` from what the node counted and logged, so run.py reads it as any
node's (``node.<name>.json``)."""

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from ..agent import Agent
from ..errors import RunError
from ..transports.ros2 import distribution
from .model import Node

if TYPE_CHECKING:
    from ..config import PointConfig

SCRIPT = Path(__file__).resolve().parent.parent / "ros2" / "graph_node.py"
COLLECT_TIMEOUT_S = 60.0


def files(workdir: Path, name: str) -> tuple[Path, Path]:
    """(what it sent, what its callbacks took) of the node whose file name is ``name``."""
    return workdir / f"{name}.rclpy-sent.json", workdir / f"{name}.rclpy-log.bin"


def argv(cfg: "PointConfig", node: Node, spec_path: Path, go_file: Path, tag: int,
         workdir: Path, name: str) -> list[str]:
    sent, log = files(workdir, name)
    groups = ",".join(s.callback_group or "exclusive" for s in node.subscribers)
    return [str(distribution(cfg).python), str(SCRIPT), "--node-spec", str(spec_path),
            "--go-file", str(go_file), "--run-id", str(tag), "--sent", str(sent),
            "--log", str(log), "--executor", node.executor, "--groups", groups,
            "--reliability", cfg.reliability, "--durability", cfg.durability,
            "--history", cfg.history, "--depth", str(cfg.depth),
            "--discovery-timeout-ns", str(cfg.discovery_timeout_ns)]


def collect(agent: Agent, workdir: Path, name: str, tag: int) -> str | None:
    """The node's report (``<name>.json``) from what it wrote; None when it wrote it, else why
    not (a node killed before its end wrote nothing: run.py then reports it failed)."""
    sent, log = files(workdir, name)
    if not sent.exists():
        return None
    done = subprocess.run([str(agent.path), "node-collect", "--node-spec",
                           str(workdir / f"{name}.spec.json"), "--sent", str(sent),
                           "--log", str(log), "--run-id", str(tag),
                           "--json", str(workdir / f"{name}.json")],
                          capture_output=True, text=True, timeout=COLLECT_TIMEOUT_S)
    if done.returncode != 0:
        raise RunError(f"mwperf-agent node-collect ({name}): {done.stderr.strip()}")
    return None
