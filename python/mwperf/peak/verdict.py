"""Whether a trial's result keeps the rate: loss within ``max_loss`` percent, the sender on its
schedule (sends more than a period late within the same share), and the latency p99 below the
limit (by default the period: a message not through before the next one is due is a backlog
building). A graph (every publisher scaled by the trial's factor) passes when its edges lose
within ``max_loss`` percent together and every edge's p99 is below its own period."""

from __future__ import annotations

from typing import Any

from ..durations import format_ns
from .search import Trial


def point_trial(rate: float, result: dict[str, Any], max_loss: float,
                p99_limit_ns: int | None) -> Trial:
    """The trial of a single stream at ``rate`` Hz; ``p99_limit_ns`` None: the period."""
    run_id = result.get("run_id")
    if result["status"] == "failed":
        return Trial(rate, False, f"the point failed: {result.get('status_reason')}", {}, run_id)
    measurement = result.get("measurement") or {}
    accounting = measurement.get("accounting") or {}
    response = measurement.get("response") or {}
    schedule = measurement.get("schedule") or {}
    sent, lost = accounting.get("sent"), accounting.get("lost")
    limit = p99_limit_ns if p99_limit_ns is not None else round(1e9 / rate)
    p99 = response.get("p99_ns")
    figures: dict[str, Any] = {"sent": sent, "lost": lost, "p99_ns": p99, "p99_limit_ns": limit,
                               "behind": schedule.get("behind_count")}
    if not sent or p99 is None or lost is None:
        return Trial(rate, False, "not measured (nothing sent or received)", figures, run_id)
    loss = 100 * lost / sent
    behind = 100 * (schedule.get("behind_count") or 0) / sent
    figures.update(loss_percent=loss, behind_percent=behind)
    misses = []
    if loss > max_loss:
        misses.append(f"loss {loss:.3g}% > {max_loss:g}%")
    if behind > max_loss:
        misses.append(f"the sender fell behind on {behind:.3g}% of sends > {max_loss:g}%")
    if p99 > limit:
        misses.append(f"p99 {format_ns(p99)} > {format_ns(limit)}")
    partial = result["status"] == "partial"
    if partial:
        misses.append(f"partial: {result.get('status_reason')}")
    why = "; ".join(misses) or (f"loss {loss:.3g}%, p99 {format_ns(p99)} <= {format_ns(limit)}")
    return Trial(rate, not misses, why, figures, run_id)


def graph_trial(factor: float, result: dict[str, Any], max_loss: float,
                p99_limit_ns: int | None) -> Trial:
    """The trial of a graph with every publisher's rate x ``factor``."""
    run_id = result.get("run_id")
    if result["status"] == "failed":
        return Trial(factor, False, f"the graph failed: {result.get('status_reason')}", {},
                     run_id)
    # an edge into a command node is counted where it comes out (graph/commands.py)
    edges = [e for e in result.get("edges") or [] if not e.get("command_input")]
    silent = [e for e in edges if e.get("received") is None]
    if not edges or silent:
        return Trial(factor, False, "not measured (an edge was not reported)", {}, run_id)
    received = sum(e["received"] for e in edges)
    lost = sum(e.get("lost") or 0 for e in edges)
    loss = 100 * lost / (received + lost) if received + lost else 0.0
    over = []
    for e in edges:
        limit = p99_limit_ns if p99_limit_ns is not None else e.get("period_ns")
        p99 = (e.get("latency") or {}).get("p99_ns")
        if limit is not None and (p99 is None or p99 > limit):
            over.append(f"{e['topic']} {e['from']}->{e['to']} p99 "
                        f"{'none' if p99 is None else format_ns(p99)} > {format_ns(limit)}")
    figures = {"received": received, "lost": lost, "loss_percent": loss,
               "edges_over_p99": len(over)}
    misses = ([f"loss {loss:.3g}% > {max_loss:g}%"] if loss > max_loss else []) + over[:3]
    if len(over) > 3:
        misses.append(f"and {len(over) - 3} more edges over their p99 limit")
    if result["status"] == "partial":
        misses.append(f"partial: {result.get('status_reason')}")
    why = "; ".join(misses) or f"loss {loss:.3g}%, every edge's p99 within its limit"
    return Trial(factor, not misses, why, figures, run_id)
