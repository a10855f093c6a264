"""Matching the points of BASE and NEW by configuration: two points match when every setting
that defines a measurement (report.labels.SETTINGS: transport, mode, rate, payload, topics,
executor, busy loop, QoS, conditions) is equal. Repetitions of one configuration form one
group. Points only one side has are listed, not compared — except a configuration BASE
measured and NEW only failed at: that is a regression in itself (``lost`` below)."""

from dataclasses import dataclass

from ..report.data import Point, Run
from ..report.labels import SETTINGS, describe


@dataclass
class Pair:
    """The points of one configuration in BASE and in NEW (measured ones only)."""

    name: str
    base: list[Point]
    new: list[Point]


def key(point: Point) -> tuple:
    """The configuration key of ``point``."""
    return tuple(point.get(name) for name in SETTINGS)


def match(base: Run, new: Run
          ) -> tuple[list[Pair], list[Point], list[Point], list[tuple[str, list[Point]]]]:
    """(matched pairs in BASE's order, measured points only in BASE, measured points only in
    NEW, and the configurations BASE measured that NEW has only unmeasured (failed) points
    for, with those points)."""
    left, right = _measured(base), _measured(new)
    failed: dict[tuple, list[Point]] = {}
    for point in new.points:
        if not point.get("latency_count"):
            failed.setdefault(key(point), []).append(point)
    pairs = [Pair(describe(points[0]), points, right[k]) for k, points in left.items()
             if k in right]
    lost = [(describe(points[0]), failed[k]) for k, points in left.items()
            if k not in right and k in failed]
    only_base = [p for k, points in left.items() if k not in right and k not in failed
                 for p in points]
    only_new = [p for k, points in right.items() if k not in left for p in points]
    return pairs, only_base, only_new, lost


def _measured(run: Run) -> dict[tuple, list[Point]]:
    groups: dict[tuple, list[Point]] = {}
    for point in run.points:
        if point.get("latency_count"):
            groups.setdefault(key(point), []).append(point)
    return groups
