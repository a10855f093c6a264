"""Plots: loss and jitter against the message rate, one line per transport/setting group
(paced points only: as fast as possible has no rate to plot against; lines follow the
medians of repetitions).
Jitter is RFC 3550's interarrival jitter (solid) and the standard deviation of the response
latency (dashed; the seeds' 'jitter')."""

from collections.abc import Sequence

from ..durations import format_ns
from .data import Run
from .groups import Group, by_rate, rate_facets, x_rate
from .labels import describe
from .section import Section
from .svg import Axis, Chart, colour


def section(runs: Sequence[Run]) -> Section:
    """The loss-and-jitter section: two charts per facet."""
    out = Section("loss-jitter", "Loss and jitter vs rate")
    for facet in rate_facets(runs):
        prefix = f"{facet.title}: " if facet.title else ""
        out.add(*_charts(prefix, facet.groups))
    return out


def _charts(prefix: str, groups: list[Group]) -> tuple[Chart, Chart]:
    loss = Chart(f"{prefix}Loss vs rate", Axis("rate (messages/s)", log=True),
                 Axis("loss (%)", fmt=lambda v: f"{v:g}"), "loss-rate")
    jitter = Chart(f"{prefix}Jitter vs rate (RFC 3550 solid, std dev dashed)",
                   Axis("rate (messages/s)", log=True), Axis("jitter", log=True, fmt=format_ns),
                   "jitter-rate")
    for i, group in enumerate(groups):
        col = colour(i)
        rows = [(x_rate(p), p) for p in group.points if x_rate(p) is not None and p.get("rate")]
        loss.legend(group.name, col)
        jitter.legend(group.name, col)
        loss.line(by_rate(group.points, "loss_pct"), col, tip=group.name)
        jitter.line(by_rate(group.points, "jitter_rfc3550_ns"), col, tip=group.name)
        jitter.line(by_rate(group.points, "latency_stddev_ns"), col, dash=True,
                    tip=f"{group.name}: std dev")
        for x, p in rows:
            loss.marker(x, p.get("loss_pct") or 0.0, col,
                        f"{describe(p)}\nloss {p.get('loss_pct') or 0:.4g} % "
                        f"({p.get('lost')} of {p.get('sent')})")
            jitter.marker(x, p.get("jitter_rfc3550_ns"), col,
                          f"{describe(p)}\nRFC 3550 jitter {format_ns(p.get('jitter_rfc3550_ns'))}"
                          f", std dev {format_ns(p.get('latency_stddev_ns'))}")
    return loss, jitter
