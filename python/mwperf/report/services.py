"""Plot: service calls beside topic round trips. For each payload and rate, per transport the
call latency of its ``--mode service`` points (bar p50, dot p99) next to the same transport's
round trip over two topics in the same report (ping/pong with the same payload and rate): the
gap is what the middleware's request/response machinery adds. The Markdown table says the same
in numbers, with the calls that timed out or failed and the server's time per call."""

from collections.abc import Sequence
from typing import Any

from ..durations import format_ns
from .data import Point, Run
from .section import Section
from .svg import Axis, Chart, colour

KINDS = (("service", "service call"), ("roundtrip", "topic round trip"))


def _key(point: Point) -> tuple[str, float, Any, Any]:
    return (str(point.get("transport")), float(point.get("rate") or 0),
            point.get("payload_bytes"), point.get("reliability"))


def pairs(runs: Sequence[Run]) -> list[tuple[Point, Point | None]]:
    """Each service point with the round-trip point of the same transport, rate, payload and
    reliability in the same report (the latest one), or None."""
    points = [p for run in runs for p in run.points if p.status != "failed"]
    trips = {_key(p): p for p in points if p.get("mode") == "roundtrip" and p.bridge is None}
    return [(p, trips.get(_key(p))) for p in points if p.get("mode") == "service"]


def section(runs: Sequence[Run]) -> Section:
    """The services section (empty without service points)."""
    out = Section("services", "Service calls beside topic round trips")
    found = pairs(runs)
    groups: dict[tuple[Any, float], list[tuple[Point, Point | None]]] = {}
    for service, trip in found:
        groups.setdefault((service.get("payload_bytes"), float(service.get("rate") or 0)),
                          []).append((service, trip))
    for (payload, rate), members in sorted(groups.items(), key=lambda g: (g[0][0] or 0, g[0][1])):
        transports = sorted({str(s.get("transport")) for s, _ in members})
        rate_text = f"{rate:g} Hz" if rate else "back to back"
        chart = Chart(f"{payload} B requests at {rate_text}: service call vs topic round trip "
                      "(bar p50, \u25cf p99)",
                      Axis("transport", ticks=list(enumerate(transports))),
                      Axis("latency", fmt=format_ns), f"services-{payload}-{rate:g}")
        for index, (_, label) in enumerate(KINDS):
            chart.legend(label, colour(index))
        for service, trip in members:
            base = transports.index(str(service.get("transport")))
            for index, point in enumerate((service, trip)):
                if point is None:
                    continue
                x = base - 0.2 + 0.4 * index
                tip = (f"{point.get('transport')} {KINDS[index][1]} ({point.point_id}): p50 "
                       f"{format_ns(point.get('latency_p50_ns'))}, p99 "
                       f"{format_ns(point.get('latency_p99_ns'))}")
                chart.bar(x, 0.35, point.get("latency_p50_ns"), colour(index), tip)
                chart.marker(x, point.get("latency_p99_ns"), "#000", f"p99: {tip}")
        out.add(chart)
    if found and not any(trip for _, trip in found):
        out.note = ("No round-trip point with the same transport, rate and payload is in this "
                    "report: run one beside the service points (the 'services' scenario does).")
    return out


def markdown(runs: Sequence[Run]) -> str:
    """The service points as a Markdown table ("" without any)."""
    found = pairs(runs)
    if not found:
        return ""
    lines = ["", "| point | transport | rate | request | reply | in flight | clients | call p50 "
             "| call p99 | round trip p50 | round trip p99 | added p50 | server p50 | timeouts "
             "| errors |", "|" + "---|" * 15]
    for s, trip in found:
        added = (format_ns(s.get("latency_p50_ns") - trip.get("latency_p50_ns"))
                 if trip and s.get("latency_p50_ns") is not None
                 and trip.get("latency_p50_ns") is not None else "-")
        lines.append(
            f"| {s.point_id} | {s.get('transport')} | {float(s.get('rate') or 0):g} | "
            f"{s.get('payload_bytes')} B | {s.get('reply_payload_bytes')} B | "
            f"{s.get('in_flight')} | {s.get('clients')} | {format_ns(s.get('latency_p50_ns'))} | "
            f"{format_ns(s.get('latency_p99_ns'))} | "
            f"{format_ns(trip.get('latency_p50_ns')) if trip else '-'} | "
            f"{format_ns(trip.get('latency_p99_ns')) if trip else '-'} | {added} | "
            f"{format_ns(s.get('server_time_p50_ns'))} | {s.get('calls_timeouts')} | "
            f"{s.get('calls_errors')} |")
    return "\n".join(lines) + "\n"
