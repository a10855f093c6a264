"""The saturation knee of a rate sweep: the highest rate a transport still sustains.

Sustainable (issue 4's definition): p99 response latency below the period (1/rate) and loss
at most ``max_loss_pct``. Walking the rates upwards, the knee is the last sustainable rate
before the first unsustainable one, with both points as evidence. This is the report's own
simple version; the scenario module may offer the same analysis, and :func:`find_knee` is the
one place to swap it in.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from .data import Point

MAX_LOSS_PCT = 1.0


@dataclass(frozen=True)
class Knee:
    """The knee of one group: the rate, the last sustainable point and the first that is not
    (None when every measured rate was sustainable: the knee lies beyond the sweep)."""

    rate: float
    last_ok: Point
    first_bad: Point | None


def sustainable(point: Point, max_loss_pct: float = MAX_LOSS_PCT) -> bool:
    """p99 below the period and loss at most ``max_loss_pct`` (False when not measured)."""
    rate, p99 = point.get("rate"), point.get("latency_p99_ns")
    if not rate or p99 is None or point.status == "failed":
        return False
    return p99 < 1e9 / rate and (point.get("loss_pct") or 0.0) <= max_loss_pct


def find_knee(points: Sequence[Point], max_loss_pct: float = MAX_LOSS_PCT) -> Knee | None:
    """The knee of ``points`` (one transport/setting group, several rates > 0); None when the
    group is no rate sweep or even its lowest rate is unsustainable."""
    by_rate = sorted((p for p in points if p.get("rate")), key=lambda p: p.get("rate"))
    if len({p.get("rate") for p in by_rate}) < 2:
        return None
    last_ok = None
    for point in by_rate:
        if sustainable(point, max_loss_pct):
            last_ok = point
        elif last_ok is not None:
            return Knee(float(last_ok.get("rate")), last_ok, point)
        else:
            return None
    assert last_ok is not None
    return Knee(float(last_ok.get("rate")), last_ok, None)
