"""Plots: each process's resources over the run (``resources``, sampled once a second: RSS and,
with --count-allocs, live heap; python/mwperf/soak/), the steady state the growth was fitted
over shaded, and the point's gates with pass/fail (``--gate``, a scenario's ``gates:``). One
chart of each kind per point, for the first ``MAX_POINTS`` points that have a series."""

from collections.abc import Sequence
from html import escape

from ..sizes import format_bytes
from ..soak.gates import parse_gate, shown
from .data import Point, Run
from .labels import label, run_tags, varying
from .section import Section
from .svg import Axis, Chart, colour

MAX_POINTS = 16
MAX_SAMPLES = 600
"""a longer series is drawn through every n-th sample (the fit used them all)"""


def _mib(value: float) -> str:
    return format_bytes(int(value * 1024 * 1024))


def charts(point: Point, name: str) -> list[Chart]:
    """The RSS chart and (when sampled) the live heap chart of ``point``."""
    resources = point.resources or {}
    processes = resources.get("processes") or []
    steady = resources.get("steady")
    rss = Chart(f"{name}: RSS per process", Axis("time since the sender started (s)"),
                Axis("RSS (MiB)", fmt=_mib), "soak-rss")
    heap = Chart(f"{name}: live heap per agent (--count-allocs)",
                 Axis("time since the sender started (s)"), Axis("live heap (MiB)", fmt=_mib),
                 "soak-heap")
    for k, process in enumerate(processes):
        series = process.get("series") or []
        every = -(-len(series) // MAX_SAMPLES) or 1
        drawn = series[::every]
        growth = process.get("growth") or {}
        col = colour(k)
        tip = (f"{process['name']}: RSS growth over the steady state "
               f"{_signed(growth.get('rss_bytes'))} ({_signed(growth.get('rss_bytes_per_min'))}"
               f"/min)")
        rss.line([(s["t_ns"] / 1e9, s["rss_bytes"] / 2**20) for s in drawn], col, tip)
        rss.legend(process["name"], col)
        live = [(s["t_ns"] / 1e9, s["live_heap_bytes"] / 2**20) for s in drawn
                if s.get("live_heap_bytes") is not None]
        if live:
            heap.line(live, col, f"{process['name']}: live heap growth "
                                 f"{_signed(growth.get('live_heap_bytes'))}")
            heap.legend(process["name"], col)
    if steady is not None:
        for chart in (rss, heap):
            chart.shade(steady["start_ns"] / 1e9, steady["end_ns"] / 1e9,
                        "steady state (the growth is fitted here)")
    return [rss, heap]


def _signed(value: float | None) -> str:
    if value is None:
        return "\u2014"
    return ("-" if value < 0 else "+") + format_bytes(int(round(abs(value))))


def gate_table(point: Point, name: str) -> str:
    """The point's gates as an HTML table ('' without gates)."""
    gates = point.gates or []
    if not gates:
        return ""
    rows = []
    for g in gates:
        gate = parse_gate(g["gate"])
        verdict = "passed" if g["passed"] else "FAILED"
        rows.append(f"<tr class=\"gate-{verdict.lower()}\"><td>{escape(g['gate'])}</td>"
                    f"<td>{verdict}</td><td>{escape(shown(gate, g.get('figure')))}</td>"
                    f"<td>{escape(shown(gate, g.get('limit')))}</td>"
                    f"<td>{escape(g['what'])}</td></tr>")
    return (f"<div class=\"wide\"><p><b>{escape(name)}: gates</b></p><table class=\"gates\">"
            "<tr><th>gate</th><th>verdict</th><th>figure</th><th>limit</th><th>what</th></tr>"
            + "".join(rows) + "</table></div>")


def section(runs: Sequence[Run]) -> Section:
    """The soak section: resources over time and the gates."""
    out = Section("soak", "Resources over the run and gates")
    points = [(run, p) for run in runs for p in run.points
              if (p.resources or {}).get("processes") or p.gates]
    if not points:
        return out
    fields = varying([p for _, p in points])
    tags = run_tags(runs)
    for run, point in out.first(points, MAX_POINTS, "points with resources or gates"):
        name = label(point, fields, tags[run.run_id])
        out.add(*charts(point, name))
        table = gate_table(point, name)
        if table:
            out.charts.append(table)
    return out
