"""A graph result as one self-contained HTML page: the graph drawn (nodes in columns from the
publishers on, each edge coloured by its p99 as a share of its topic's period), each chain's
end-to-end latency broken down by hop (the stage's own time and the hop's latency), the edges
worst first, and the interference measured with --baseline."""

import html
from typing import Any

from ..durations import format_ns
from .table import _share

COLUMN_W, ROW_H, NODE_W, NODE_H, MARGIN = 190, 54, 150, 30, 20
COLOURS = (("#2e7d32", "p99 under 20 % of the period"), ("#f9a825", "p99 20-100 % of it"),
           ("#c62828", "p99 over the period, or messages lost"), ("#9e9e9e", "nothing measured"))


def colour(edge: dict[str, Any]) -> str:
    if not edge.get("latency"):
        return COLOURS[3][0] if edge.get("received") is None else COLOURS[2][0]
    if edge.get("lost"):
        return COLOURS[2][0]
    share = _share(edge)
    return COLOURS[0][0] if share < 0.2 else COLOURS[1][0] if share < 1 else COLOURS[2][0]


def columns(result: dict[str, Any]) -> dict[str, int]:
    """Each node's column: its distance from the nodes nothing feeds (cycles are cut where
    they close)."""
    names = [n["name"] for n in result["nodes"]]
    feeds: dict[str, set[str]] = {n: set() for n in names}
    fed = {n: 0 for n in names}
    for e in result["edges"]:
        if e["to"] not in feeds[e["from"]] and e["from"] != e["to"]:
            feeds[e["from"]].add(e["to"])
            fed[e["to"]] += 1
    column: dict[str, int] = {}
    frontier = [n for n in names if fed[n] == 0] or names[:1]
    depth = 0
    while frontier:
        for n in frontier:
            column.setdefault(n, depth)
        depth += 1
        frontier = sorted({m for n in frontier for m in feeds[n] if m not in column})
    for n in names:  # parts of the graph only a cycle reaches
        column.setdefault(n, depth)
    return column


def svg(result: dict[str, Any]) -> str:
    column = columns(result)
    rows: dict[int, list[str]] = {}
    for name in sorted(column, key=lambda n: (column[n], n)):
        rows.setdefault(column[name], []).append(name)
    where = {name: (MARGIN + c * COLUMN_W, MARGIN + r * ROW_H)
             for c, names in rows.items() for r, name in enumerate(names)}
    width = MARGIN * 2 + max(rows, default=0) * COLUMN_W + NODE_W
    height = MARGIN * 2 + max((len(v) for v in rows.values()), default=1) * ROW_H
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="11">']
    for e in result["edges"]:
        (x1, y1), (x2, y2) = where[e["from"]], where[e["to"]]
        sx, sy, tx, ty = x1 + NODE_W, y1 + NODE_H / 2, x2, y2 + NODE_H / 2
        if tx <= sx:  # backwards (a cycle) or within a column: bend around
            path = (f"M{sx},{sy} C{sx + 60},{sy - 40} {tx - 60},{ty - 40} {tx},{ty}")
        else:
            path = f"M{sx},{sy} C{(sx + tx) / 2},{sy} {(sx + tx) / 2},{ty} {tx},{ty}"
        lat = e.get("latency")
        tip = (f"{e['topic']}: {e['from']} -> {e['to']}; p50 {format_ns(lat['p50_ns'])}, p99 "
               f"{format_ns(lat['p99_ns'])}, lost {e.get('lost')}" if lat
               else f"{e['topic']}: {e['from']} -> {e['to']}; nothing measured")
        out.append(f'<path d="{path}" fill="none" stroke="{colour(e)}" stroke-width="2" '
                   f'opacity="0.8"><title>{html.escape(tip)}</title></path>')
    for n in result["nodes"]:
        x, y = where[n["name"]]
        stroke = "#c62828" if n["status"] != "complete" else "#37474f"
        cpu = f", {n['cpu_percent']:.1f} % CPU" if n.get("cpu_percent") is not None else ""
        out.append(f'<g><title>{html.escape(n["name"] + cpu)}</title><rect x="{x}" y="{y}" '
                   f'width="{NODE_W}" height="{NODE_H}" rx="6" fill="#eceff1" '
                   f'stroke="{stroke}"/><text x="{x + NODE_W / 2}" y="{y + 19}" '
                   f'text-anchor="middle">{html.escape(n["name"][:22])}</text></g>')
    out.append("</svg>")
    return "".join(out)


def chain_bars(chain: dict[str, Any]) -> str:
    """One horizontal bar: each hop's stage time and latency (p50s), to scale."""
    parts: list[tuple[str, int, str]] = []
    for hop in chain["hops"]:
        if hop.get("stage_p50_ns"):
            parts.append((f"stage before {hop['topic']}", hop["stage_p50_ns"], "#90a4ae"))
        if hop.get("latency_p50_ns"):
            parts.append((f"{hop['topic']} hop", hop["latency_p50_ns"], "#42a5f5"))
    total = sum(ns for _, ns, _ in parts) or 1
    x, out = 0.0, ['<svg xmlns="http://www.w3.org/2000/svg" width="620" height="26">']
    for label, ns, fill in parts:
        w = 600 * ns / total
        out.append(f'<rect x="{x:.1f}" y="3" width="{w:.1f}" height="20" fill="{fill}" '
                   f'stroke="#fff"><title>{html.escape(label)}: {format_ns(ns)}</title></rect>')
        x += w
    out.append("</svg>")
    return "".join(out)


def render(result: dict[str, Any]) -> str:
    g = result["graph"]
    e = html.escape
    legend = " ".join(f'<span style="color:{c}">&#9632;</span> {e(text)}'
                      for c, text in COLOURS)
    body = [f"<h1>{e(g['name'])} over {e(result['config']['transport'])}</h1>",
            f"<p>{g['nodes']} nodes, {g['topics']} topics, {g['edges']} edges; "
            f"{e(result['status'])}{': ' + e(result['status_reason']) if result['status_reason'] else ''}"
            f"; run {e(result['run_id'])}</p>", svg(result), f"<p>{legend}</p>"]
    for chain in result["chains"]:
        e2e = chain["end_to_end"]
        head = (f"end to end p50 {format_ns(e2e['p50_ns'])}, p99 {format_ns(e2e['p99_ns'])}"
                if e2e else "nothing arrived at its end")
        body += [f"<h2>Chain {e(chain['name'])}: {e(' → '.join(chain['topics']))}</h2>",
                 f"<p>{head}; p50 by hop (grey: the stage's own time, blue: the hop):</p>",
                 chain_bars(chain)]
    rows = ["<tr><th>topic</th><th>from</th><th>to</th><th>period</th><th>p50</th><th>p99</th>"
            "<th>max</th><th>lost</th><th>late</th><th>too late</th></tr>"]
    for edge in sorted(result["edges"], key=_share, reverse=True):
        lat = edge.get("latency") or {}
        rows.append("<tr>" + "".join(f"<td>{e(str(v))}</td>" for v in (
            edge["topic"], edge["from"], edge["to"],
            format_ns(edge["period_ns"]) if edge["period_ns"] else "-",
            format_ns(lat.get("p50_ns")) if lat else "-",
            format_ns(lat.get("p99_ns")) if lat else "-",
            format_ns(lat.get("max_ns")) if lat else "-",
            edge.get("lost"), edge.get("late"), edge.get("too_late"))) + "</tr>")
    body += ["<h2>Edges, worst first</h2>", f"<table>{''.join(rows)}</table>"]
    base = result.get("baseline")
    if base:
        body.append(f"<h2>Interference: {e(base['what'])} alone, then in the graph</h2><ul>")
        for item in base["edges"]:
            if item["alone"] and item["in_graph"]:
                body.append(f"<li>{e(item['topic'])} {e(item['from'])} → {e(item['to'])}: p99 "
                            f"{format_ns(item['alone']['p99_ns'])} alone, "
                            f"{format_ns(item['in_graph']['p99_ns'])} in the graph</li>")
        body.append("</ul>")
    style = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 6px;font-size:12px}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{e(g['name'])}</title>"
            f"<style>{style}</style></head><body>{''.join(body)}</body></html>\n")
