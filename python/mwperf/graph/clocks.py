"""A graph across several clocks: which node serves the reference clock and which probe it
(``mwperf-agent node --clock-serve`` / ``--clock-ref``, node/clock.rs), and what each edge's and
chain's figures may then be off.

The reference is mwperf's own clock: the go file names an instant on it. Its server is the
first node that runs on that clock; every node on another clock probes it and puts every
timestamp on it. Emulated hosts share this machine's clock unless ``--test-clock`` shifts one
(TEST ONLY: ground truth); with ``--clock-sync`` the nodes on the other emulated hosts probe
anyway (a self-check: their offset must come out within its bound of zero)."""

from dataclasses import dataclass, field
from typing import Any

from ..clocksync import CLOCK_PORT, free_udp_port
from ..errors import UsageError
from .model import Graph

ROOT = ""
"""the clock domain of mwperf's own clock"""


@dataclass(frozen=True)
class ClockPlan:
    """Who serves, where, and who probes; empty on one clock."""

    server: str | None = None
    serve: str | None = None
    """the server's bind address (every interface of its host, the probe port)"""
    peer: str | None = None
    """where the probers reach it"""
    probed: frozenset[str] = field(default_factory=frozenset)

    def args(self, node: str) -> list[str]:
        """The node's clock flags."""
        if node == self.server and self.probed:
            return ["--clock-serve", str(self.serve)]
        if node in self.probed:
            return ["--clock-ref", str(self.peer)]
        return []


def domains(graph: Graph, place: dict[str, str], shifted: set[str]) -> dict[str, str]:
    """Each node's clock: its host when the host's clock is its own (``shifted``), else mwperf's
    (ROOT)."""
    return {n.name: place[n.name] if place.get(n.name) in shifted else ROOT
            for n in graph.nodes}


def clock_plan(graph: Graph, place: dict[str, str], shifted: set[str], sync: bool,
               address_of: Any) -> ClockPlan:
    """The plan for ``graph`` with nodes on hosts ``place`` (node -> host; empty on this
    machine), the hosts with a clock of their own ``shifted``; ``sync``: probe from every
    other host even when it shares the clock; ``address_of(node)``: its host address."""
    clock = domains(graph, place, shifted)
    on_root = [n.name for n in graph.nodes if clock[n.name] == ROOT]
    if not on_root:
        raise UsageError(f"--test-clock: every node of graph '{graph.name}' runs on a shifted "
                         "clock; leave one host on mwperf's clock (the go instant is on it)")
    server = on_root[0]
    if sync:
        probed = {n.name for n in graph.nodes  # on one machine: every other node
                  if n.name != server and (not place or place.get(n.name) != place.get(server))}
    else:
        probed = {n for n, c in clock.items() if c != ROOT}
    if not probed:
        return ClockPlan()
    if not place:  # one machine (--clock-sync on loopback): a free port
        port = free_udp_port()
        return ClockPlan(server, f"127.0.0.1:{port}", f"127.0.0.1:{port}", frozenset(probed))
    host = address_of(server)
    peer = f"[{host}]:{CLOCK_PORT}" if ":" in host else f"{host}:{CLOCK_PORT}"
    serve = f"[::]:{CLOCK_PORT}" if ":" in host else f"0.0.0.0:{CLOCK_PORT}"
    return ClockPlan(server, serve, peer, frozenset(probed))


def bound_ns(*nodes: dict[str, Any] | None) -> int | None:
    """How far a figure from timestamps of these nodes may be off: the sum of their clocks'
    bounds (0 on the reference clock); None when one of them has no fit."""
    total = 0
    for node in nodes:
        clock = (node or {}).get("clock")
        if clock is None or clock.get("role") == "reference":
            continue
        if clock.get("bound_ns") is None:
            return None
        total += clock["bound_ns"]
    return total


CLOCK_NODE = "mwperf-clock"
"""with real hosts: a node of mwperf's with nothing to publish or receive that serves mwperf's
clock (the reference) to the nodes on the hosts, whether or not a node of the graph runs here"""


def real_clock_plan(graph: Graph, place: dict[str, str], local_address: str) -> ClockPlan:
    """Real hosts: each a clock of its own; ``CLOCK_NODE`` serves mwperf's on a free port of
    this machine, which the hosts reach at ``local_address``."""
    from ..remote.target import LOCAL

    probed = frozenset(n.name for n in graph.nodes if place.get(n.name, LOCAL) != LOCAL)
    port = free_udp_port()
    peer = f"[{local_address}]:{port}" if ":" in local_address else f"{local_address}:{port}"
    serve = f"[::]:{port}" if ":" in local_address else f"0.0.0.0:{port}"
    return ClockPlan(CLOCK_NODE, serve, peer, probed)


def clock_node(plan: ClockPlan, specs: list[dict[str, Any]]) -> dict[str, Any]:
    """The spec of ``CLOCK_NODE``: the graph's timing, nothing to publish or receive."""
    first = specs[0]
    return {"name": CLOCK_NODE, "index": len(specs), "executor": "single",
            "warmup_ns": first["warmup_ns"], "duration_ns": first["duration_ns"],
            "linger_ns": first["linger_ns"], "publishers": [], "subscriptions": []}
