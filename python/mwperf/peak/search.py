"""The search: the highest rate whose trial passes, between a passing low and a failing high.

1. The range's ends: the low end must pass (else there is no peak in the range) and the high end
   must fail (else the peak is above the range: both are said, not guessed past).
2. A binary search in log space (rates span decades) until high / low <= 1 + ``resolution``.
3. A linear scan up from the best passing rate in steps of ``scan_step`` x that rate, until a
   trial fails or ``scan_steps`` passed: noise can fail one trial of a rate the system keeps,
   and the binary search trusts every answer; the scan's last pass is the peak.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Trial:
    """One measured rate."""

    rate: float
    passed: bool
    why: str
    """what decided it: the figures against their limits, or what went wrong"""
    figures: dict[str, Any] = field(default_factory=dict)
    """p99_ns, p99_limit_ns, loss_percent, ... as measured"""
    run_id: str | None = None
    interrupted: bool = False
    step: str = ""
    """which part of the search walked it: low, high, binary, scan"""


@dataclass
class Walk:
    """The trials in the order they were run, and the peak they found."""

    trials: list[Trial]
    peak: float | None
    verdict: str
    """how the walk ended: found, below the range, above the range, interrupted"""


def search(probe: Callable[[float], Trial], low: float, high: float, *,
           resolution: float = 0.05, scan_step: float = 0.05, scan_steps: int = 3) -> Walk:
    """The walk of ``probe`` from ``low`` to ``high`` (low < high, both > 0)."""
    trials: list[Trial] = []

    def run(rate: float, step: str) -> Trial:
        trial = probe(rate)
        trial = Trial(trial.rate, trial.passed, trial.why, trial.figures, trial.run_id,
                      trial.interrupted, step)
        trials.append(trial)
        return trial

    first = run(low, "low")
    low = first.rate
    if first.interrupted:
        return Walk(trials, None, "interrupted")
    if not first.passed:
        return Walk(trials, None, "below the range: the lowest rate failed")
    top = run(high, "high")
    high = top.rate
    if top.interrupted:
        return Walk(trials, None, "interrupted")
    if top.passed:
        return Walk(trials, high, "above the range: the highest rate passed")
    good, bad = low, high
    while bad / good > 1 + resolution:
        middle = math.sqrt(good * bad)
        trial = run(middle, "binary")
        if trial.interrupted:
            return Walk(trials, good, "interrupted")
        if not good < trial.rate < bad:  # the probe's rounding met an end: close enough
            break
        if trial.passed:
            good = trial.rate  # the rate measured (a probe may round what it was asked)
        else:
            bad = trial.rate
    peak = good
    for k in range(1, scan_steps + 1):
        trial = run(good * (1 + k * scan_step), "scan")
        if trial.interrupted:
            return Walk(trials, peak, "interrupted")
        if not trial.passed:
            break
        peak = trial.rate
    return Walk(trials, peak, "found")


def combined(peaks: list[float]) -> tuple[float | None, str]:
    """Several walks' peaks as one figure: with 3 or more, the best and the worst dropped and
    the rest averaged (as ros2_benchmark does); fewer: their mean. Returns (figure, how)."""
    if not peaks:
        return None, "no walk found a peak"
    if len(peaks) >= 3:
        kept = sorted(peaks)[1:-1]
        return sum(kept) / len(kept), f"mean of {len(kept)} after dropping the best and worst"
    return sum(peaks) / len(peaks), f"mean of {len(peaks)}"
