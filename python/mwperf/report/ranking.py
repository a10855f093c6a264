"""The report's first screen: the answer to the question a side-by-side run asks — at each
payload and rate, which transport is fastest? — and the saturation knee of each transport.

A *situation* is one combination of the question's axes (payload, rate, mode: those that vary);
its *contenders* are the points that differ in anything else (the transport, and with several
runs the run's tag, QoS, ...), named as the charts name them. Contenders are ranked by p50 and,
separately, by p99 (lower first); repetitions of a contender count by their medians. Loss is
shown beside each entry that lost anything. A situation with a single contender ranks nothing
and is left out.
"""

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from .data import Point, Run
from .knee import ANALYSIS, group_knee
from .labels import label, run_tags, setting_text, varying

AXES = ("payload", "rate", "mode")
"""what a situation is: the settings a reader compares transports *at*"""


@dataclass(frozen=True)
class Entry:
    """One contender in one situation (medians over its repetitions)."""

    name: str
    p50_ns: float
    p99_ns: float
    loss_pct: float | None
    points: tuple[Point, ...]


@dataclass(frozen=True)
class Situation:
    """One payload x rate (x mode): its contenders ranked by p50 and by p99."""

    title: str
    by_p50: list[Entry]
    by_p99: list[Entry]


def situations(runs: Sequence[Run]) -> list[Situation]:
    """The rankings of ``runs``, in the order payload size, rate (as fast as possible last)."""
    tags = run_tags(runs)
    # a throughput point's latency is mostly its own queueing: ranked by the Throughput section
    measured = [(run, p) for run in runs for p in run.points
                if p.get("latency_count") and p.get("latency_p50_ns") is not None
                and p.get("latency_p99_ns") is not None and p.get("mode") != "throughput"]
    fields = varying([p for _, p in measured])
    axes = [f for f in AXES if f in fields]
    contenders = [f for f in fields if f not in AXES]
    found: dict[tuple, dict[str, list[Point]]] = {}
    for run, point in measured:
        key = tuple(_order(name, point) for name in axes)
        name = label(point, contenders, tags[run.run_id]).split(" #")[0]
        found.setdefault(key, {}).setdefault(name, []).append(point)
    result = []
    for key in sorted(found):
        entries = [_entry(name, points) for name, points in found[key].items()]
        if len(entries) < 2:
            continue
        first = next(iter(found[key].values()))[0]
        title = " · ".join(setting_text(name, first.get(name)) for name in axes) or "all points"
        result.append(Situation(title, sorted(entries, key=lambda e: (e.p50_ns, e.name)),
                                sorted(entries, key=lambda e: (e.p99_ns, e.name))))
    return result


@dataclass(frozen=True)
class KneeLine:
    """One contender's knee at each value of the other axes (payload, mode)."""

    name: str
    knees: list[tuple[str, str]]
    """(where, the knee in a few words), e.g. ('Array1k', '100 Hz')"""


def knee_lines(runs: Sequence[Run]) -> list[KneeLine]:
    """Per contender (transport, ...), its saturation knee at each payload: one line each.
    Empty when no group of points sweeps two rates or more."""
    tags = run_tags(runs)
    measured = [(run, p) for run in runs for p in run.points]
    fields = varying([p for _, p in measured], leave_out=("rate",))
    where_fields = [f for f in AXES if f in fields and f != "rate"]
    contenders = [f for f in fields if f not in AXES]
    groups: dict[str, dict[tuple, list[Point]]] = {}
    for run, point in measured:
        name = label(point, contenders, tags[run.run_id]).split(" #")[0]
        key = tuple(_order(f, point) for f in where_fields)
        groups.setdefault(name, {}).setdefault(key, []).append(point)
    lines = []
    for name, by_where in groups.items():
        knees = []
        for key in sorted(by_where):
            points = by_where[key]
            knee = group_knee(name, points)
            if knee is None:
                continue
            where = " ".join(setting_text(f, points[0].get(f)) for f in where_fields)
            knees.append((where, _short(knee)))
        if knees:
            lines.append(KneeLine(name, knees))
    return lines


def knee_rule() -> str:
    """The definition the knee lines use, in one phrase."""
    factor = "" if ANALYSIS.knee_factor == 1 else f" x {ANALYSIS.knee_factor:g}"
    return (f"the highest rate with p99 below the period{factor} and loss below "
            f"{ANALYSIS.knee_loss_pct:g} % at it and every lower rate")


def _short(knee) -> str:  # type: ignore[no-untyped-def]
    from ..scenario.knee import ALWAYS, NEVER
    from ..show.table import format_rate
    if knee.verdict == NEVER:
        return "never sustained"
    if knee.verdict == ALWAYS:
        return f"≥ {format_rate(knee.rate)} (every rate)"
    return format_rate(knee.rate)


def _entry(name: str, points: list[Point]) -> Entry:
    losses = [p.get("loss_pct") for p in points if p.get("loss_pct") is not None]
    return Entry(name, statistics.median(p.get("latency_p50_ns") for p in points),
                 statistics.median(p.get("latency_p99_ns") for p in points),
                 statistics.median(losses) if losses else None, tuple(points))


def _order(name: str, point: Point) -> tuple:
    """A sort key for the value of axis ``name``: payloads by size, rate 0 ('max') last."""
    value = point.get(name)
    if name == "payload":
        return (point.get("payload_bytes") or 0, str(value))
    if name == "rate":
        return (float(value) if value else float("inf"), "")
    return (0, str(value))
