"""Section: graph runs (``mwperf run --graph``, a scenario's graph points), from the
catalogue's graph tables (graph_data.py). Per graph run: the graph drawn (graph/drawing.py, each
edge coloured by its p99 as a share of its topic's period), its chains' latency broken down by
hop, its edges worst first (p99 / period) and, with ``--baseline``, what the rest of the graph
cost the part that ran alone first. :func:`edge_rows` gives the same edges to the Markdown, CSV
and JSON formats."""

import csv
import io
from collections.abc import Sequence
from html import escape
from typing import Any

from ..durations import format_ns
from ..graph.drawing import draw, legend_html, share
from ..show.graph import count_text, rate_text
from .data import Run
from .graph_calls import calls_markdown, calls_table
from .graph_data import GraphRun
from .section import Section
from .svg import Axis, Chart, colour

MAX_GRAPHS = 24
"""graph runs drawn in one report (a sweep of graph points can have many)"""
STAGE_GREYS = ("#90a4ae", "#cfd8dc")
EDGE_FIELDS = ("graph_id", "topic", "from_node", "to_node", "period_ns", "sent", "received",
               "lost", "latency_p50_ns", "latency_p90_ns", "latency_p99_ns", "latency_max_ns",
               "p99_share", "age_p50_ns", "age_p99_ns", "jitter_ns", "late", "too_late",
               "offered_per_s", "achieved_per_s", "payload_bytes", "alone_p99_ns",
               "in_graph_p99_ns")
"""the columns of the edges table in CSV and JSON (raw: nanoseconds, per second)"""


def graph_runs(runs: Sequence[Run]) -> list[GraphRun]:
    """Every graph run of ``runs``, in order."""
    return [g for run in runs for g in run.graphs]


def worst_first(graph: GraphRun) -> list[dict[str, Any]]:
    """The graph run's edges rows, the highest p99 / period first (nothing arrived first of
    all)."""
    marks = graph.marks()[1][:len(graph.edges)]  # the edges (the call edges follow them)
    order = sorted(range(len(marks)), key=lambda i: share(marks[i]), reverse=True)
    return [graph.edges[i] for i in order]


def edge_rows(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """Every graph edge of ``runs`` (worst first within each graph run), raw values."""
    return [{k: e.get(k) for k in EDGE_FIELDS} for g in graph_runs(runs) for e in worst_first(g)]


def section(runs: Sequence[Run]) -> Section:
    """The graphs section (empty without graph runs)."""
    out = Section("graphs", "Graphs")
    found = out.first(graph_runs(runs), MAX_GRAPHS, "graph runs")
    out.charts += [_block(g) for g in found]
    if found:
        out.note = " ".join(filter(None, (out.note, (
            "Hover an edge or node for its figures. Every edge, chain and node: mwperf query "
            "\"SELECT * FROM graph_edges WHERE graph_id = '...'\" (also graph_runs, "
            "graph_chains, graph_nodes)."))))
    return out


def _block(g: GraphRun) -> str:
    r = g.row
    nodes, edges = g.marks()
    parts = [f'<div class="graph-run" id="graph-{escape(g.graph_id)}" '
             f'data-graph="{escape(g.graph_id)}">',
             f"<h3>{escape(str(r['graph_name']))} over {escape(str(r['transport']))}"
             f"{' (link ' + escape(str(r['link'])) + ')' if r.get('link') else ''}: "
             f"<code>{escape(g.graph_id)}</code></h3>",
             f'<p class="note">{escape(_facts(r))}</p>',
             f'<div class="wide">{draw(nodes, edges, data_tips=True, name="graph-" + g.graph_id)}'
             f'</div><p class="note">{legend_html()}</p>']
    chart = _chains(g)
    if chart is not None:
        parts.append(chart.render())
    if g.edges or not g.calls:
        parts.append(_edges_table(g))
    parts.append(calls_table(g.graph_id, g.calls))
    parts.append(_interference(g))
    parts.append("</div>")
    return "".join(parts)


def _facts(r: dict[str, Any]) -> str:
    facts = [f"{r['nodes']} nodes, {r['topics']} topics, {r['edges']} edges, "
             f"{r['chains']} chain{'s' if r['chains'] != 1 else ''}", str(r["status"])
             + (f" ({r['status_reason']})" if r.get("status_reason") else "")]
    if r.get("discovery_ns") is not None:
        facts.append(f"all matched after {format_ns(r['discovery_ns'])} (slowest node), every "
                     f"node ready after {r['ready_s']:.2f} s")
    if (r.get("copies") or 1) != 1 or (r.get("rate_scale") or 1.0) != 1.0:
        facts.append(f"{r['copies']} copies at {r['rate_scale']:g}x the rates")
    if r.get("without_nodes"):
        facts.append(f"without {r['without_nodes']}")
    if r.get("scenario"):
        facts.append(f"point {r['point_index'] if r.get('point_index') is not None else '?'} of "
                     f"{r['scenario']} (run {r['run_id']})")
    facts.append(f"{r['edges_lost']} messages lost over all edges")
    return "; ".join(facts)


def _chains(g: GraphRun) -> Chart | None:
    """Per chain a stacked bar of its hops' p50s (the stage's own time, then the hop), with
    the measured end to end p50 and p99 beside it (p50s of different messages do not add up
    to the end to end p50 exactly)."""
    if not g.chains:
        return None
    chart = Chart(f"{g.row['graph_name']}: chain latency by hop (p50s stacked; ● end to end "
                  "p50, ○ p99)",
                  Axis("chain", ticks=[(i, str(c["name"])) for i, c in enumerate(g.chains)]),
                  Axis("latency", fmt=format_ns), f"graph-chains-{g.graph_id}")
    for i, c in enumerate(g.chains):
        top = 0.0
        for h, hop in enumerate(c["hops"]):
            for ns, col, what in ((hop.get("stage_p50_ns"), STAGE_GREYS[h % 2], "stage before"),
                                  (hop.get("latency_p50_ns"), colour(h), "hop")):
                if not ns:
                    continue
                chart.bar(i, 0.5, top + ns, col, f"{c['name']}: {what} {hop['topic']}: p50 "
                          f"{format_ns(ns)} (up to {format_ns(top + ns)})", base=top)
                top += ns
        deadline = (f", deadline {format_ns(c['deadline_ns'])}, {c['over_deadline']} over it"
                    if c.get("deadline_ns") else "")
        tip = (f"{c['name']} ({c['topics']}): end to end p50 {format_ns(c['e2e_p50_ns'])}, p99 "
               f"{format_ns(c['e2e_p99_ns'])}, max {format_ns(c['e2e_max_ns'])} over "
               f"{c['e2e_count']} messages{deadline}")
        if c.get("e2e_p50_ns") is not None:
            chart.marker(i + 0.35, c["e2e_p50_ns"], "#000", tip)
            chart.marker(i + 0.35, c["e2e_p99_ns"], "#000", tip, shape="ring")
    chart.legend("stage's own time (p50)", STAGE_GREYS[0])
    chart.legend("hop latency (p50)", colour(0))
    return chart


def _edges_table(g: GraphRun) -> str:
    head = ("topic", "from", "to", "period", "p50", "p90", "p99", "p99/period", "max",
            "age p99", "jitter", "lost", "late", "too late", "achieved/offered")
    lines = []
    for e in worst_first(g):
        nothing = e["latency_p99_ns"] is None
        cells = [e["topic"], e["from_node"], e["to_node"], format_ns(e["period_ns"]),
                 *(("—",) * 4 if nothing else (
                     format_ns(e["latency_p50_ns"]), format_ns(e["latency_p90_ns"]),
                     format_ns(e["latency_p99_ns"]),
                     f"{e['p99_share']:.1%}" if e["p99_share"] is not None else "—")),
                 "—" if nothing else format_ns(e["latency_max_ns"]),
                 format_ns(e["age_p99_ns"]) if e["age_p99_ns"] is not None else "—",
                 format_ns(e["jitter_ns"]) if e["jitter_ns"] is not None else "—",
                 count_text(e["lost"]), count_text(e["late"]), count_text(e["too_late"]), rate_text(e)]
        lost = ' class="lost"' if e["lost"] else ""
        lines.append(f"<tr{lost}>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells)
                     + "</tr>")
    return (f'<p><b>Edges, worst first</b> <span class="note">(p99 as a share of the topic\'s '
            f'period)</span></p><div class="wide scroll"><table class="graph-edges" '
            f'data-graph="{escape(g.graph_id)}"><tr>' + "".join(f"<th>{h}</th>" for h in head)
            + "</tr>" + "".join(lines) + "</table></div>")


def _interference(g: GraphRun) -> str:
    """The baseline's edges and chains: p50 and p99 alone, then in the graph ("" without)."""
    if not g.row.get("baseline"):
        return ""
    items = [(f"{e['topic']} {e['from_node']} → {e['to_node']}", e) for e in g.edges]
    items += [(f"chain {c['name']}", c) for c in g.chains]
    lines = []
    for label, item in items:
        if item.get("alone_p99_ns") is None and item.get("in_graph_p99_ns") is None:
            continue
        both = item.get("alone_p99_ns") is not None and item.get("in_graph_p99_ns") is not None
        delta = item["in_graph_p99_ns"] - item["alone_p99_ns"] if both else None
        cells = (label, format_ns(item.get("alone_p50_ns")), format_ns(item.get("in_graph_p50_ns")),
                 format_ns(item.get("alone_p99_ns")), format_ns(item.get("in_graph_p99_ns")),
                 "not measured both ways" if delta is None
                 else ("+" if delta >= 0 else "-") + format_ns(abs(delta)))
        lines.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells) + "</tr>")
    head = ("edge / chain", "p50 alone", "p50 in graph", "p99 alone", "p99 in graph",
            "p99 change")
    return (f"<p><b>Interference</b>: {escape(str(g.row['baseline']))} alone first, then in the "
            f"whole graph (same run)</p><table class=\"graph-interference\"><tr>"
            + "".join(f"<th>{h}</th>" for h in head) + "</tr>" + "".join(lines) + "</table>")


def markdown(runs: Sequence[Run]) -> str:
    """The graph runs and their edges (worst first) as Markdown ("" without graph runs)."""
    found = graph_runs(runs)
    if not found:
        return ""
    lines = ["", "Graph runs:", "",
             "| graph run | graph | transport | status | nodes | edges | worst p99/period | "
             "lost |", "|---|---|---|---|---|---|---|---|"]
    for g in found:
        r = g.row
        worst = f"{r['worst_p99_share']:.1%}" if r["worst_p99_share"] is not None else "—"
        lines.append(f"| {g.graph_id} | {r['graph_name']} | {r['transport']} | {r['status']} | "
                     f"{r['nodes']} | {r['edges']} | {worst} | {r['edges_lost']} |")
    lines += ["", "Graph edges, worst first:", "",
              "| graph run | topic | from | to | period | p50 | p99 | p99/period | max | lost | "
              "late | too late |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for g in found:
        for e in worst_first(g):
            share_text = f"{e['p99_share']:.1%}" if e["p99_share"] is not None else "—"
            lines.append(f"| {g.graph_id} | {e['topic']} | {e['from_node']} | {e['to_node']} | "
                         f"{format_ns(e['period_ns'])} | {format_ns(e['latency_p50_ns'])} | "
                         f"{format_ns(e['latency_p99_ns'])} | {share_text} | "
                         f"{format_ns(e['latency_max_ns'])} | {count_text(e['lost'])} | "
                         f"{count_text(e['late'])} | {count_text(e['too_late'])} |")
    lines += calls_markdown([(g.graph_id, g.calls) for g in found])
    chains = [(g, c) for g in found for c in g.chains]
    if chains:
        lines += ["", "Graph chains:", "",
                  "| graph run | chain | topics | end to end p50 | p99 | max | over deadline |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| {g.graph_id} | {c['name']} | {c['topics']} | {format_ns(c['e2e_p50_ns'])}"
                  f" | {format_ns(c['e2e_p99_ns'])} | {format_ns(c['e2e_max_ns'])} | "
                  f"{count_text(c['over_deadline'])} |" for g, c in chains]
    return "\n".join(lines) + "\n"


def csv_text(runs: Sequence[Run]) -> str:
    """The graph edges as a second CSV table after a blank line ("" without graph runs)."""
    rows = edge_rows(runs)
    if not rows:
        return ""
    out = io.StringIO()
    writer = csv.DictWriter(out, EDGE_FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return "\n" + out.getvalue()

