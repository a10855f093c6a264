"""Pooling finished measurements into one (pure): the N subscribers of a one-way point
(``--subscribers N``) each measure their own stream, and the point's aggregate is the
distribution over all their messages.

The same method as the agent's pooling of topics (crates/mwperf-core/src/stats/pool.rs), so
both aggregates mean the same: percentiles from the summed HDR histogram buckets, clamped to the
exact pooled min/max; mean and standard deviation combined exactly (Chan et al.'s parallel
update); counts add up (so loss is counted against N x sent). Per-second series add their counts
and pool min/max/mean; their percentiles cannot be recovered from summaries and stay null.
"""

import copy
import math
from typing import Any

Stats = dict[str, Any]
Measurement = dict[str, Any]
ACCOUNTING_KEYS = ("sent", "received", "lost", "duplicated", "reordered", "corrupted", "foreign",
                   "malformed", "warmup_sent", "warmup_received")
QUANTILES = {"p50_ns": 0.50, "p90_ns": 0.90, "p99_ns": 0.99, "p999_ns": 0.999, "p9999_ns": 0.9999}


def quantile(buckets: list[list[int]], q: float) -> int | None:
    """The value at quantile ``q`` of ascending [value, count] buckets, as hdrhistogram computes
    it: the first bucket whose cumulative count reaches ceil(q x total), at least 1."""
    total = sum(count for _, count in buckets)
    if total == 0:
        return None
    wanted = min(max(math.ceil(q * total), 1), total)
    seen = 0
    for value, count in buckets:
        seen += count
        if seen >= wanted:
            return value
    return None


def pool_stats(parts: list[Stats]) -> Stats:
    """One latency distribution from several (empty parts are ignored)."""
    parts = [s for s in parts if s["count"] > 0]
    count = sum(s["count"] for s in parts)
    if count == 0:
        return {"count": 0, **{k: None for k in ("min_ns", "mean_ns", *QUANTILES, "max_ns",
                                                 "stddev_ns", "range_ns")}, "histogram": []}
    buckets: dict[int, int] = {}
    for s in parts:
        for value, n in s["histogram"]:
            buckets[value] = buckets.get(value, 0) + n
    histogram = [[v, buckets[v]] for v in sorted(buckets)]
    low = min(s["min_ns"] for s in parts if s["min_ns"] is not None)
    high = max(s["max_ns"] for s in parts if s["max_ns"] is not None)
    n = mean = m2 = 0.0
    for s in parts:
        nb, mb = float(s["count"]), float(s["mean_ns"] or 0.0)
        m2b = float(s["stddev_ns"] or 0.0) ** 2 * nb
        delta, total = mb - mean, n + nb
        mean += delta * nb / total
        m2 += m2b + delta * delta * n * nb / total
        n = total
    pooled: Stats = {"count": count, "min_ns": low, "mean_ns": mean}
    for key, q in QUANTILES.items():
        value = quantile(histogram, q)
        pooled[key] = None if value is None else min(max(value, low), high)
    pooled.update(max_ns=high, stddev_ns=math.sqrt(m2 / n), range_ns=high - low,
                  histogram=histogram)
    return pooled


def sum_accounting(parts: list[dict[str, int]]) -> dict[str, int]:
    """Accounting of independent streams: every counter adds up."""
    return {key: sum(p[key] for p in parts) for key in ACCOUNTING_KEYS}


def pool_series(parts: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per-second rows added up by second; percentiles null (not recoverable)."""
    rows: dict[int, dict[str, Any]] = {}
    weighted: dict[int, float] = {}
    for point in (p for series in parts for p in series):
        second = point["t_s"]
        row = rows.setdefault(second, {"t_s": second, "sent": 0, "received": 0, "min_ns": None,
                                       "p50_ns": None, "p90_ns": None, "p99_ns": None,
                                       "max_ns": None, "mean_ns": None})
        row["sent"] += point.get("sent", 0)
        row["received"] += point["received"]
        for key, pick in (("min_ns", min), ("max_ns", max)):
            values = [v for v in (row[key], point.get(key)) if v is not None]
            row[key] = pick(values) if values else None
        weighted[second] = (weighted.get(second, 0.0)
                            + (point["mean_ns"] or 0.0) * point["received"])
    for second, row in rows.items():
        row["mean_ns"] = weighted[second] / row["received"] if row["received"] else None
    return [rows[s] for s in sorted(rows)]


def pool_measurements(parts: list[Measurement]) -> Measurement:
    """Several measurements of one point as one (``parts`` not empty; sizes from the first)."""
    first = parts[0]
    accounting = sum_accounting([m["accounting"] for m in parts])
    counted = [m for m in parts if m["jitter_rfc3550_ns"] is not None]
    weight = sum(m["service"]["count"] for m in counted)
    lates = [m["late"] for m in parts if m.get("late") is not None]
    late = None
    if lates:
        count = sum(x["count"] for x in lates)
        late = {"threshold_ns": lates[0]["threshold_ns"], "count": count,
                "fraction": count / accounting["received"] if accounting["received"] else 0.0}
    pooled = copy.deepcopy({k: v for k, v in first.items()
                            if k in ("mode", "latency_kind", "clock", "payload_bytes",
                                     "message_bytes", "schedule")})
    pooled.update(
        response=pool_stats([m["response"] for m in parts]),
        service=pool_stats([m["service"] for m in parts]),
        jitter_rfc3550_ns=(sum(m["jitter_rfc3550_ns"] * m["service"]["count"] for m in counted)
                           / weight if weight else None),
        late=late, accounting=accounting,
        throughput={"duration_s": max(m["throughput"]["duration_s"] for m in parts),
                    **{k: sum(m["throughput"][k] for m in parts)
                       for k in ("msgs_per_s", "payload_bytes_per_s", "message_bytes_per_s")}},
        series=pool_series([m["series"] for m in parts]))
    return pooled
