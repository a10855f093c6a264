"""Graph runs in ``mwperf compare`` (docs/one-path-plan.md step 8): the graph runs of BASE and
NEW matched by graph and settings, and per matched graph each edge's latency (p50, p99, max)
and loss, each chain's end to end (p50, p99, max) and each call edge's latency (p50, p99) and
timeouts compared with the budgets of budget.py (``edge.p99=+10%``, ``chain.p99=+2ms``,
``edge.loss=+0.5pp``, ...).

Read from the catalogue's graph tables (store/graph_tables.py). The tests, as for points
(verdict.py): repetitions on both sides, enough of them for the exact test to reach alpha:
exact Mann-Whitney U over the per-repetition values; loss and timeouts: a two-proportion z-test
on the summed counts; otherwise the budget decides on the medians, and the method says so (the
graph tables hold quantiles per edge, not per-message samples).
"""

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import duckdb

from .budget import GRAPH_METRICS, LOWER_IS_WORSE, Budget
from .stats import permutation_u, two_proportions
from .verdict import Row

KEY = ("graph_name", "graph_spec", "transport", "link", "reliability", "history", "depth",
       "duration_ns", "copies", "rate_scale", "without_nodes")
"""what must be equal for two graph runs to be compared: the graph and how it was run"""
Figure = Callable[[dict[str, Any]], float | None]
COUNTED = {"edge.loss": ("lost", "sent"), "call.timeouts": ("timeouts", "sent")}
"""the share metrics: (part, whole) columns, tested as proportions"""


def _share(part: str, whole: str) -> Figure:
    return lambda row: (None if row.get(part) is None else
                        100.0 * row[part] / row[whole] if row.get(whole) else 0.0)


FIGURES: dict[str, Figure] = {
    "edge.p50": lambda r: r.get("latency_p50_ns"), "edge.p99": lambda r: r.get("latency_p99_ns"),
    "edge.max": lambda r: r.get("latency_max_ns"), "edge.loss": _share("lost", "sent"),
    "chain.p50": lambda r: r.get("e2e_p50_ns"), "chain.p99": lambda r: r.get("e2e_p99_ns"),
    "chain.max": lambda r: r.get("e2e_max_ns"),
    "call.p50": lambda r: r.get("latency_p50_ns"), "call.p99": lambda r: r.get("latency_p99_ns"),
    "call.timeouts": _share("timeouts", "sent"),
}
"""metric -> its figure in one row of the item's table"""
assert set(FIGURES) == set(GRAPH_METRICS)


@dataclass
class GraphRun:
    """One graph run of the catalogue: its graph_runs row and its items by name."""

    row: dict[str, Any]
    items: dict[str, dict[str, dict[str, Any]]]
    """'edge' | 'chain' | 'call' -> the item's name -> its row"""

    @property
    def key(self) -> tuple[Any, ...]:
        return tuple(self.row.get(k) for k in KEY)

    @property
    def label(self) -> str:
        r = self.row
        extra = [f"link {r['link']}" if r.get("link") else "",
                 f"x{r['copies']}" if (r.get("copies") or 1) > 1 else "",
                 f"without {r['without_nodes']}" if r.get("without_nodes") else ""]
        return " ".join(["graph", r["graph_name"], "over", str(r.get("transport")),
                         *[e for e in extra if e]])


def load_graph_runs(con: duckdb.DuckDBPyConnection, run_id: str) -> list[GraphRun]:
    """The graph runs of run ``run_id`` (alone, or the graph points of a sweep)."""
    runs = _rows(con, "SELECT * EXCLUDE (result) FROM graph_runs WHERE run_id = ? AND kind = 'graph' "
                      "ORDER BY point_index, repetition, graph_id", [run_id])
    found = []
    for row in runs:
        gid = [row["graph_id"]]
        edges = _rows(con, "SELECT * FROM graph_edges WHERE graph_id = ? ORDER BY edge", gid)
        chains = _rows(con, "SELECT * FROM graph_chains WHERE graph_id = ? ORDER BY chain", gid)
        calls = _rows(con, "SELECT * FROM graph_calls WHERE graph_id = ? ORDER BY call", gid)
        found.append(GraphRun(row, {
            "edge": {f"{e['topic']} {e['from_node']} -> {e['to_node']}": e for e in edges},
            "chain": {c["name"]: c for c in chains},
            "call": {f"{c['service']} {c['client']} -> {c['server']}": c for c in calls}}))
    return found


def compare_graphs(con: duckdb.DuckDBPyConnection, base_id: str, new_id: str,
                   limits: dict[str, Budget], alpha: float
                   ) -> tuple[list[Row], list[str], list[str]]:
    """(rows, graph runs of BASE with no match in NEW, and of NEW with none in BASE)."""
    base, new = _by_key(load_graph_runs(con, base_id)), _by_key(load_graph_runs(con, new_id))
    rows: list[Row] = []
    for key in (k for k in base if k in new):
        b_runs, n_runs = _measured(base[key]), _measured(new[key])
        label = base[key][0].label
        if not b_runs:
            continue
        if not n_runs:
            reasons = "; ".join(sorted({str(r.row.get("status_reason") or r.row["status"])
                                        for r in new[key]}))
            rows.append(Row(label, "status", None, None, f"NEW measured nothing: {reasons}",
                            None, "regression", None))
            continue
        for metric in GRAPH_METRICS:
            kind = metric.split(".")[0]
            names = list(dict.fromkeys(n for r in b_runs for n in r.items[kind]))
            for name in names:
                rows.append(decide(f"{label}: {kind} {name}", metric,
                                   [r.items[kind].get(name) for r in b_runs],
                                   [r.items[kind].get(name) for r in n_runs],
                                   limits.get(metric), alpha))
    only_base = [r.row["graph_id"] for k, runs in base.items() if k not in new for r in runs]
    only_new = [r.row["graph_id"] for k, runs in new.items() if k not in base for r in runs]
    return rows, only_base, only_new


def decide(config: str, metric: str, base: list[dict[str, Any] | None],
           new: list[dict[str, Any] | None], budget: Budget | None, alpha: float) -> Row:
    """The row of ``metric`` for one item (an edge, chain or call edge) over the repetitions
    of its graph on each side (None: a repetition without the item)."""
    figure = FIGURES[metric]
    b_values = [v for v in (figure(r) for r in base if r) if v is not None]
    n_values = [v for v in (figure(r) for r in new if r) if v is not None]
    text = budget.text if budget else None
    if not b_values or not n_values:
        return Row(config, metric, None, None, "not measured on both sides", None, "info", text)
    b, n = statistics.median(b_values), statistics.median(n_values)
    method, p, significant = _test(metric, base, new, b_values, n_values, alpha)
    if budget is None:
        verdict = "info"
    elif budget.exceeded(b, n):
        verdict = "regression" if significant in (True, None) else "noise"
    elif n < b and _test(metric, new, base, n_values, b_values, alpha)[2] is True:
        verdict = "better"
    else:
        verdict = "ok"
    return Row(config, metric, b, n, method, p, verdict, text)


def _test(metric: str, base: list[dict[str, Any] | None], new: list[dict[str, Any] | None],
          b_values: list[float], n_values: list[float], alpha: float
          ) -> tuple[str, float | None, bool | None]:
    """(method, p-value or None, significant: NEW larger with p <= alpha; None: no test)."""
    assert metric not in LOWER_IS_WORSE
    repeated = len(b_values) >= 2 and len(n_values) >= 2
    if repeated and 1 / math.comb(len(b_values) + len(n_values), len(n_values)) <= alpha:
        p = permutation_u(b_values, n_values)
        return (f"exact Mann-Whitney U over repetitions ({len(b_values)} vs {len(n_values)})",
                p, p <= alpha)
    if metric in COUNTED:
        part, whole = COUNTED[metric]
        counts = [sum(r.get(c) or 0 for r in side if r) for side in (base, new)
                  for c in (part, whole)]
        p = two_proportions(*counts)
        return f"two-proportion z-test on {part}/{whole}", p, p <= alpha
    return ("none: the graph tables hold one quantile per run, not samples (budget decides"
            + (", median of repetitions)" if repeated else ")"), None, None)


def _by_key(runs: list[GraphRun]) -> dict[tuple[Any, ...], list[GraphRun]]:
    found: dict[tuple[Any, ...], list[GraphRun]] = {}
    for run in runs:
        found.setdefault(run.key, []).append(run)
    return found


def _measured(runs: list[GraphRun]) -> list[GraphRun]:
    return [r for r in runs if r.row["status"] in ("complete", "partial")]


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    cursor = con.execute(sql, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, values)) for values in cursor.fetchall()]
