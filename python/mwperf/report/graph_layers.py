"""Section: where the time goes in a graph (``mwperf run --graph G --layers``, docs/graphs.md
"Per-layer latency"), from the catalogue's graph tables (their ``layers`` column: each edge's
and chain's section as the result has it). Per graph run one stacked bar chart, as the layers
section draws a point (report/layers.py): a bar per chain (from its origin's intended time to
the last subscriber's callback) and per edge, each segment a layer's mean share x the mean
latency, so a bar is as long as its mean latency and the segments add up to it. Edges and
chains measured with --layers whose messages could not be split are named in the note with
why."""

from collections.abc import Sequence
from typing import Any

from ..durations import format_ns
from ..layer_names import label_of
from .data import Run
from .graph_data import GraphRun
from .layers import layer_colour, section_split
from .section import Section
from .stacked import Segment, StackedBars

MAX_GRAPHS = 8
"""graph runs drawn (a sweep of graph points can have many); the note says how many were left"""


def section(runs: Sequence[Run]) -> Section:
    """The section (empty without a graph run measured with --layers)."""
    out = Section("graph-layers", "Where the time goes in graphs (per-layer latency)")
    graphs = [g for run in runs for g in run.graphs]
    found = [g for g in graphs if any(section_split(f.get("layers")) for f in _flows(g))]
    whys = sorted({str((f["layers"] or {}).get("why_none") or "no message was split")
                   for g in graphs for f in _flows(g)
                   if f.get("layers") and not section_split(f["layers"])})
    for index, graph in enumerate(out.first(found, MAX_GRAPHS, "graph runs with layers")):
        out.charts.append(_chart(graph, index).render())
    if whys:
        out.note = " ".join(filter(None, (out.note, "Edges or chains measured with --layers "
                                          f"that could not be split: {'; '.join(whys)}.")))
    return out


def _flows(graph: GraphRun) -> list[dict[str, Any]]:
    return [*graph.chains, *graph.edges]


def _chart(graph: GraphRun, index: int) -> StackedBars:
    name = f"{graph.row.get('graph_name')} over {graph.row.get('transport')} ({graph.graph_id})"
    chart = StackedBars(f"{name}: mean latency by layer (each segment: its mean share \u00d7 "
                        "the mean latency)", f"graph-layers-{index}", "mean latency", format_ns)
    for chain in graph.chains:
        if section_split(chain.get("layers")):
            _bar(chart, f"chain {chain['name']}", chain["layers"])
    for edge in graph.edges:
        if section_split(edge.get("layers")):
            _bar(chart, f"{edge['topic']} {edge['from_node']} \u2192 {edge['to_node']}",
                 edge["layers"])
    return chart


def _bar(chart: StackedBars, name: str, layers: dict[str, Any]) -> None:
    total = float(layers["total"]["mean_ns"])
    segments = []
    for layer in layers.get("layers") or []:
        share = layer.get("share")
        if share is None:
            continue
        text = str(layer.get("label") or label_of(layer["name"]))
        segments.append(Segment(share * total, layer_colour(str(layer["name"])), text,
                                f"{name}\n{text}: {format_ns(share * total)} "
                                f"({100 * share:.1f} % of {format_ns(total)}); p50 "
                                f"{format_ns(layer.get('p50_ns'))}, p99 "
                                f"{format_ns(layer.get('p99_ns'))}"))
    chart.row(name, segments, end=format_ns(total))
