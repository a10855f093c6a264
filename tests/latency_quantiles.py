"""Quantiles of a measured latency distribution, for bounds that hold on a loaded machine.

Other processes on a 2-core machine delay a share of the messages by a scheduler time slice
(milliseconds); those delays reach the upper quantiles first. A low quantile of the same run
stays the cost of the path itself, so a claim about the path (a delay applied once, a topic as
fast inside a bigger run as alone) is checked there; the minimum is a hard floor (no message can
be faster than the delays it must cross)."""

from typing import Any


def low_quantile_ns(stats: dict[str, Any], fraction: float = 0.1) -> int:
    """The nearest-rank ``fraction`` quantile of a result's Stats (``response``, ``service``),
    from its histogram (value, count pairs in ascending order)."""
    histogram, count = stats["histogram"], stats["count"]
    rank, seen = max(1, -(-int(count * fraction * 1000) // 1000)), 0
    for value, n in histogram:
        seen += n
        if seen >= rank:
            return int(value)
    raise AssertionError(f"histogram of {seen} samples for a count of {count}")
