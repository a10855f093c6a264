"""What the summary keeps of a point's run-result: its table row, each topic's p50/p99/loss and
its warnings — a few hundred bytes instead of the whole result (histograms, per-second series,
agent reports), so a sweep of thousands of points summarises in little memory.
"""

from dataclasses import dataclass, field
from typing import Any

from ..table import Row, row_from_result
from ..topicnames import name_and_address
from ..graph.digest import graph_lines, graph_row


@dataclass(frozen=True)
class Digest:
    """A point's result, reduced to what the summary shows."""

    row: Row
    per_topic: list[dict[str, Any]] = field(default_factory=list)
    """each topic: ``topic``, ``name``, ``response`` {p50_ns, p99_ns}, ``accounting`` {sent,
    lost}"""
    warnings: list[dict[str, Any]] = field(default_factory=list)
    per_subscriber: list[dict[str, Any]] = field(default_factory=list)
    """each subscriber (``--subscribers N``) in per_topic's shape, its index as ``topic``"""
    graph: list[str] = field(default_factory=list)
    """a graph point: its chains and worst edges, a line each (graph/digest.py)"""


def digest(result: dict[str, Any], location: str | None) -> Digest:
    """The digest of run-result ``result`` saved at ``location`` (relative to the sweep)."""
    if result.get("kind") == "graph-result":
        return Digest(graph_row(result, location), graph=graph_lines(result))
    topics = [{"topic": t["topic"], "name": name_and_address(result, t["topic"], t)[0],
               "response": {k: t["response"][k] for k in ("p50_ns", "p99_ns")},
               "accounting": {k: t["accounting"][k] for k in ("sent", "lost")}}
              for t in result.get("per_topic") or []]
    return Digest(row_from_result(result, location), topics, list(result["warnings"]),
                  [_subscriber(s) for s in result.get("per_subscriber") or []])


def _subscriber(entry: dict[str, Any]) -> dict[str, Any]:
    """A subscriber's p50/p99/loss; one without a measurement has none (and no loss)."""
    measured = entry["measurement"] or {"response": {"p50_ns": None, "p99_ns": None},
                                        "accounting": {"sent": 0, "lost": 0}}
    return {"topic": entry["subscriber"],
            "response": {k: measured["response"][k] for k in ("p50_ns", "p99_ns")},
            "accounting": {k: measured["accounting"][k] for k in ("sent", "lost")}}
