"""What a probe reports per topic, from arrival times (ns), sizes and header stamps.

The rate, gaps and sizes are the same computation as ``mwperf bag info`` (bags.info.summarise,
nearest-rank quantiles). On top: the rate in each whole second from the topic's first arrival (its stability: min,
max and coefficient of variation across seconds), the longest gaps with where they began,
bursts (inter-arrival times shorter than the median / the gap factor: messages bunched together,
as after a stall or a queue flush), and age = arrival time - header.stamp for types whose first
field is a std_msgs/Header.
"""

from dataclasses import asdict, dataclass, field
from statistics import mean, pstdev
from typing import Any

from ..bags.info import TopicInfo, nearest_rank, summarise

CLOCK_CAVEAT = ("age = receive time - header.stamp compares this machine's clock with the "
                "publisher's: across machines it includes their clock offset (sync them, e.g. "
                "chrony, or read it as relative)")
SIZE_QUANTILES = 20
"""sizes kept per topic: the nearest-rank k/20-quantiles, k = 0..20 (the smallest message, then
one per twentieth of the messages up to the largest)"""


@dataclass
class ProbeTopic:
    """One topic's probe summary (the bag-info fields plus the live-only ones)."""

    basic: TopicInfo
    rate_per_second_min: float | None
    rate_per_second_max: float | None
    rate_cv: float | None
    longest_gaps: list[tuple[int, int]] = field(default_factory=list)  # (offset ns, gap ns)
    bursts: int = 0
    age_p50_ns: int | None = None
    age_p99_ns: int | None = None
    age_max_ns: int | None = None
    bandwidth_bps: float | None = None
    """bytes per second over the whole window (not from the first arrival)"""
    size_quantiles: list[int] = field(default_factory=list)
    publishers: list[dict[str, Any]] | None = None
    """the topic's publishing nodes ([{"node": "/talker"}]) where the system says; None: unknown"""
    subscribers: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self.basic) | {k: v for k, v in asdict(self).items() if k != "basic" and
                                     (v is not None or k not in ("publishers", "subscribers"))}


def summarise_topic(name: str, msgtype: str, arrivals: list[int], sizes: list[int],
                    stamps: list[int], start_ns: int, end_ns: int,
                    gap_factor: float) -> ProbeTopic:
    """The probe summary of one topic over the window [start_ns, end_ns)."""
    basic = summarise(name, msgtype, arrivals, sizes, start_ns) if arrivals else TopicInfo(
        name, msgtype, 0, 0, 0, 0, None, None, None, None, 0, 0, 0)
    median = basic.gap_p50_ns
    if median:
        basic.gaps = sum(1 for a, b in zip(arrivals, arrivals[1:]) if b - a > gap_factor * median)
    # from the topic's first arrival: subscribing takes a connection per publisher first
    per_second = _rate_per_second(arrivals, arrivals[0], end_ns) if arrivals else []
    gaps = sorted(((b - a, a - start_ns) for a, b in zip(arrivals, arrivals[1:])), reverse=True)
    ages = sorted(a - s for a, s in zip(arrivals, stamps) if s >= 0)
    return ProbeTopic(
        basic=basic,
        rate_per_second_min=min(per_second) if per_second else None,
        rate_per_second_max=max(per_second) if per_second else None,
        rate_cv=pstdev(per_second) / mean(per_second) if per_second and mean(per_second) else None,
        longest_gaps=[(offset, gap) for gap, offset in gaps[:3]],
        bursts=sum(1 for a, b in zip(arrivals, arrivals[1:])
                   if median and b - a < median / gap_factor),
        age_p50_ns=nearest_rank(ages, 0.5) if ages else None,
        age_p99_ns=nearest_rank(ages, 0.99) if ages else None,
        age_max_ns=ages[-1] if ages else None,
        bandwidth_bps=sum(sizes) * 1e9 / (end_ns - start_ns) if end_ns > start_ns else None,
        size_quantiles=size_quantiles(sizes))


def size_quantiles(sizes: list[int]) -> list[int]:
    """The nearest-rank k/SIZE_QUANTILES-quantiles of ``sizes``, k = 0..SIZE_QUANTILES (k = 0:
    the smallest); in integers, so no k lands one rank off by rounding."""
    ordered, n = sorted(sizes), len(sizes)
    return [ordered[max(0, -(-k * n // SIZE_QUANTILES) - 1)] for k in range(SIZE_QUANTILES + 1)] \
        if n else []


def _rate_per_second(arrivals: list[int], start_ns: int, end_ns: int) -> list[float]:
    """Messages in each whole second of the window (a partial last second is left out)."""
    seconds = int((end_ns - start_ns) // 1_000_000_000)
    counts = [0] * seconds
    for t in arrivals:
        k = (t - start_ns) // 1_000_000_000
        if 0 <= k < seconds:
            counts[k] += 1
    return [float(c) for c in counts]
