"""Nodes sharing an OS process (docs/graphs.md "Processes"): a graph file's ``process: NAME``
puts the nodes of that name in one ``mwperf-agent node`` process (several ``--node-spec``,
crates/mwperf-agent/src/node/process.rs), whose endpoints share one middleware session, so
messages between them take the middleware's in-process path, as between the components of a
ROS 2 container or the nodes of iRobot's single-process benchmark. ``--processes`` overrides the
file: ``one`` (every mwperf node in one process, as iRobot runs a topology) or ``per-node``.

What is per process, not per node, is refused with such a process (a clear usage error before
anything starts): the allocation counters and the layers interposer (``--count-allocs``,
``--alloc-sites``, ``--layers``), a CPU flag naming one of its nodes, ``--restart`` of one of its
nodes, a DDS-Security identity (one participant, one identity), real hosts (``--host``)."""

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import UsageError
from ..security.modes import DDS_MODES
from .model import Graph, Node

FILE, ONE, PER_NODE = "file", "one", "per-node"
MODES = (FILE, ONE, PER_NODE)
ONE_NAME = "all"
"""the process of ``--processes one``"""
FILE_PREFIX = "process."
"""an agent process of several nodes: its files (``process.NAME.stdout``, ...) and its name"""

SHARED_BY_NODE = {
    "ros2": "the ros2 transport opens one rcl node per process, so nodes sharing a process "
            "would share one ROS 2 node name (a component container gives each component its "
            "own rcl node in one context: not yet)",
}
"""transports on which nodes cannot share a process, and why"""


def parse_mode(value: Any) -> str:
    """``--processes``: file (default), one or per-node."""
    if value in (None, ""):
        return FILE
    text = str(value).strip()
    if text not in MODES:
        raise UsageError(f"--processes: '{text}'; allowed: {', '.join(MODES)}")
    return text


def apply(graph: Graph, mode: str) -> Graph:
    """``graph`` with its nodes' processes as ``mode`` says (the graph itself for ``file``)."""
    from dataclasses import replace

    if mode == FILE:
        return graph
    if mode == PER_NODE:
        return replace(graph, nodes=tuple(replace(n, process=None) for n in graph.nodes))
    shared = [n for n in graph.nodes if _agent(n)]
    limited = [n.name for n in shared if n.cpu_quota or n.cpu_pin]
    if limited:
        raise UsageError(f"--processes one: node '{limited[0]}' has its own CPU limit "
                         "(cpu_quota/cpu_pin in the graph file); nodes of one process share "
                         "its CPU: leave the limit out, or run --processes file")
    return replace(graph, nodes=tuple(replace(n, process=ONE_NAME) if _agent(n) else n
                                      for n in graph.nodes))


def _agent(node: Node) -> bool:
    """An mwperf node (the agent runs it): the only kind that shares a process."""
    return node.client == "agent" and not node.command


def groups(graph: Graph) -> dict[str, tuple[str, ...]]:
    """process -> its nodes in graph order, for processes of two nodes or more (a process of
    one node runs as any node does)."""
    by: dict[str, list[str]] = {}
    for node in graph.nodes:
        if node.process and _agent(node):
            by.setdefault(node.process, []).append(node.name)
    return {name: tuple(nodes) for name, nodes in by.items() if len(nodes) > 1}


def process_of(graph: Graph) -> dict[str, str]:
    """node -> its process, for the nodes of a process of several."""
    return {node: name for name, nodes in groups(graph).items() for node in nodes}


def check(graph: Graph, cfg: Any, place: Mapping[str, str], remote: Sequence[str]) -> None:
    """Refuse, before anything runs, a shared process the run cannot give (module doc);
    ``place``: node -> emulated or real host, ``remote``: the real hosts."""
    shared = groups(graph)
    if not shared:
        return
    name, nodes = next(iter(shared.items()))
    what = f"process '{name}' ({', '.join(nodes[:3])}{', ...' if len(nodes) > 3 else ''})"
    if cfg.transport in SHARED_BY_NODE:
        raise UsageError(f"--transport {cfg.transport}: nodes sharing a process ({what}): "
                         f"{SHARED_BY_NODE[cfg.transport]}; run them --processes per-node")
    if remote:
        raise UsageError(f"--host: not yet with nodes sharing a process ({what}): run them "
                         "--processes per-node on real hosts, or this machine's emulated hosts")
    for name, nodes in shared.items():
        hosts = sorted({place.get(n, "") for n in nodes})
        if len(hosts) > 1:
            raise UsageError(f"process '{name}': its nodes are placed on hosts "
                             f"{', '.join(h or '(this machine)' for h in hosts)}; a process runs "
                             "on one host (give its nodes one host:)")
    per_process = [flag for flag, on in (("--count-allocs", cfg.count_allocs),
                                         ("--alloc-sites", cfg.alloc_sites),
                                         ("--layers", cfg.layers)) if on]
    if per_process:
        raise UsageError(f"{per_process[0]}: counts a whole process, and {what} holds several "
                         "nodes: run them --processes per-node to see each node's")
    if cfg.secure in DDS_MODES:
        raise UsageError(f"--secure {cfg.secure}: one DDS participant per process has one "
                         f"identity, and {what} holds several nodes: not yet; run them "
                         "--processes per-node")
    member = process_of(graph)
    for target, _ in cfg.restarts:
        if target in member:
            raise UsageError(f"--restart {target}@...: node '{target}' shares process "
                             f"'{member[target]}' with other nodes: restarting it would "
                             "restart them all; not yet: run them --processes per-node")
    named = [n for n, _ in (*cfg.cpu.quota_pct, *cfg.cpu.pin) if n in member]
    if named:
        raise UsageError(f"--cpu-quota/--cpu-pin {named[0]}=...: node '{named[0]}' shares "
                         f"process '{member[named[0]]}' with other nodes, which share its CPU: "
                         "limit a host (HOST=...) or run them --processes per-node")
    if cfg.transport == "rustdds":
        for name, nodes in shared.items():
            both = _published(graph, nodes) & _subscribed(graph, nodes)
            if both:
                raise UsageError(f"--transport rustdds: process '{name}' publishes and "
                                 f"subscribes '{sorted(both)[0]}': RustDDS delivers nothing "
                                 "between a writer and a reader of one participant; run "
                                 "them --processes per-node")


def _published(graph: Graph, nodes: Sequence[str]) -> set[str]:
    return {t for n in nodes for t in ([p.topic for p in graph.node(n).publishers]
                                       + [s.publish for s in graph.node(n).subscribers
                                          if s.publish])}


def _subscribed(graph: Graph, nodes: Sequence[str]) -> set[str]:
    return {s.topic for n in nodes for s in graph.node(n).subscribers}
