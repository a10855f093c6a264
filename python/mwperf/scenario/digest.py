"""What the summary keeps of a point's result (read as v3 with its stream view, result/load.py): its table row, each topic's p50/p99/loss, its
warnings and, for a throughput point, one line of what it delivered — a few hundred bytes instead of the whole result (histograms, per-second series,
agent reports), so a sweep of thousands of points summarises in little memory.
"""

from dataclasses import dataclass, field
from typing import Any

from ..show.table import Row, row_from_result
from ..topicnames import name_and_address
from ..graph.digest import graph_lines, graph_row
from ..result.load import is_stream


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
    throughput: str | None = None
    """a throughput point (--mode throughput): :func:`throughput_line`"""
    gates: list[dict[str, Any]] = field(default_factory=list)
    """its gates (--gate, gates:): each one's text, figure, limit, passed, what"""


def digest(result: dict[str, Any], location: str | None) -> Digest:
    """The digest of ``result`` saved at ``location`` (relative to the sweep): a result as
    result/load.py reads it (v3; a stream kind with its stream view beside: ``as_stream``)."""
    if not is_stream(result):
        return Digest(graph_row(result, location), graph=graph_lines(result))
    topics = [{"topic": t["topic"], "name": name_and_address(result, t["topic"], t)[0],
               "response": {k: t["response"][k] for k in ("p50_ns", "p99_ns")},
               "accounting": {k: t["accounting"][k] for k in ("sent", "lost")}}
              for t in result.get("per_topic") or []]
    return Digest(row_from_result(result, location), topics, list(result["warnings"]),
                  [_subscriber(s) for s in result.get("per_subscriber") or []],
                  throughput=throughput_line(result),
                  gates=[{k: g.get(k) for k in ("gate", "source", "figure", "limit", "passed",
                                                "what")}
                         for g in result.get("gates") or []])


def throughput_line(result: dict[str, Any]) -> str | None:
    """A throughput point's delivery in one line (None for other points): 'delivered 81.2k
    msgs/s, 83.1 MB/s (x4 subscribers), loss 0.00%, sender blocked 12.5% of its sending time';
    MB = 10^6 bytes of payload, summed over the subscribers."""
    measurement = result.get("measurement") or {}
    throughput = measurement.get("throughput") or {}
    if measurement.get("mode") != "throughput" or throughput.get("msgs_per_s") is None:
        return None
    text = (f"delivered {_count(throughput['msgs_per_s'])} msgs/s, "
            f"{(throughput.get('payload_bytes_per_s') or 0) / 1e6:.4g} MB/s")
    subscribers = throughput.get("subscribers") or 1
    if subscribers > 1:
        text += f" (\u00d7{subscribers} subscribers)"
    offered = throughput.get("offered_per_s")
    if offered:
        text += f" of {_count(offered)} msgs/s offered"
    loss = throughput.get("loss_pct")
    text += f", loss {loss:.2f}%" if loss is not None else ", loss \u2014"
    sender = throughput.get("sender") or {}
    blocked, sending = sender.get("blocked_s"), sender.get("sending_s")
    if blocked is not None and sending:
        text += f", sender blocked {100 * blocked / sending:.1f}% of its sending time"
    if sender.get("refused"):
        text += f", {sender['refused']} sends refused"
    return text


def _count(value: float) -> str:
    """81200 -> '81.2k', 1.5e6 -> '1.5M' (three significant digits)."""
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:.3g}{unit}"
    return f"{value:.3g}"


def _subscriber(entry: dict[str, Any]) -> dict[str, Any]:
    """A subscriber's p50/p99/loss; one without a measurement has none (and no loss)."""
    measured = entry["measurement"] or {"response": {"p50_ns": None, "p99_ns": None},
                                        "accounting": {"sent": 0, "lost": 0}}
    return {"topic": entry["subscriber"],
            "response": {k: measured["response"][k] for k in ("p50_ns", "p99_ns")},
            "accounting": {k: measured["accounting"][k] for k in ("sent", "lost")}}
