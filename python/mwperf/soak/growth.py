"""Growth of a resource over a point's steady state: the least-squares slope of its samples
against time, times the steady state's duration — not last minus first, which one late
allocation or one early free would decide alone.

The steady state is the sender's measured time (its ``phases``: from the first measured
message's scheduled time to the last one's reply or give-up) without its first
``max(SKIP_MIN_NS, SKIP_SHARE x measured time)``: the warm-up is already out, and the first
seconds of measuring still fill caches, queues and allocator arenas once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

SKIP_MIN_NS = 2_000_000_000
SKIP_SHARE = 0.10
MIN_SAMPLES = 3
"""a slope needs at least this many samples in the steady state (else: not measured)"""
FIELDS = ("rss_bytes", "fds", "threads", "live_heap_bytes")
METHOD = ("least-squares slope over the steady state x its duration (first to last sample); "
          "steady state: the sender's measured time without warm-up and its first 10 % "
          "(at least 2 s)")


def steady_window(phases: dict[str, Any] | None, origin_ns: int) -> tuple[int, int] | None:
    """The steady state on the series' axis (ns since ``origin_ns``, CLOCK_MONOTONIC), from the
    sender's phases; None when it never measured."""
    phases = phases or {}
    start = phases.get("measure_start_ns")
    end = phases.get("drained_ns") or phases.get("last_send_ns")
    if start is None or end is None or end <= start:
        return None
    skip = max(SKIP_MIN_NS, int(SKIP_SHARE * (end - start)))
    if start + skip >= end:
        return None
    return start + skip - origin_ns, end - origin_ns


def fit(points: Sequence[tuple[float, float]]) -> tuple[float, float] | None:
    """Least squares y = a + b t over ``points`` (t in s): (slope b per second, its standard
    error); None with fewer than MIN_SAMPLES points or no spread in t."""
    n = len(points)
    if n < MIN_SAMPLES:
        return None
    mt = sum(t for t, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((t - mt) ** 2 for t, _ in points)
    if sxx <= 0:
        return None
    slope = sum((t - mt) * (y - my) for t, y in points) / sxx
    residual = sum((y - my - slope * (t - mt)) ** 2 for t, y in points)
    error = math.sqrt(residual / (n - 2) / sxx) if n > 2 else math.inf
    return slope, error


def growth(series: Sequence[dict[str, Any]], window: tuple[int, int] | None) -> dict[str, Any]:
    """Each field's growth over ``window`` (ns on the series' axis), rounded; a field with too
    few samples there (or never sampled: live heap without --count-allocs) is None."""
    out: dict[str, Any] = {"method": METHOD, "samples": 0, "start_ns": None, "end_ns": None}
    inside = [s for s in series if window is not None and window[0] <= s["t_ns"] <= window[1]]
    if inside:
        out.update(samples=len(inside), start_ns=inside[0]["t_ns"], end_ns=inside[-1]["t_ns"])
    span_s = (inside[-1]["t_ns"] - inside[0]["t_ns"]) / 1e9 if inside else 0.0
    for name in FIELDS:
        points = [(s["t_ns"] / 1e9, float(s[name])) for s in inside if s.get(name) is not None]
        found = fit(points) if len(points) == len(inside) else None
        out[name] = None if found is None else round(found[0] * span_s, 3)
        out[f"{name}_per_min"] = None if found is None else round(found[0] * 60, 3)
        out[f"{name}_stderr_per_min"] = (None if found is None or math.isinf(found[1])
                                         else round(found[1] * 60, 3))
    return out
