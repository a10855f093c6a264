"""A graph result as one self-contained HTML page: the graph drawn (drawing.py: nodes in columns
from the publishers on, each edge coloured by its p99 as a share of its topic's period), each
chain's end-to-end latency broken down by hop (the stage's own time and the hop's latency), the
edges worst first, and the interference measured with --baseline."""

import html
from typing import Any

from ..durations import format_ns
from .drawing import draw, legend_html, marks
from ..show.graph import _share


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
    body = [f"<h1>{e(g['name'])} over {e(result['config']['transport'])}</h1>",
            f"<p>{g['nodes']} nodes, {g['topics']} topics, {g['edges']} edges; "
            f"{e(result['status'])}{': ' + e(result['status_reason']) if result['status_reason'] else ''}"
            f"; run {e(result['run_id'])}</p>", draw(*marks(result)), f"<p>{legend_html()}</p>"]
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
