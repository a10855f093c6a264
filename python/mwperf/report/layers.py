"""Where the time goes (``--layers``, docs/layers.md): each point's latency split into layers.

A stacked horizontal bar per configuration (the RIOT-ROS2 paper's Fig. 3): the layers whose
share is not null, in the result's order, each as long as its mean share × the mean latency —
so the bar's length is the mean latency and each segment is the time that layer took on
average (means add up exactly because every message's layers add up to its latency; medians
would not, which is why the bar is of means and the table beside it gives p50 and p99).
Repetitions of a configuration are pooled: the mean of their shares × the mean of their mean
latencies. Then the per-layer distributions of each point, from the section's quantiles
(``q_ns`` at ``quantiles``: the stored summary, never per-message data), drawn on the
percentile axis of the distribution section so tails read the same way, and a table of each
layer's p50, p99 and share per point. A layer that cannot be seen (shared memory) is not drawn
and the table says why; points measured with --layers where nothing could be observed are
named in the section's note with what was missing.
"""

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from ..durations import format_ns
from ..layer_names import NAMES, label_of
from .data import Point, Run
from .distribution import PERCENTILE_TICKS
from .labels import describe, label, run_tags, varying
from .section import Section
from .stacked import Segment, StackedBars
from .summary import numbering
from .svg import Axis, Chart, colour

MAX_DISTRIBUTIONS = 8
"""per-layer distribution charts drawn (one per point); the note says how many were left out"""
TOTAL_COLOUR = "#222"


def layer_colour(name: str) -> str:
    """A layer keeps its colour in every bar and chart (by its place in layer_names)."""
    return colour(NAMES.index(name)) if name in NAMES else colour(len(NAMES))


def is_split(point: Point) -> bool:
    """A point with a layers section that split at least one message."""
    return section_split(point.layers)


def section_split(section: dict[str, Any] | None) -> bool:
    """A layers section (a point's, a graph edge's or chain's) that split at least one
    message."""
    section = section or {}
    return (section.get("method") not in (None, "none") and bool(section.get("split"))
            and (section.get("total") or {}).get("mean_ns") is not None)


@dataclass(frozen=True)
class Bar:
    """One configuration's bar: its points (repetitions) and name."""

    name: str
    points: tuple[Point, ...]

    def total_mean(self) -> float:
        """The mean of the points' mean latencies (ns)."""
        return statistics.fmean(float(p.layers["total"]["mean_ns"])  # type: ignore[index]
                                for p in self.points)

    def shares(self) -> list[tuple[str, str, float]]:
        """(name, label, mean share over the points) of the layers with a share, in the
        first point's order (a layer one repetition lacks counts as 0 there)."""
        order: dict[str, str] = {}
        for point in self.points:
            for layer in (point.layers or {}).get("layers") or []:
                if layer.get("share") is not None:
                    order.setdefault(str(layer["name"]), str(layer.get("label")
                                                             or label_of(layer["name"])))
        found = []
        for name, text in order.items():
            values = [next((float(lay["share"]) for lay in (p.layers or {}).get("layers") or []
                            if lay.get("name") == name and lay.get("share") is not None), 0.0)
                      for p in self.points]
            found.append((name, text, statistics.fmean(values)))
        return found


def bars(runs: Sequence[Run]) -> list[Bar]:
    """The split points grouped by configuration (and run, with several), measuring order."""
    split = [(run, p) for run in runs for p in run.points if is_split(p)]
    fields = varying([p for _, p in split])
    tags = run_tags(runs)
    groups: dict[str, list[Point]] = {}
    for run, point in split:
        groups.setdefault(label(point, fields, tags[run.run_id]).split(" #")[0], []).append(point)
    return [Bar(name, tuple(points)) for name, points in groups.items()]


def curve(section: dict[str, Any], q_ns: Sequence[int] | None) -> list[tuple[float, float]]:
    """(1/(1−q), ns) at the section's quantiles; q = 1 (the maximum) sits at 1/(1−q) = the
    messages split, as the distribution section places a point's maximum."""
    quantiles = section.get("quantiles") or []
    split = float(section.get("split") or 0)
    out: list[tuple[float, float]] = []
    for q, value in zip(quantiles, q_ns or []):
        if value is None:
            continue
        x = split if q >= 1 else 1.0 / (1.0 - q)
        if x >= 1 and (not out or x > out[-1][0]):
            out.append((x, float(value)))
    return out


def section(runs: Sequence[Run]) -> Section:
    """The section (empty without layers)."""
    out = Section("layers", "Where the time goes (per-layer latency)")
    found = bars(runs)
    unsplit = [p for run in runs for p in run.points if p.layers and not is_split(p)]
    notes = []
    if unsplit:
        whys = sorted({str(p.layers.get("why_none") or "no message was split")  # type: ignore[union-attr]
                       for p in unsplit})
        notes.append(f"{len(unsplit)} point{'s' if len(unsplit) != 1 else ''} measured with "
                     f"--layers could not be split: {'; '.join(whys)}.")
    if not found:
        out.note = " ".join(notes)
        return out
    chart = StackedBars("Mean latency by layer (each segment: its mean share \u00d7 the mean "
                        "latency)", "layers-stack", "mean latency", format_ns)
    for bar in found:
        total = bar.total_mean()
        reps = f" ({len(bar.points)} repetitions)" if len(bar.points) > 1 else ""
        chart.row(bar.name, [Segment(share * total, layer_colour(name), text,
                                     f"{bar.name}{reps}\n{text}: {format_ns(share * total)} "
                                     f"({100 * share:.1f} % of {format_ns(total)})")
                             for name, text, share in bar.shares()],
                  end=format_ns(total))
    out.charts.append(chart.render())
    points = [p for bar in found for p in bar.points]
    shown = out.first(points, MAX_DISTRIBUTIONS, "per-layer distributions")
    for point in shown:
        out.add(_distribution(point))
    out.charts.append(_table(runs))
    if notes:
        out.note = " ".join(([out.note] if out.note else []) + notes)
    return out


def _distribution(point: Point) -> Chart:
    """One point's layers by percentile (log-log), the measured latency dashed."""
    section = point.layers or {}
    chart = Chart(f"{describe(point)}: each layer by percentile",
                  Axis("percentile", log=True, ticks=PERCENTILE_TICKS),
                  Axis("latency", log=True, fmt=format_ns), "layers-distribution")
    for layer in section.get("layers") or []:
        if layer.get("q_ns") is None:
            continue
        name = str(layer.get("name"))
        text = str(layer.get("label") or label_of(name))
        col = layer_colour(name)
        chart.line(curve(section, layer["q_ns"]), col, tip=f"{text}: p50 "
                   f"{format_ns(layer.get('p50_ns'))}, p99 {format_ns(layer.get('p99_ns'))}")
        chart.legend(text, col)
    total = section.get("total") or {}
    chart.line(curve(section, total.get("q_ns")), TOTAL_COLOUR, dash=True,
               tip=f"measured latency: p50 {format_ns(total.get('p50_ns'))}")
    chart.legend("measured latency", TOTAL_COLOUR)
    return chart


def rows(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """One row per point with a layers section (raw values: ns, shares as fractions), numbered
    as in the summary table."""
    numbers = numbering(runs)
    out = []
    for run in runs:
        for point in run.points:
            section = point.layers
            if not section:
                continue
            out.append({
                "number": numbers[point.point_id], "point_id": point.point_id,
                "point": describe(point), "method": section.get("method"),
                "why_none": section.get("why_none"), "kind": section.get("kind"),
                "messages": section.get("messages"), "split": section.get("split"),
                "total_p50_ns": (section.get("total") or {}).get("p50_ns"),
                "total_mean_ns": (section.get("total") or {}).get("mean_ns"),
                "layers": {str(layer.get("name")): {
                    key: layer.get(key) for key in ("observable", "note", "p50_ns", "p99_ns",
                                                    "mean_ns", "share")}
                    for layer in section.get("layers") or []}})
    return out


def _columns(table: list[dict[str, Any]]) -> list[str]:
    """The layer names any row has, in layer_names' order (unknown ones after)."""
    present = {name for row in table for name in row["layers"]}
    return [n for n in NAMES if n in present] + sorted(present - set(NAMES))


def _cell(layer: dict[str, Any] | None) -> str:
    if layer is None:
        return "\u2014"
    if layer.get("observable") is False or layer.get("p50_ns") is None:
        return "not observable"
    share = layer.get("share")
    return (f"{format_ns(layer['p50_ns'])} / {format_ns(layer.get('p99_ns'))}"
            + (f" ({100 * share:.0f} %)" if share is not None else ""))


def _head(columns: list[str]) -> list[str]:
    return ["#", "point", "split", *(label_of(c) for c in columns), "measured p50"]


def _cells(row: dict[str, Any], columns: list[str]) -> list[str]:
    if row["method"] == "none":
        split = f"none: {row['why_none'] or 'not observed'}"
    else:
        split = f"{row['split'] or 0:,} of {row['messages'] or 0:,}"
    return [f"#{row['number']}", row["point"], split,
            *(_cell(row["layers"].get(c)) for c in columns), format_ns(row["total_p50_ns"])]


NUMERIC = ' class="num"'


def _tip(text: str) -> str:
    return f' data-tip="{escape(text)}"' if text else ""


def _table(runs: Sequence[Run]) -> str:
    table = rows(runs)
    columns = _columns(table)
    body = ""
    for row in table:
        cells = _cells(row, columns)
        tips = ["", "", "", *(str((row["layers"].get(c) or {}).get("note") or "")
                              for c in columns), ""]
        body += "<tr>" + "".join(
            f"<td{NUMERIC if i >= 2 else ''}{_tip(tip)}>{escape(c)}</td>"
            for i, (c, tip) in enumerate(zip(cells, tips))) + "</tr>"
    return ('<div class="wide"><p class="note">Each layer: p50 / p99 (share of the mean '
            "latency). Round trips: each layer summed over both directions. Not observable: no "
            "system call carries the message there (shared memory); hover for the reason.</p>"
            '<table class="layers"><tr>' + "".join(f"<th>{escape(h)}</th>"
                                                   for h in _head(columns))
            + "</tr>" + body + "</table></div>")


def markdown(runs: Sequence[Run]) -> str:
    """Each point's layers as a Markdown table ("" without layers)."""
    table = rows(runs)
    if not table:
        return ""
    columns = _columns(table)
    head = _head(columns)
    lines = ["", "Where the time goes (per layer: p50 / p99 (share of the mean latency)):", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in _cells(row, columns)) + " |"
              for row in table]
    return "\n".join(lines) + "\n"
