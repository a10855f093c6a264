"""The bridge part: a bridge between the two agents (bridges/), its halves started with the
place, each side given its own transport and settings, a half that died makes the point
partial, and the result's ``bridge`` section (with each hop's bytes over emulated links). On a
graph (graph/bridge_sides.py) each node meets its side's half and the section holds the edges
that cross the bridge to their offered rate."""

from typing import TYPE_CHECKING

from ..bridges.run import (bridge_died, crossing_section, ensure_bridge, hops, rate_warnings,
                           section, start_bridge)
from .base import Part

if TYPE_CHECKING:
    from ..agent import Agent
    from ..point import Point
    from ..result_types import RunResult
    from .state import PointState


SETTLE_S = 1.0
"""when the sender failed: how long a bridge half still running may take to finish exiting
(bridges/run.py bridge_died)"""


class Bridge(Part):
    name = "bridge"
    on_graphs = True

    def wanted(self, cfg: "Point") -> bool:
        return cfg.bridge is not None

    def check(self, cfg: "Point", agent: "Agent") -> None:
        ensure_bridge(cfg, agent)

    def start(self, run: "PointState") -> None:
        run.bridge = start_bridge(run.cfg, run.workdir, run.agent, run.daemons, run.emulated,
                                  run.tag)  # None for --bridge direct

    def sender_done(self, run: "PointState") -> None:
        if run.bridge is not None:
            failed = run.sender is not None and run.sender.exit_code not in (None, 0, 3)
            run.found["bridge_gone"] = bridge_died(run.daemons, SETTLE_S if failed else 0.0)

    def section(self, run: "PointState", result: "RunResult") -> None:
        gone = run.found.get("bridge_gone")
        graph = getattr(run.cfg, "graph", None)
        measured = result.get("edges") if graph is not None else result["measurement"]
        if gone is not None and measured is not None:
            # what was measured before the bridge died is kept; the agents' own failure (their
            # broker or peer vanished) is the consequence, so the bridge is the reason
            result["status"] = "partial"
            result["status_reason"] = f"{gone}; then {result['status_reason'] or 'the rest ran'}"
        result["bridge"] = section(run.cfg, run.bridge, run.daemons.describe(), result)
        if graph is not None:
            result["bridge"].update(crossing_section(graph.graph, result["edges"]))
        short = rate_warnings(result["bridge"])
        if short:  # a graph result has warnings only when there are some
            result["warnings"] = list(result.get("warnings") or []) + short
        if result.get("link"):
            result["bridge"]["hops"] = hops(result["link"], _messages(result))


def _messages(result: "RunResult") -> int:
    """Messages sent over the point (warm-up included where known): a stream's sender's, or
    every graph edge's publisher's (each topic once)."""
    if "edges" in result and "measurement" not in result:
        seen = {(e["topic"], e["from"]): e.get("sent") or 0 for e in result["edges"]}
        return sum(seen.values())
    counts = (result.get("measurement") or {}).get("accounting") or {}
    return (counts.get("sent") or 0) + (counts.get("warmup_sent") or 0)
