"""A graph node with ``client: rclpy`` (clients.py) in a run: its command line (the ROS 2
distribution's Python running python/mwperf/ros2/graph_node.py on the node's spec, in rclpy's
executor and callback groups the graph file asks for, in the run's QoS) and its report, made by
``mwperf-agent node-collect`` from what the node counted and logged, so run.py reads it as any
node's (``node.<name>.json``)."""

import subprocess
from pathlib import Path

from ..agent import Agent
from ..config import PointConfig
from ..errors import RunError
from ..ros2.distributions import Distribution
from ..transports.ros2 import distribution
from .clients import EVENTS_MODULE, check_clients, rclpy_nodes
from .model import Graph, Node

SCRIPT = Path(__file__).resolve().parent.parent / "ros2" / "graph_node.py"
COLLECT_TIMEOUT_S = 60.0


def has_events(dist: Distribution) -> bool:
    """Whether the distribution's rclpy has the EventsExecutor (Kilted and Jazzy's wheels do)."""
    return any(dist.prefix.glob(f"lib/python3*/site-packages/{EVENTS_MODULE}")) or any(
        dist.prefix.glob(f"lib/python3*/dist-packages/{EVENTS_MODULE}"))


def files(workdir: Path, name: str) -> tuple[Path, Path]:
    """(what it sent, what its callbacks took) of the node whose file name is ``name``."""
    return workdir / f"{name}.rclpy-sent.json", workdir / f"{name}.rclpy-log.bin"


def argv(cfg: PointConfig, node: Node, spec_path: Path, go_file: Path, tag: int,
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


def check_run_clients(graph: Graph, cfg: PointConfig) -> None:
    """An rclpy node's refusals (clients.py) for this run."""
    if not rclpy_nodes(graph):
        return
    events = any(n.executor == "events" for n in graph.nodes if n.client == "rclpy")
    check_clients(graph, cfg.transport, real_hosts=cfg.remote is not None,
                  emulated=cfg.link is not None or cfg.topology is not None,
                  count_allocs=cfg.count_allocs, layers=cfg.layers,
                  clock_test=bool(cfg.test_clock) or cfg.clock_sync,
                  has_events=has_events(distribution(cfg))
                  if events and cfg.transport == "ros2" else None)
