"""Plot: the latency distribution as an HDR-style percentile curve per point. The x axis is
1/(1−q) on a log scale, so 50 %, 90 %, 99 %, 99.9 % … are equally spaced and the tail gets the
room it deserves; the curve comes from the HDR histogram stored with the result (never from
the raw samples, so a 10^7-message point costs as little as a 1000-message one)."""

import math
from collections.abc import Sequence

from ..durations import format_ns
from .data import Point, Run
from .labels import describe, label, run_tags, setting_text, varying
from .section import Section
from .svg import Axis, Chart, colour

MAX_CURVES = 24
FACET_ABOVE = 12
"""more curves than this are split into one chart per setting combination"""
STEP = 0.004
"""a curve keeps a bucket only when it moves on by this much in log10(x) (or in value)"""
PERCENTILE_TICKS = ((1.0, "0 %"), (2.0, "50 %"), (10.0, "90 %"), (100.0, "99 %"),
                    (1e3, "99.9 %"), (1e4, "99.99 %"), (1e5, "99.999 %"), (1e6, "99.9999 %"),
                    (1e7, "99.99999 %"), (1e8, "99.999999 %"))


def curve(histogram: Sequence[tuple[int, int]]) -> list[tuple[float, float]]:
    """(1/(1−q), latency) along ``histogram``: each bucket's value is reached just past the
    fraction q of samples below it; the last bucket (the maximum) sits at q = 1 − 1/count."""
    total = sum(count for _, count in histogram)
    if not total:
        return []
    points: list[tuple[float, float]] = []
    below = 0
    for value, count in histogram:
        x = 1.0 / (1.0 - below / total)
        if not points or math.log10(x) - math.log10(points[-1][0]) >= STEP or \
                value > points[-1][1] * (1 + 10 * STEP):
            points.append((x, float(value)))
        below += count
    points.append((float(total), float(histogram[-1][0])))
    return points


def section(runs: Sequence[Run]) -> Section:
    """The percentile-distribution section: one chart, or with more than FACET_ABOVE points one
    chart per combination of the varying settings other than the transport (the transports
    side by side in each)."""
    out = Section("distribution", "Latency distribution (percentiles)")
    points = [(run, p) for run in runs for p in run.points if p.histogram]
    if not points:
        return out
    fields = varying([p for _, p in points])
    tags = run_tags(runs)
    facets: dict[str, list[tuple[Run, Point]]] = {"": points}
    shown_fields = fields
    if len(points) > FACET_ABOVE and len(fields) > 1:
        shown_fields = ["transport"]
        facets = {}
        for run, point in points:
            key = " ".join(setting_text(f, point.get(f)) for f in fields[1:])
            facets.setdefault(key, []).append((run, point))
    left_out = 0
    for title, members in facets.items():
        name = "Response latency by percentile (HDR histogram)"
        chart = Chart(f"{title}: {name[0].lower()}{name[1:]}" if title else name,
                      Axis("percentile", log=True, ticks=PERCENTILE_TICKS),
                      Axis("latency", log=True, fmt=format_ns), "distribution")
        for i, (run, point) in enumerate(members[:MAX_CURVES]):
            col = colour(i)
            text = label(point, shown_fields, tags[run.run_id])
            chart.legend(text, col)
            chart.line(curve(point.histogram), col, tip=text)
            for q, column in ((0.5, "latency_p50_ns"), (0.9, "latency_p90_ns"),
                              (0.99, "latency_p99_ns"), (0.999, "latency_p999_ns")):
                _percentile_marker(chart, point, q, column, col)
        left_out += max(0, len(members) - MAX_CURVES)
        out.add(chart)
    if left_out:
        out.note = (f"{left_out} of {len(points)} points are not drawn (at most {MAX_CURVES} "
                    f"a chart).")
    return out


def _percentile_marker(chart: Chart, point: Point, q: float, column: str, col: str) -> None:
    value = point.get(column)
    count = point.get("latency_count") or 0
    if value is None or count * (1 - q) < 1:
        return
    chart.marker(1 / (1 - q), value, col, f"{describe(point)}\np{q * 100:g}: {format_ns(value)}",
                 size=2.5)
