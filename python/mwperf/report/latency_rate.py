"""Plot: response latency against the message rate, one colour per transport/setting group —
the p50 as a line, the p90–p99 range as a band, the maximum as crosses, and the saturation
knee (the scenario module's definition, see knee.py) as a marked point with a dashed line
when the group is a rate sweep.
Points run as fast as possible (rate 0) sit at the rate they achieved, as rings outside the
line (their rate was an outcome, not a setting). Repetitions of a rate each get their markers;
the line and band follow their medians."""

from collections.abc import Sequence

from ..durations import format_ns
from ..show.table import format_rate
from .data import Run
from .groups import Group, by_rate, rate_facets, x_rate
from .knee import describe as describe_knee
from .knee import group_knee
from .labels import describe
from .section import Section
from .svg import Axis, Chart, colour


def section(runs: Sequence[Run]) -> Section:
    """The latency-vs-rate section: one chart per facet (empty when nothing was measured)."""
    out = Section("latency-rate", "Latency vs rate")
    knees: list[str] = []
    for facet in rate_facets(runs):
        title = "Response latency vs rate"
        out.add(_chart(f"{facet.title}: {title.lower()}" if facet.title else title,
                       facet.groups, knees))
    if out.charts:
        out.note = ("Line: p50; band: p90–p99; ×: max; ○: run as fast as possible, at the rate "
                    "it achieved; □: mean, for imports without percentiles; ◆ and dashed line: "
                    "the knee, the highest rate up to which p99 stays below the period and "
                    "loss below 1 % (repetitions by their median). "
                    + ("; ".join(knees) if knees else
                       "No rate sweep among these points."))
    return out


def _chart(title: str, groups: list[Group], knees: list[str]) -> Chart:
    chart = Chart(title, Axis("rate (messages/s; 'max' points at the rate achieved)", log=True,
                              fmt=_rate_tick),
                  Axis("latency", log=True, fmt=format_ns), "latency-rate")
    for i, group in enumerate(groups):
        col = colour(i)
        chart.legend(group.name, col)
        rows = [(x_rate(p), p) for p in group.points if x_rate(p) is not None]
        chart.line(by_rate(group.points, "latency_p50_ns"), col, tip=f"{group.name}: p50")
        low, high = by_rate(group.points, "latency_p90_ns"), by_rate(group.points,
                                                                     "latency_p99_ns")
        chart.band([x for x, _ in low], [v for _, v in low], [v for _, v in high], col,
                   tip=f"{group.name}: p90–p99")
        for x, point in rows:
            tip = (f"{describe(point)}\np50 {format_ns(point.get('latency_p50_ns'))} · p90 "
                   f"{format_ns(point.get('latency_p90_ns'))} · p99 "
                   f"{format_ns(point.get('latency_p99_ns'))} · max "
                   f"{format_ns(point.get('latency_max_ns'))} · loss "
                   f"{point.get('loss_pct') or 0:.3g} %")
            chart.marker(x, point.get("latency_p50_ns"), col, tip,
                         shape="circle" if point.get("rate") else "ring")
            if point.get("latency_p50_ns") is None:  # imports: a mean, no percentiles
                chart.marker(x, point.get("latency_mean_ns"), col,
                             f"mean {format_ns(point.get('latency_mean_ns'))} (the source has "
                             f"no percentiles): {describe(point)}", shape="square")
            chart.marker(x, point.get("latency_max_ns"), col, f"max: {tip}", shape="cross")
        knee = group_knee(group.name, group.points)
        if knee is not None:
            text = describe_knee(knee)
            if knee.rate is not None and knee.below is not None:
                chart.marker(knee.rate, knee.below.p99_ns, col, text, shape="diamond")
                chart.vline(knee.rate, f"knee {format_rate(knee.rate)}", col)
            knees.append(text)
    return chart


def _rate_tick(value: float) -> str:
    return f"{value / 1000:g}k" if value >= 1000 else f"{value:g}"
