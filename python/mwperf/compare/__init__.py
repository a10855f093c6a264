"""``mwperf compare BASE NEW``: match the points of two runs by configuration, show the deltas of
p50/p99/max/loss/CPU/RSS, decide per row with a named statistical test whether a difference is
a regression or noise (verdict.py, stats.py), and exit 0 within budget, 1 on a regression,
2 on a usage error — so a CI pipeline can gate on it.

The inputs come from the catalogue (mwperf.store): raw samples, when a point has them, are
cut into batches or grouped by value inside DuckDB (evidence.py), never loaded one by one;
otherwise the per-second series and the HDR histogram stored with the result are used.
"""

import json
from dataclasses import dataclass
from pathlib import Path

from ..durations import format_ns
from ..errors import UsageError
from ..report.data import Point, load_run
from ..report.select import resolve_one
from ..store.catalogue import connect
from ..store.sources import staged
from .budget import COST_METRICS, LATENCY_METRICS, LAYER_METRICS, METRICS, Budgets
from .graphs import compare_graphs
from .match import match
from .evidence import Evidence
from .verdict import Row, decide, failed_row, value

from ..formats import COMPARE_FORMATS as FORMATS


@dataclass
class Comparison:
    """The outcome: the rows, the unmatched points and the budgets used."""

    base: str
    new: str
    rows: list[Row]
    only_base: list[Point]
    only_new: list[Point]
    budgets: Budgets
    only_base_graphs: tuple[str, ...] = ()
    """graph runs of BASE no graph run of NEW matches (graph and settings), by id"""
    only_new_graphs: tuple[str, ...] = ()

    @property
    def regressions(self) -> list[Row]:
        return [row for row in self.rows if row.verdict == "regression"]

    @property
    def exit_code(self) -> int:
        return 1 if self.regressions else 0


def compare(root: Path, base: str, new: str, budgets: Budgets) -> Comparison:
    """Compare run ``new`` against run ``base`` (ids, prefixes, 'latest', or paths to result
    files, point, sweep or results folders: see mwperf.store.sources)."""
    with staged(root, [base, new], ["BASE", "NEW"]) as (where, (base, new)):
        return _compare(where, base, new, budgets)


def _compare(root: Path, base: str, new: str, budgets: Budgets) -> Comparison:
    with connect(root, read_only=True) as con:
        ids = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY started_at DESC "
                                         "NULLS LAST, run_id DESC").fetchall()]
        if not ids:
            raise UsageError("BASE: the results catalogue holds no runs yet")
        base_id, new_id = resolve_one(ids, base, "BASE"), resolve_one(ids, new, "NEW")
        base_run, new_run = load_run(con, base_id, False), load_run(con, new_id, False)
        pairs, only_base, only_new, lost = match(base_run, new_run)
        graph_rows, only_base_graphs, only_new_graphs = compare_graphs(
            con, base_id, new_id, budgets.limits, budgets.alpha)
        if not pairs and not lost and not graph_rows:
            raise UsageError(f"NEW: no point of {new_id} matches the configuration of a "
                             f"measured point of {base_id} (transport, mode, rate, payload, "
                             f"topics, subscribers, executor, busy loop, QoS and conditions "
                             f"must be equal; a graph run: the graph, transport, link, QoS, "
                             f"duration, copies, rate scale and nodes left out)")
        evidence = Evidence(con)
        rows = [decide(pair.name, metric, pair.base, pair.new, budgets.limits.get(metric),
                       budgets.alpha, evidence)
                for pair in pairs for metric in METRICS
                if metric not in COST_METRICS + LAYER_METRICS
                or _measured(metric, pair.base + pair.new)]
        rows += [failed_row(name, points) for name, points in lost]
    return Comparison(base_id, new_id, rows + graph_rows, only_base, only_new, budgets,
                      tuple(only_base_graphs), tuple(only_new_graphs))


def render(result: Comparison, fmt: str = "table") -> str:
    """The comparison as an aligned table, Markdown or JSON."""
    if fmt == "json":
        return json.dumps({
            "base": result.base, "new": result.new, "budgets": result.budgets.source,
            "alpha": result.budgets.alpha, "exit_code": result.exit_code,
            "rows": [{"config": r.config, "metric": r.metric, "base": r.base, "new": r.new,
                      "delta": r.delta, "delta_pct": r.delta_pct, "budget": r.budget,
                      "method": r.method, "p_value": r.p_value, "verdict": r.verdict}
                     for r in result.rows],
            "only_base": [p.point_id for p in result.only_base] + list(result.only_base_graphs),
            "only_new": [p.point_id for p in result.only_new] + list(result.only_new_graphs)},
            indent=2) + "\n"
    head = ["configuration", "metric", "base", "new", "delta", "budget", "verdict", "method",
            "p"]
    cells = [[r.config, r.metric, _show(r.metric, r.base), _show(r.metric, r.new), _delta(r),
              r.budget or "-", r.verdict.upper() if r.verdict == "regression" else r.verdict,
              r.method, "-" if r.p_value is None else f"{r.p_value:.3g}"] for r in result.rows]
    if fmt == "markdown":
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells]
        body = "\n".join(lines) + "\n"
    else:
        widths = [max(len(h), *(len(row[i]) for row in cells)) for i, h in enumerate(head)]
        lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip()]
        lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
        body = "\n".join(lines) + "\n"
    notes = [f"BASE {result.base}  NEW {result.new}  budgets: {result.budgets.source}, "
             f"alpha {result.budgets.alpha:g}"]
    for label, points, graphs in (("only in BASE", result.only_base, result.only_base_graphs),
                                  ("only in NEW", result.only_new, result.only_new_graphs)):
        if points or graphs:
            notes.append(f"{label} (not compared): "
                         + ", ".join([p.point_id for p in points] + list(graphs)))
    count = len(result.regressions)
    notes.append(f"{count} regression{'s' if count != 1 else ''}" if count else
                 "within budget")
    return body + "\n".join(notes) + "\n"


def _measured(metric: str, points: list[Point]) -> bool:
    """A cost or layer metric is compared where either side measured it (a budget then needs
    both: one side alone is an info row, so a gate whose NEW lost its layers says so instead of
    passing silently)."""
    return any(value(p, metric) is not None for p in points)


def _show(metric: str, value: float | None) -> str:
    if value is None:
        return "\u2014"
    if metric == "allocs_per_msg":
        return f"{value:.3g}/msg"
    if metric == "wire_bytes":
        return f"{value:.6g} B/msg"
    if metric == "throughput":
        return f"{value:.4g} msgs/s"
    if metric in LATENCY_METRICS or metric in LAYER_METRICS:
        return format_ns(value)
    if metric == "rss":
        return f"{value / 1024:.4g} MiB"
    return f"{value:.4g} %"


def _delta(row: Row) -> str:
    if row.delta is None:
        return "\u2014"
    if row.metric in ("loss", "timeouts", "edge.loss", "call.timeouts"):
        return f"{row.delta:+.3g} pp"
    pct = f" ({row.delta_pct:+.1f} %)" if row.delta_pct is not None else ""
    if row.metric in LATENCY_METRICS or row.metric in LAYER_METRICS:
        sign = "+" if row.delta >= 0 else "-"
        return f"{sign}{format_ns(abs(row.delta))}{pct}"
    if row.metric == "allocs_per_msg":
        return f"{row.delta:+.3g}/msg{pct}"
    if row.metric == "wire_bytes":
        return f"{row.delta:+.6g} B/msg{pct}"
    if row.metric == "throughput":
        return f"{row.delta:+.4g} msgs/s{pct}"
    return f"{row.delta:+.3g}{pct}" if row.metric == "cpu" else f"{row.delta / 1024:+.3g} MiB{pct}"


__all__ = ["Comparison", "FORMATS", "compare", "render"]
