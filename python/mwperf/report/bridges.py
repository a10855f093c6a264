"""Plot: bridge vs direct side by side (seed 002): for each transport and payload, at each rate,
the direct path's bar beside each bridge's (bar = p50, dot = p99), so the bridge's own cost is
the gap between neighbouring bars. Points come from --bridge runs (the ``bridges`` scenario)."""

from collections.abc import Sequence

from ..durations import format_ns
from .data import Point, Run
from .section import Section
from .svg import Axis, Chart, colour

DIRECT = "direct"


def section(runs: Sequence[Run]) -> Section:
    """The bridges section (empty without --bridge points)."""
    out = Section("bridges", "Bridge vs direct")
    points = [p for run in runs for p in run.points if p.bridge is not None]
    groups: dict[tuple[str, str], list[Point]] = {}
    for point in points:
        groups.setdefault((str(point.get("transport")), str(point.get("payload"))),
                          []).append(point)
    for (transport, payload), found in sorted(groups.items()):
        names = sorted({p.bridge["name"] for p in found if p.bridge},
                       key=lambda n: (n != DIRECT, n))
        rates = sorted({float(p.get("rate") or 0) for p in found})
        chart = Chart(f"{transport} {payload}: round-trip latency, direct vs bridge "
                      f"(bar p50, ● p99)",
                      Axis("rate", ticks=[(i, f"{r:g} Hz") for i, r in enumerate(rates)]),
                      Axis("latency", fmt=format_ns), f"bridges-{transport}-{payload}")
        width = 0.8 / max(1, len(names))
        for index, name in enumerate(names):
            chart.legend(name, colour(index))
            for point in found:
                if not point.bridge or point.bridge["name"] != name:
                    continue
                x = rates.index(float(point.get("rate") or 0)) - 0.4 + width * (index + 0.5)
                delivered = point.bridge.get("delivered_ratio")
                tip = (f"{name} ({point.bridge.get('path', '')}) at {point.get('rate'):g} Hz: "
                       f"p50 {format_ns(point.get('latency_p50_ns'))}, p99 "
                       f"{format_ns(point.get('latency_p99_ns'))}"
                       + (f", {100 * delivered:.0f} % of the offered rate delivered"
                          if delivered is not None else ""))
                chart.bar(x, width * 0.9, point.get("latency_p50_ns"), colour(index), tip)
                chart.marker(x, point.get("latency_p99_ns"), "#000", f"p99: {tip}")
        out.add(chart)
    return out
