"""Who runs a graph node (``client:`` in a graph file): mwperf's agent (``mwperf-agent node``,
the default) or a real rclpy node (python/mwperf/ros2/graph_node.py) inside rclpy's real
executors and callback groups. What each client takes is written here once; parse.py refuses a
file that asks a client for what it has not, check_clients refuses what the run cannot give it.
"""

from typing import Any

from ..errors import UsageError
from ..ros2.distributions import Distribution
from ..ros2.rclpy_parts import EXECUTORS
from .model import Graph, Node

CLIENTS = ("agent", "rclpy")
RCLPY_EXECUTORS = EXECUTORS
"""rclpy's SingleThreadedExecutor, MultiThreadedExecutor, rclpy.experimental.EventsExecutor"""
CALLBACK_GROUPS = ("exclusive", "reentrant")
"""rclpy's MutuallyExclusiveCallbackGroup (one of its own per subscription) and
ReentrantCallbackGroup"""
RCLPY_TRANSPORTS = ("ros2",)
"""an rclpy node speaks ROS 2 on its RMW: it meets the agent's nodes on the ros2 transport"""
EVENTS_MODULE = "rclpy/experimental/events_executor.py"
RCLPY_TYPE = "std_msgs/msg/UInt8MultiArray"
"""what an rclpy node's messages are (ros2/graph_node.py; the ros2 transport's default type)"""


def executors(client: str, agent_executors: tuple[str, ...]) -> tuple[str, ...]:
    """The executors a node of ``client`` takes (the agent's: ``agent_executors``)."""
    return RCLPY_EXECUTORS if client == "rclpy" else agent_executors


def refusal(node: Node) -> str | None:
    """What an rclpy node asks that its client does not do yet (None: nothing)."""
    if node.client != "rclpy":
        return None
    if node.servers or node.clients:
        return ("servers and clients: not yet in an rclpy node (services are the agent's "
                "nodes'); put them in a node with client: agent")
    saturating = next((p.topic for p in node.publishers if p.saturating), None)
    if saturating is not None:
        return (f"publisher of '{saturating}': rate max: not in an rclpy node (a saturating "
                "publisher is the agent's loop of its own); give a rate")
    return None


def rclpy_nodes(graph: Graph) -> list[str]:
    return [n.name for n in graph.nodes if n.client == "rclpy"]


def check_clients(graph: Graph, transport: str, *, real_hosts: bool = False,
                  emulated: bool = False, count_allocs: bool = False, layers: bool = False,
                  clock_test: bool = False, has_events: "bool | None" = None,
                  message_type: str | None = None) -> None:
    """Refuse (exit 2, naming the field and what is allowed) an rclpy node the run cannot
    host; ``has_events``: whether the ROS 2 distribution has rclpy's EventsExecutor (None: not
    known yet); ``message_type``: the run's ``--opt type``."""
    names = rclpy_nodes(graph)
    if not names:
        return
    what = f"--graph {graph.name}: node '{names[0]}': client: rclpy"
    if transport not in RCLPY_TRANSPORTS:
        raise UsageError(f"{what}: only with --transport {' or '.join(RCLPY_TRANSPORTS)} (a real "
                         f"rclpy node on its RMW), not --transport {transport}; allowed on "
                         f"{transport}: client: agent")
    for given, flag in ((real_hosts, "--host"), (emulated, "--link"),
                        (count_allocs, "--count-allocs"), (layers, "--layers"),
                        (clock_test, "--clock-sync / --test-clock")):
        if given:
            raise UsageError(f"{what}: not yet with {flag} (the rclpy node runs on this "
                             f"machine's clock, without the agent's preloads); drop {flag} or "
                             "use client: agent")
    if message_type not in (None, RCLPY_TYPE):
        raise UsageError(f"{what}: --opt type={message_type}: not yet (an rclpy node carries "
                         f"mwperf's messages in {RCLPY_TYPE}); drop --opt type or use "
                         "client: agent")
    events = [n.name for n in graph.nodes if n.client == "rclpy" and n.executor == "events"]
    if events and has_events is False:
        raise UsageError(f"--graph {graph.name}: node '{events[0]}': executor: events: this "
                         "ROS 2 distribution's rclpy has no EventsExecutor "
                         f"({EVENTS_MODULE}); allowed: single, multi")


def has_events(dist: Distribution) -> bool:
    """Whether the distribution's rclpy has the EventsExecutor (Kilted's and Jazzy's wheels do)."""
    return any(dist.prefix.glob(f"lib/python3*/site-packages/{EVENTS_MODULE}")) or any(
        dist.prefix.glob(f"lib/python3*/dist-packages/{EVENTS_MODULE}"))


def check_run_clients(graph: Graph, cfg: Any) -> None:
    """An rclpy node's refusals for the run of ``cfg`` (a config.PointConfig: typed loosely, as
    config.py imports graph/point.py, which calls this)."""
    if not rclpy_nodes(graph):
        return
    events = any(n.executor == "events" for n in graph.nodes if n.client == "rclpy")
    if events and cfg.transport == "ros2":
        from ..transports.ros2 import distribution  # the point's distribution (--opt distro)
        found: bool | None = has_events(distribution(cfg))
    else:
        found = None
    check_clients(graph, cfg.transport, real_hosts=cfg.remote is not None,
                  emulated=cfg.link is not None or cfg.topology is not None,
                  count_allocs=cfg.count_allocs, layers=cfg.layers,
                  clock_test=bool(cfg.test_clock) or cfg.clock_sync, has_events=found,
                  message_type=cfg.option("type"))
