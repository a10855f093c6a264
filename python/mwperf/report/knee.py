"""The saturation knee of a rate sweep, as the report marks it: the scenario module's own
definition (mwperf.scenario.knee — p99 below the period and loss below 1 %, repetitions by
their median, the highest rate below which every rate is sustainable, "never sustainable" and
"sustainable at every rate" named as such) applied to the catalogue's points, so the report
marks the knee the sweep's summary names. The sweep's ``analysis:`` thresholds are not stored
with its results; the report uses their defaults.
"""

import statistics
from collections.abc import Sequence

from ..scenario.knee import Knee, RateSample, find_knee
from ..scenario.model import Analysis
from .data import Point

ANALYSIS = Analysis()


def group_knee(name: str, points: Sequence[Point]) -> Knee | None:
    """The knee of one group's ``points``; None when they are no rate sweep (fewer than two
    rates > 0)."""
    by_rate: dict[float, list[Point]] = {}
    for point in points:
        if point.get("rate"):
            by_rate.setdefault(float(point.get("rate")), []).append(point)
    if len(by_rate) < 2:
        return None
    return find_knee(name, [_sample(rate, found) for rate, found in by_rate.items()], ANALYSIS)


def describe(knee: Knee) -> str:
    """The knee in one line, with its evidence (the scenario summary's wording)."""
    return knee.text(ANALYSIS)


def _sample(rate: float, points: list[Point]) -> RateSample:
    measured = [p for p in points if p.get("latency_count") and p.get("loss_pct") is not None
                and p.get("latency_p99_ns") is not None]
    if not measured:
        return RateSample(rate, None, None)
    return RateSample(rate, statistics.median(p.get("latency_p99_ns") for p in measured),
                      statistics.median(p.get("loss_pct") for p in measured))
