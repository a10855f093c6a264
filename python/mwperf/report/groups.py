"""Grouping the points of the runs in a report into the lines of a 'versus rate' plot: one
group per run and per combination of the settings that vary, other than the rate."""

from collections.abc import Sequence
from dataclasses import dataclass

from .data import Point, Run
from .labels import label, run_tags, varying


@dataclass
class Group:
    """The points of one line, ordered by rate (rate 0, 'max', last)."""

    name: str
    points: list[Point]


def rate_groups(runs: Sequence[Run]) -> list[Group]:
    """The measured points of ``runs`` grouped for plots against the rate."""
    measured = [p for run in runs for p in run.points if p.get("latency_count")]
    fields = varying(measured, leave_out=("rate",))
    tags = run_tags(runs)
    groups: dict[str, Group] = {}
    for run in runs:
        for point in run.points:
            if not point.get("latency_count"):
                continue
            name = label(point, fields, tags[run.run_id]).split(" #")[0]
            groups.setdefault(name, Group(name, [])).points.append(point)
    for group in groups.values():
        group.points.sort(key=lambda p: (p.get("rate") or float("inf"), p.get("repetition") or 0))
    return list(groups.values())


def x_rate(point: Point) -> float | None:
    """Where a point sits on a rate axis: its rate, or for 'as fast as possible' (rate 0) the
    message rate it achieved."""
    rate = point.get("rate")
    return float(rate) if rate else point.get("msgs_per_s")
