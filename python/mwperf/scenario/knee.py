"""The saturation knee of a rate sweep: the highest rate a transport still sustains.

A rate r is *sustainable* when the response-time p99 is below the period times a factor
(p99 < knee_factor / r) and the loss is below a threshold (loss < knee_loss_pct %); defaults
1.0 and 1 % (the issue's "p99 below the period"), set in the scenario's ``analysis:`` block. A
point without a measurement (failed) is not sustainable. Repetitions of a rate are combined by
their median p99 and median loss. The knee is the last rate of the first run of sustainable
rates from the bottom, i.e. the highest rate r such that every measured rate <= r is
sustainable; the evidence is that point and the next rate up (the first that is not). Two
edge cases are named as such: "never sustainable" (the lowest rate already fails) and
"sustainable at every rate" (the knee lies above the sweep). Rate 0 (as fast as possible) has no
period and takes no part. One knee per group: the transport and every other axis but the rate.
"""

import statistics
from dataclasses import dataclass

from ..durations import format_ns
from ..show.table import format_rate
from .model import Analysis
from .observe import Observation

KNEE, NEVER, ALWAYS = "knee", "never sustainable", "sustainable at every rate"


@dataclass(frozen=True)
class RateSample:
    """One rate of a group: median p99 and loss over its repetitions (None: not measured)."""

    rate: float
    p99_ns: float | None
    loss_pct: float | None

    def sustainable(self, analysis: Analysis) -> bool:
        """p99 < period x factor and loss < threshold."""
        return (self.p99_ns is not None and self.loss_pct is not None
                and self.p99_ns < analysis.knee_factor * 1e9 / self.rate
                and self.loss_pct < analysis.knee_loss_pct)

    def evidence(self, analysis: Analysis) -> str:
        """'1000 Hz: p99 80 µs < 1 ms, loss 0.00% < 1%'."""
        if self.p99_ns is None or self.loss_pct is None:
            return f"{format_rate(self.rate)}: not measured"
        bound = analysis.knee_factor * 1e9 / self.rate
        p99 = "<" if self.p99_ns < bound else ">="
        loss = "<" if self.loss_pct < analysis.knee_loss_pct else ">="
        return (f"{format_rate(self.rate)}: p99 {format_ns(self.p99_ns)} {p99} "
                f"{format_ns(bound)}, loss {self.loss_pct:.2f}% {loss} "
                f"{analysis.knee_loss_pct:g}%")

    def to_dict(self) -> dict[str, float | None]:
        """As JSON."""
        return {"rate": self.rate, "p99_ns": self.p99_ns, "loss_pct": self.loss_pct}


@dataclass(frozen=True)
class Knee:
    """The verdict for one group, with the two points that decide it."""

    group: str
    verdict: str
    rate: float | None
    """the highest sustainable rate (None: never sustainable)"""
    below: RateSample | None
    """the knee point: the highest sustainable rate"""
    above: RateSample | None
    """the first rate above it that is not sustainable"""
    again: tuple[float, ...] = ()
    """rates above the first failure that pass again (noise, or a non-monotonic transport)"""

    def text(self, analysis: Analysis) -> str:
        """One line for the summary."""
        if self.verdict == NEVER:
            assert self.above is not None
            return (f"{self.group}: never sustainable — already at the lowest rate, "
                    f"{self.above.evidence(analysis)}" + self._again())
        assert self.below is not None and self.rate is not None
        if self.verdict == ALWAYS:
            return (f"{self.group}: sustainable at every rate measured (knee above "
                    f"{format_rate(self.rate)}) — {self.below.evidence(analysis)}")
        assert self.above is not None
        return (f"{self.group}: knee at {format_rate(self.rate)} — "
                f"{self.below.evidence(analysis)}; {self.above.evidence(analysis)}"
                + self._again())

    def _again(self) -> str:
        if not self.again:
            return ""
        return (f" (sustainable again at {', '.join(format_rate(r) for r in self.again)}, "
                f"above the first failure)")

    def to_dict(self) -> dict[str, object]:
        """As JSON."""
        return {"group": self.group, "verdict": self.verdict, "rate": self.rate,
                "below": self.below.to_dict() if self.below else None,
                "above": self.above.to_dict() if self.above else None,
                "sustainable_again_at": list(self.again)}


def find_knee(group: str, samples: list[RateSample], analysis: Analysis) -> Knee:
    """The knee of one group's rates (any order; rate 0 ignored); needs a positive rate."""
    ordered = sorted((s for s in samples if s.rate > 0), key=lambda s: s.rate)
    if not ordered:
        raise ValueError("a knee needs at least one rate > 0")
    last_good = None
    for position, sample in enumerate(ordered):
        if not sample.sustainable(analysis):
            again = tuple(s.rate for s in ordered[position + 1:] if s.sustainable(analysis))
            if last_good is None:
                return Knee(group, NEVER, None, None, sample, again)
            return Knee(group, KNEE, last_good.rate, last_good, sample, again)
        last_good = sample
    assert last_good is not None
    return Knee(group, ALWAYS, last_good.rate, last_good, None)


def knees(observations: list[Observation], analysis: Analysis) -> list[Knee]:
    """One knee per group when the sweep has a rate axis with at least two rates > 0."""
    rates = {o.row.rate for o in observations if o.row.rate > 0}
    if len(rates) < 2 or not any(name == "rate" for o in observations[:1]
                                 for name, _ in o.point.axes):
        return []
    groups: dict[str, dict[float, list[Observation]]] = {}
    for obs in observations:
        if obs.row.rate <= 0 or obs.status == "not supported":
            continue
        groups.setdefault(group_name(obs), {}).setdefault(obs.row.rate, []).append(obs)
    return [find_knee(name, [_combine(rate, found) for rate, found in by_rate.items()],
                      analysis) for name, by_rate in groups.items()]


def group_name(obs: Observation, leave_out: str = "rate") -> str:
    """The transport and every other axis value but ``leave_out``: 'udp reliability=reliable'."""
    parts = [obs.point.transport] + [f"{name}={value}" for name, value in obs.point.axes
                                      if name not in ("transport", leave_out)]
    return " ".join(parts)


def _combine(rate: float, found: list[Observation]) -> RateSample:
    measured = [o for o in found if o.measured and o.row.loss_pct is not None]
    if not measured:
        return RateSample(rate, None, None)
    return RateSample(rate, statistics.median(o.row.p99_ns for o in measured),  # type: ignore
                      statistics.median(o.row.loss_pct for o in measured))  # type: ignore
