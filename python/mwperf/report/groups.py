"""Grouping the points of the runs in a report for the 'versus rate' plots: one line per run
and per combination of the settings that vary, other than the rate; and, when that gives more
lines than a chart can show legibly, one chart (facet) per value of the next varying setting
(e.g. per payload for the side-by-side suite: its transports side by side in each)."""

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from .data import Point, Run
from .labels import label, run_tags, setting_text, varying

MAX_LINES = 10
"""more groups than this in one chart are split into facets"""


@dataclass
class Group:
    """The points of one line, ordered by rate (rate 0, 'max', last)."""

    name: str
    points: list[Point]


@dataclass
class Facet:
    """One chart's worth of groups; ``title`` is empty when there is a single facet."""

    title: str
    groups: list[Group]


def rate_facets(runs: Sequence[Run]) -> list[Facet]:
    """The measured points of ``runs`` grouped into lines, and the lines into charts."""
    measured = [(run, p) for run in runs for p in run.points if p.get("latency_count")]
    fields = varying([p for _, p in measured], leave_out=("rate",))
    tags = run_tags(runs)
    split = None
    if len(_groups(measured, fields, tags)) > MAX_LINES and len(fields) > 1:
        split = "payload" if "payload" in fields else fields[1]
    if split is None:
        return [Facet("", _groups(measured, fields, tags))] if measured else []
    rest = [f for f in fields if f != split]
    values: dict[str, list[tuple[Run, Point]]] = {}
    for run, point in measured:
        values.setdefault(setting_text(split, point.get(split)), []).append((run, point))
    return [Facet(title, _groups(members, rest, tags)) for title, members in values.items()]


def _groups(measured: Sequence[tuple[Run, Point]], fields: Sequence[str],
            tags: dict[str, str]) -> list[Group]:
    groups: dict[str, Group] = {}
    for run, point in measured:
        name = label(point, fields, tags[run.run_id]).split(" #")[0]
        groups.setdefault(name, Group(name, [])).points.append(point)
    for group in groups.values():
        group.points.sort(key=lambda p: (p.get("rate") or float("inf"), p.get("repetition") or 0))
    return list(groups.values())


def by_rate(points: Sequence[Point], column: str) -> list[tuple[float, float]]:
    """(rate, median of ``column`` over the repetitions at that rate) for the paced points
    (rate > 0) of a group, ascending: what a line through repetitions should follow."""
    values: dict[float, list[float]] = {}
    for point in points:
        rate, value = point.get("rate"), point.get(column)
        if rate and value is not None:
            values.setdefault(float(rate), []).append(float(value))
    return [(rate, statistics.median(found)) for rate, found in sorted(values.items())]


def x_rate(point: Point) -> float | None:
    """Where a point sits on a rate axis: its rate, or for 'as fast as possible' (rate 0) the
    message rate it achieved."""
    rate = point.get("rate")
    return float(rate) if rate else point.get("msgs_per_s")
