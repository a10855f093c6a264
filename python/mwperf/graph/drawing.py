"""A graph drawn as one self-contained SVG: nodes in columns from the nodes nothing feeds on,
each edge coloured by its p99 as a share of its topic's period (red: over the period, or
messages lost). Shared by graph.html (page.py) and ``mwperf report`` (report/graphs.py), which
hand it the same marks, made from a graph-result or from the catalogue's graph tables.

Large graphs stay readable: past ``COMPACT_ROWS`` nodes in one column the boxes shrink, names
are shortened in the box (whole in the read-out), and every edge and node has a read-out."""

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..durations import format_ns

COLOURS = (("#2e7d32", "p99 under 20 % of the period"), ("#f9a825", "p99 20-100 % of it"),
           ("#c62828", "p99 over the period, or messages lost"), ("#9e9e9e", "nothing measured"))
COMPACT_ROWS = 16
"""more nodes than this in one column: the compact layout"""


@dataclass(frozen=True)
class Layout:
    """Sizes in pixels: column pitch, row pitch, node box, margin, font, name length."""

    column_w: int
    row_h: int
    node_w: int
    node_h: int
    margin: int = 20
    font: int = 11
    name_chars: int = 22


ROOMY = Layout(190, 54, 150, 30)
COMPACT = Layout(260, 24, 132, 18, font=9, name_chars=24)
"""past COMPACT_ROWS: small boxes, wider gaps between the columns for the many edges"""


@dataclass(frozen=True)
class NodeMark:
    """A node as drawn."""

    name: str
    status: str
    cpu_percent: float | None = None


@dataclass(frozen=True)
class EdgeMark:
    """An edge as drawn: what colours it and its read-out."""

    topic: str
    source: str
    target: str
    period_ns: int | None
    received: int | None
    """None: its subscriber reported nothing"""
    lost: int | None
    p50_ns: int | None
    p99_ns: int | None
    """None: nothing arrived to measure"""
    call: bool = False
    """a call edge (client -> server of ``topic``, the service): drawn dashed; received =
    answered, lost = timed out or failed, latency the calls' (from their intended time)"""


def marks(result: dict[str, Any]) -> tuple[list[NodeMark], list[EdgeMark]]:
    """The marks of a graph-result's nodes, edges and call edges."""
    nodes = [NodeMark(n["name"], n["status"], n.get("cpu_percent")) for n in result["nodes"]]
    edges = []
    for e in result["edges"]:
        latency = e.get("latency") or {}
        edges.append(EdgeMark(e["topic"], e["from"], e["to"], e.get("period_ns"),
                              e.get("received"), e.get("lost"), latency.get("p50_ns"),
                              latency.get("p99_ns")))
    for c in result.get("calls") or []:
        if c.get("server") is None:
            continue  # nobody serves it: no second end to draw (the summary says so)
        latency = c.get("latency") or {}
        edges.append(call_mark(c["service"], c["client"], c["server"], c.get("period_ns"),
                               c.get("answered"), failed(c), latency.get("p50_ns"),
                               latency.get("p99_ns")))
    return nodes, edges


def failed(call: dict[str, Any]) -> int | None:
    """A call edge's calls that got no answer: timed out or failed (None: not counted)."""
    counts = [call.get(k) for k in ("timeouts", "errors")]
    return None if all(c is None for c in counts) else sum(c or 0 for c in counts)


def call_mark(service: str, client: str, server: str, period_ns: int | None,
              answered: int | None, failed_calls: int | None, p50_ns: int | None,
              p99_ns: int | None) -> EdgeMark:
    """A call edge as drawn (from a graph result or the catalogue's graph_calls row)."""
    return EdgeMark(service, client, server, period_ns, answered, failed_calls, p50_ns, p99_ns,
                    call=True)


def share(edge: EdgeMark) -> float:
    """p99 / period, the sort key worst first (nothing arrived though expected: infinite)."""
    if edge.p99_ns is None or not edge.period_ns:
        return float("inf") if edge.received == 0 else 0.0
    return edge.p99_ns / edge.period_ns


def colour(edge: EdgeMark) -> str:
    if edge.p99_ns is None:
        return COLOURS[3][0] if edge.received is None else COLOURS[2][0]
    if edge.lost:
        return COLOURS[2][0]
    worst = share(edge)
    return COLOURS[0][0] if worst < 0.2 else COLOURS[1][0] if worst < 1 else COLOURS[2][0]


def legend_html() -> str:
    """The colours' meaning, one HTML line (and the dashes')."""
    return " ".join(f'<span style="color:{c}">&#9632;</span> {html.escape(text)}'
                    for c, text in COLOURS) + "; dashed: a client's calls of a service"


def columns(names: Sequence[str], edges: Iterable[EdgeMark]) -> dict[str, int]:
    """Each node's column: its distance from the nodes nothing feeds (cycles are cut where
    they close)."""
    feeds: dict[str, set[str]] = {n: set() for n in names}
    fed = {n: 0 for n in names}
    for e in edges:
        if e.target not in feeds[e.source] and e.source != e.target:
            feeds[e.source].add(e.target)
            fed[e.target] += 1
    column: dict[str, int] = {}
    frontier = [n for n in names if fed[n] == 0] or list(names[:1])
    depth = 0
    while frontier:
        for n in frontier:
            column.setdefault(n, depth)
        depth += 1
        frontier = sorted({m for n in frontier for m in feeds[n] if m not in column})
    for n in names:  # parts of the graph only a cycle reaches
        column.setdefault(n, depth)
    return column


def draw(nodes: Sequence[NodeMark], edges: Sequence[EdgeMark], data_tips: bool = False,
         name: str = "graph") -> str:
    """The graph as an ``<svg>`` element. Read-outs are ``<title>`` elements, or with
    ``data_tips`` ``data-tip`` attributes (the report's hover script) on elements of class
    ``datum`` (so a test can count what was drawn)."""
    column = columns([n.name for n in nodes], edges)
    rows: dict[int, list[str]] = {}
    for node in sorted(column, key=lambda n: (column[n], n)):
        rows.setdefault(column[node], []).append(node)
    tallest = max((len(v) for v in rows.values()), default=1)
    size = COMPACT if tallest > COMPACT_ROWS else ROOMY
    where = {node: (size.margin + c * size.column_w, size.margin + r * size.row_h)
             for c, names in rows.items() for r, node in enumerate(names)}
    width = size.margin * 2 + max(rows, default=0) * size.column_w + size.node_w
    height = size.margin * 2 + tallest * size.row_h
    out = [f'<svg class="graph" data-chart="{html.escape(name)}" xmlns="http://www.w3.org/2000/svg"'
           f' width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'font-family="sans-serif" font-size="{size.font}">']
    bend = size.row_h * 0.8
    for e in edges:
        (x1, y1), (x2, y2) = where[e.source], where[e.target]
        sx, sy, tx, ty = x1 + size.node_w, y1 + size.node_h / 2, x2, y2 + size.node_h / 2
        if tx <= sx:  # backwards (a cycle) or within a column: bend around
            path = f"M{sx},{sy} C{sx + 60},{sy - bend} {tx - 60},{ty - bend} {tx},{ty}"
        else:
            path = f"M{sx},{sy} C{(sx + tx) / 2},{sy} {(sx + tx) / 2},{ty} {tx},{ty}"
        what = f"calls of {e.topic}" if e.call else e.topic
        tip = (f"{what}: {e.source} -> {e.target}; p50 {format_ns(e.p50_ns)}, p99 "
               f"{format_ns(e.p99_ns)}" + (f" ({share(e):.0%} of the period)"
                                           if e.period_ns else "")
               + (f", unanswered {e.lost}" if e.call else f", lost {e.lost}")
               if e.p99_ns is not None else f"{what}: {e.source} -> {e.target}; nothing "
               "measured" + (" (nothing arrived)" if e.received == 0 else ""))
        dashes = ' stroke-dasharray="6 4"' if e.call else ""
        out.append(_element("path", f'd="{path}" fill="none" stroke="{colour(e)}" '
                            f'stroke-width="{2 if size is ROOMY else 1}"{dashes} '
                            f'opacity="{0.8 if size is ROOMY else 0.6}"',
                            tip, data_tips))
    for n in nodes:
        x, y = where[n.name]
        stroke = "#c62828" if n.status != "complete" else "#37474f"
        cpu = f", {n.cpu_percent:.1f} % CPU" if n.cpu_percent is not None else ""
        status = f" ({n.status})" if n.status != "complete" else ""
        shown = n.name if len(n.name) <= size.name_chars else n.name[:size.name_chars - 1] + "…"
        box = (f'<rect x="{x}" y="{y}" width="{size.node_w}" height="{size.node_h}" rx="5" '
               f'fill="#eceff1" stroke="{stroke}"/><text x="{x + size.node_w / 2}" '
               f'y="{y + size.node_h / 2 + size.font * 0.36:.1f}" text-anchor="middle">'
               f'{html.escape(shown)}</text>')
        out.append(_element("g", "", n.name + status + cpu, data_tips, box))
    out.append("</svg>")
    return "".join(out)


def _element(tag: str, attributes: str, tip: str, data_tips: bool, inner: str = "") -> str:
    space = " " if attributes else ""
    if data_tips:
        return (f'<{tag} class="datum"{space}{attributes} data-tip="{html.escape(tip)}">'
                f'{inner}</{tag}>')
    return f"<{tag}{space}{attributes}><title>{html.escape(tip)}</title>{inner}</{tag}>"
