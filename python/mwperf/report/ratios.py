"""Ratio charts and cells: a figure of one round divided by its baseline of the same round, the
median over the rounds with the lowest and highest as its spread (report/tax.py: each stack over
raw Fast DDS; report/security.py: each mode over plain)."""

import statistics
from collections.abc import Sequence

from .svg import Axis, Chart, colour

SUBTITLE = "(\u25cf median over rounds, line: lowest to highest round)"


def median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def spread(values: Sequence[float] | None) -> str:
    """``x1.50 (1.20–2.00)``: the median ratio and its lowest and highest round; ``-`` for none."""
    if not values:
        return "-"
    middle = statistics.median(values)
    if len(values) == 1:
        return f"x{middle:.2f}"
    return f"x{middle:.2f} ({min(values):.2f}\u2013{max(values):.2f})"


def ratio_chart(title: str, x: Axis, baseline: str, key: str, kinds: Sequence[str]) -> Chart:
    """A chart of ratios to ``baseline`` (log y axis through 1), one legend entry per kind."""
    chart = Chart(f"{title} {SUBTITLE}", x,
                  Axis(f"p50 / {baseline} p50 (log)", log=True, fmt=lambda v: f"x{v:.3g}"), key)
    chart.y.include(1.0)
    for k, kind in enumerate(kinds):
        chart.legend(kind, colour(k))
    return chart


def ratio_point(chart: Chart, x: float, ratios: Sequence[float], k: int, tip: str) -> None:
    """One kind's ratios at ``x``: the median as a marker, the lowest to highest round as a
    line (colour ``k``)."""
    chart.line([(x, min(ratios)), (x, max(ratios))], colour(k),
               f"lowest and highest round: x{min(ratios):.2f}, x{max(ratios):.2f}\n{tip}")
    chart.marker(x, statistics.median(ratios), colour(k), tip)
