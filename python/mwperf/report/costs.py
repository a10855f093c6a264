"""Plots: what the middleware costs beside its latency (docs/costs.md) — IP bytes on the wire
per message each way (--wire-bytes, the first emulated wire) with the message's own size for
scale, and heap allocations per message of the sender and the server (--count-allocs). Points
are numbered as in the summary table (#); a point that measured neither is left out."""

from collections.abc import Sequence

from .data import Point, Run
from .labels import describe
from ..wire import HEADER_BYTES
from .section import Section
from .svg import Axis, Chart, colour

MAX_POINTS = 40
MAX_TICKS = 16


def wire(point: Point) -> tuple[float | None, float | None]:
    return point.get("wire_up_bytes_per_msg"), point.get("wire_down_bytes_per_msg")


def allocs(point: Point) -> list[tuple[str, float]]:
    """(role, allocations per message) of each agent that counted them."""
    return [(role, v) for role in ("ping", "pong", "pub", "sub")
            if (v := point.get(f"{role}_allocs_per_msg")) is not None]


def section(runs: Sequence[Run], numbers: dict[str, int]) -> Section:
    """The cost section; ``numbers``: point id -> its number (#) in the summary table."""
    out = Section("costs", "What the middleware costs: bytes on the wire and allocations per "
                           "message")
    measured = [p for run in runs for p in run.points
                if wire(p)[0] is not None or allocs(p)]
    points = measured[:MAX_POINTS]
    if not points:
        return out
    if len(measured) > MAX_POINTS:
        out.note = f"The first {MAX_POINTS} of {len(measured)} points are drawn."
    every = -(-len(points) // MAX_TICKS)
    ticks = [(float(numbers[p.point_id]), f"#{numbers[p.point_id]}") for p in points[::every]]
    axis = Axis("point (#, as in the summary table)", ticks=ticks)
    bytes_chart = Chart("IP bytes on the wire per message (steady state)", axis,
                        Axis("bytes per message"), "wire")
    alloc_chart = Chart("Heap allocations per message (steady state, whole process)",
                        Axis("point (#, as in the summary table)", ticks=ticks),
                        Axis("allocations per message"), "allocs")
    series = ("sender \u2192 server", "server \u2192 sender", "message + header")
    for point in points:
        number = numbers[point.point_id]
        tip = f"#{number} {describe(point)}"
        up, down = wire(point)
        own = (point.get("payload_bytes") or 0) + HEADER_BYTES
        for k, (name, value) in enumerate(zip(series, (up, down, own if up is not None else None))):
            if value is not None:
                bytes_chart.bar(number - 0.4 + 0.8 / 3 * (k + 0.5), 0.8 / 3, value, colour(k),
                                f"{tip}\n{name}: {value:.6g} B")
        roles = allocs(point)
        for k, (role, value) in enumerate(roles):
            alloc_chart.bar(number - 0.4 + 0.8 / len(roles) * (k + 0.5), 0.8 / len(roles),
                            value, colour(0 if role in ("ping", "pub") else 1),
                            f"{tip}\n{role}: {value:.3g} allocations per message")
    for k, name in enumerate(series):
        bytes_chart.legend(name, colour(k))
    alloc_chart.legend("sender (ping, pub)", colour(0))
    alloc_chart.legend("server (pong, sub)", colour(1))
    out.add(bytes_chart, alloc_chart)
    return out
