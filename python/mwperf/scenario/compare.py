"""Comparisons across a two-valued axis (reliable vs best-effort, single vs multi executor, ...).

For an axis with exactly two values A and B, points are paired when every other axis has the
same value (repetitions combined by their median); each pair gives the ratios B/A of the
response-time p50 and p99. The summary shows every pair and the median ratio over the pairs:
below 1 means B is faster.
"""

import statistics
from dataclasses import dataclass

from ..durations import format_ns
from ..show.table import format_rate
from .observe import Observation


@dataclass(frozen=True)
class Pair:
    """One matched pair: the context (the other axes) and both sides' p50/p99."""

    context: str
    a_p50_ns: float
    a_p99_ns: float
    b_p50_ns: float
    b_p99_ns: float

    @property
    def p50_ratio(self) -> float:
        """B/A of the p50."""
        return self.b_p50_ns / self.a_p50_ns if self.a_p50_ns else float("inf")

    @property
    def p99_ratio(self) -> float:
        """B/A of the p99."""
        return self.b_p99_ns / self.a_p99_ns if self.a_p99_ns else float("inf")


@dataclass(frozen=True)
class Comparison:
    """B against A along one axis."""

    axis: str
    a: str
    b: str
    pairs: tuple[Pair, ...]

    def median(self, which: str) -> float | None:
        """The median ratio (``p50`` or ``p99``) over the pairs."""
        values = [getattr(p, f"{which}_ratio") for p in self.pairs]
        return statistics.median(values) if values else None

    def lines(self) -> list[str]:
        """A headline, then one line per pair."""
        if not self.pairs:
            return [f"{self.axis}: {self.b} vs {self.a}: no matched pair was measured"]
        head = (f"{self.axis}: {self.b} vs {self.a} over {len(self.pairs)} matched pair"
                f"{'s' * (len(self.pairs) > 1)}: p50 x{self.median('p50'):.2f}, "
                f"p99 x{self.median('p99'):.2f} (median ratio {self.b}/{self.a})")
        return [head] + [
            f"  {p.context}: p50 {format_ns(p.a_p50_ns)} -> {format_ns(p.b_p50_ns)} "
            f"(x{p.p50_ratio:.2f}), p99 {format_ns(p.a_p99_ns)} -> {format_ns(p.b_p99_ns)} "
            f"(x{p.p99_ratio:.2f})" for p in self.pairs]

    def to_dict(self) -> dict[str, object]:
        """As JSON."""
        return {"axis": self.axis, "a": self.a, "b": self.b,
                "p50_ratio_median": self.median("p50"), "p99_ratio_median": self.median("p99"),
                "pairs": [{"context": p.context, "a_p50_ns": p.a_p50_ns, "a_p99_ns": p.a_p99_ns,
                           "b_p50_ns": p.b_p50_ns, "b_p99_ns": p.b_p99_ns,
                           "p50_ratio": p.p50_ratio, "p99_ratio": p.p99_ratio}
                          for p in self.pairs]}


def comparisons(observations: list[Observation]) -> list[Comparison]:
    """One comparison per axis that has exactly two values in the sweep."""
    if not observations:
        return []
    axis_values: dict[str, list[str]] = {}
    for obs in observations:
        for name, value in obs.point.axes:
            if value not in axis_values.setdefault(name, []):
                axis_values[name].append(value)
    return [_compare(name, values[0], values[1], observations)
            for name, values in axis_values.items() if len(values) == 2]


def _compare(axis: str, a: str, b: str, observations: list[Observation]) -> Comparison:
    sides: dict[str, dict[str, list[Observation]]] = {}
    for obs in observations:
        if not obs.measured:
            continue
        value = dict(obs.point.axes).get(axis)
        context = " ".join(_shown(n, v) for n, v in obs.point.axes if n != axis) or "the pair"
        sides.setdefault(context, {}).setdefault(str(value), []).append(obs)
    pairs = []
    for context, by_value in sides.items():
        if a in by_value and b in by_value:
            (a50, a99), (b50, b99) = _median(by_value[a]), _median(by_value[b])
            pairs.append(Pair(context, a50, a99, b50, b99))
    shown = (_shown(axis, a), _shown(axis, b)) if axis == "rate" else (a, b)
    return Comparison(axis, *shown, tuple(pairs))


def _shown(name: str, value: str) -> str:
    """An axis value in a pair's context: 'udp', '1000 Hz', 'topics=3'."""
    if name == "transport":
        return value
    if name == "rate":
        return format_rate(float(value))
    return f"{name}={value}"


def _median(found: list[Observation]) -> tuple[float, float]:
    return (statistics.median(o.row.p50_ns for o in found),  # type: ignore[misc]
            statistics.median(o.row.p99_ns for o in found))  # type: ignore[misc]
