"""One comparison row: a metric of one matched configuration, its delta, the statistical test
that decided between regression and noise (named per row), and the verdict.

Verdicts: ``ok`` (within budget), ``regression`` (over budget and the test says the difference
is real, or no test exists for the metric: an over-budget single value is taken at its word),
``noise`` (over budget but not significant), ``better`` (significantly lower), ``info`` (no
budget for the metric: shown, never fails).

Methods, in order of preference (significant: p <= alpha):
- repetitions on both sides, enough of them for the exact test to reach alpha (3 vs 3 at 0.05):
  exact Mann-Whitney U over the per-repetition values;
- p50/p99: Mann-Whitney U over the quantiles of batches of consecutive messages (evidence.py:
  raw samples, else per-second series; the batches of repetitions pooled), which tolerates
  bursts; when single runs are too short for batches: Mann-Whitney U over the grouped
  distributions (p50) or non-overlapping 95 % order-statistic confidence intervals (p99),
  which assume independent messages and say so;
- loss: two-proportion z-test on lost/sent (summed over repetitions);
- throughput (delivered msgs/s of --mode throughput points, worse when lower): Mann-Whitney U
  over the messages delivered in each whole second of the per-second series (the seconds of
  repetitions pooled) when both sides have at least ``MIN_SECONDS``; else the budget decides;
- layer.NAME (--layers: the layer's p50): repetitions on both sides, as above; else no test —
  the result's layers section holds a few quantiles per layer, not per-message samples or
  batches, so there is nothing to test a single run's p50 against; the budget alone decides and
  the method column says so;
- max, cpu, rss of single runs: no test (one value per run); the budget alone decides;
- a configuration BASE measured and NEW failed to: a ``status`` row, always a regression.
"""

import math
import statistics
from dataclasses import dataclass

from ..durations import format_ns
from ..report.data import Point
from ..store.schema import ROLES
from .budget import LAYER_METRICS, LAYER_PREFIX, LOWER_IS_WORSE, Budget
from .evidence import MIN_BATCHES, Evidence, Grouped
from .stats import mann_whitney, permutation_u, quantile_interval, two_proportions

QUANTILE = {"p50": 0.5, "p99": 0.99}
MIN_SECONDS = MIN_BATCHES
"""whole seconds each side needs for the throughput test over the per-second series"""


@dataclass
class Row:
    """One metric of one configuration."""

    config: str
    metric: str
    base: float | None
    new: float | None
    method: str
    p_value: float | None
    verdict: str
    budget: str | None

    @property
    def delta(self) -> float | None:
        return None if self.base is None or self.new is None else self.new - self.base

    @property
    def delta_pct(self) -> float | None:
        return (100 * (self.new - self.base) / self.base
                if self.base and self.new is not None else None)


def value(point: Point, metric: str) -> float | None:
    """The metric of one point: ns for latencies, % for loss and CPU (sender + server, of one
    core), KiB for RSS (agents + daemons), allocations per message (every agent's, summed),
    IP bytes on the wire per message (both ways), delivered messages per second of a
    throughput point (None for other modes: their msgs/s is the rate they were asked for), a
    layer's p50 in ns (None without --layers or where the layer was not observable)."""
    if metric in LAYER_METRICS:
        return point.get(f"layer_{metric[len(LAYER_PREFIX):]}_p50_ns")
    if metric == "throughput":
        return point.get("msgs_per_s") if point.get("mode") == "throughput" else None
    if metric in ("p50", "p99", "max"):
        return point.get(f"latency_{metric}_ns")
    if metric == "server_p99":
        return point.get("server_time_p99_ns")
    if metric == "timeouts":
        timeouts, sent = point.get("calls_timeouts"), point.get("sent")
        return None if timeouts is None else (100.0 * timeouts / sent if sent else 0.0)
    if metric == "loss":
        return point.get("loss_pct") or 0.0
    if metric == "cpu":
        parts = [point.get(f"{r}_cpu_pct") for r in ROLES]
        return sum(p for p in parts if p is not None) if any(p is not None for p in parts) \
            else None
    if metric == "allocs_per_msg":
        parts = [point.get(f"{r}_allocs_per_msg") for r in ROLES]
        return (float(sum(p for p in parts if p is not None))
                if any(p is not None for p in parts) else None)
    if metric == "wire_bytes":
        up, down = point.get("wire_up_bytes_per_msg"), point.get("wire_down_bytes_per_msg")
        return None if up is None else float(up + (down or 0))
    parts = [point.get(f"{r}_rss_kib") for r in ROLES]
    parts.append(point.get("daemons_rss_kib"))
    return float(sum(p for p in parts if p is not None)) if any(parts) else None


def decide(config: str, metric: str, base: list[Point], new: list[Point],
           budget: Budget | None, alpha: float, evidence: Evidence) -> Row:
    """The row of ``metric`` for the repetitions ``base`` and ``new`` of one configuration."""
    base_values = [v for v in (value(p, metric) for p in base) if v is not None]
    new_values = [v for v in (value(p, metric) for p in new) if v is not None]
    if not base_values or not new_values:
        return Row(config, metric, None, None, "not measured on both sides", None, "info",
                   budget.text if budget else None)
    b, n = statistics.median(base_values), statistics.median(new_values)
    method, p_value, significant = _test(metric, base, new, base_values, new_values, alpha,
                                         evidence)
    if budget is None:
        verdict = "info"
    elif budget.exceeded(b, n):
        verdict = "regression" if significant in (True, None) else "noise"
    elif (n > b if metric in LOWER_IS_WORSE else n < b) and _better(
            metric, base, new, alpha, evidence, base_values, new_values):
        verdict = "better"
    else:
        verdict = "ok"
    return Row(config, metric, b, n, method, p_value, verdict, budget.text if budget else None)


def failed_row(config: str, points: list[Point]) -> Row:
    """The row of a configuration BASE measured and NEW did not (its points failed)."""
    reasons = "; ".join(sorted({str(p.get("status_reason") or p.status) for p in points}))
    return Row(config, "status", None, None, f"NEW measured nothing: {reasons}", None,
               "regression", None)


def _test(metric: str, base: list[Point], new: list[Point], base_values: list[float],
          new_values: list[float], alpha: float, evidence: Evidence
          ) -> tuple[str, float | None, bool | None]:
    """(method, p-value or None, significant: True/False, None when no test applies);
    significant means p <= alpha (that NEW is worse: larger, or for LOWER_IS_WORSE smaller)."""
    if metric in LOWER_IS_WORSE:  # the tests are one-sided "NEW is larger": turn the values
        base_values, new_values = [-v for v in base_values], [-v for v in new_values]
    repeated = len(base_values) >= 2 and len(new_values) >= 2
    reachable = repeated and 1 / math.comb(len(base_values) + len(new_values),
                                           len(new_values)) <= alpha
    if reachable:
        p = permutation_u(base_values, new_values)
        return (f"exact Mann-Whitney U over repetitions ({len(base_values)} vs "
                f"{len(new_values)})", p, p <= alpha)
    too_few = (f"; {len(base_values)} vs {len(new_values)} repetitions cannot reach α with the "
               f"exact test" if repeated else "")
    if metric in LAYER_METRICS:
        return (f"none: a layer's figures are quantiles, not samples (budget decides on the "
                f"p50{', median of repetitions' if repeated else ''}){too_few}", None, None)
    if metric == "throughput":
        seconds = _seconds(base), _seconds(new)
        if min(len(seconds[0]), len(seconds[1])) >= MIN_SECONDS:
            p = mann_whitney([(-v, 1) for v in seconds[0]], [(-v, 1) for v in seconds[1]])
            return (f"Mann-Whitney U over messages delivered per second ({len(seconds[0])} vs "
                    f"{len(seconds[1])} whole seconds){too_few}", p, p <= alpha)
    if metric == "loss":
        lost_b, sent_b = _accounting(base)
        lost_n, sent_n = _accounting(new)
        p = two_proportions(lost_b, sent_b, lost_n, sent_n)
        return f"two-proportion z-test on lost/sent{too_few}", p, p <= alpha
    if metric in QUANTILE:
        q = QUANTILE[metric]
        pooled = _pooled_batches(base, q, evidence), _pooled_batches(new, q, evidence)
        if pooled[0] and pooled[1] and pooled[0][1] == pooled[1][1]:
            (b, what), (n, _) = pooled[0], pooled[1]
            p = mann_whitney([(v, 1) for v in b], [(v, 1) for v in n])
            return (f"Mann-Whitney U over {metric}s of {len(b)} vs {len(n)} {what}{too_few}",
                    p, p <= alpha)
        if len(base) == 1 and len(new) == 1:
            return _unbatched(metric, base[0], new[0], alpha, evidence)
        if repeated:
            return (f"none: too few messages for batches, and {len(base_values)} vs "
                    f"{len(new_values)} repetitions cannot reach α with the exact test (budget "
                    f"decides)", None, None)
    if len(base) != len(new) and min(len(base), len(new)) == 1:
        return (f"none: repetitions on one side only ({len(base)} vs {len(new)}; budget "
                f"decides)", None, None)
    if repeated:
        return (f"none: {len(base_values)} vs {len(new_values)} repetitions cannot reach α with "
                f"the exact test (budget decides)", None, None)
    return "none: one value per run (budget decides)", None, None


def _pooled_batches(points: list[Point], q: float, evidence: Evidence
                    ) -> tuple[list[float], str] | None:
    """The batch quantiles of every point (repetitions pooled), when all have the same kind."""
    found = [evidence.batches(point, q) for point in points]
    if not found or any(f is None for f in found) or len({f[1] for f in found if f}) != 1:
        return None
    return [v for f in found if f for v in f[0]], found[0][1]  # type: ignore[index]


def _unbatched(metric: str, base: Point, new: Point, alpha: float, evidence: Evidence
               ) -> tuple[str, float | None, bool | None]:
    """The fallback for single runs too short for batches: tests that assume independent
    messages, and say so."""
    (gb, source), (gn, other) = evidence.grouped(base), evidence.grouped(new)
    if source != other:  # raw samples on one side only: compare like with like
        gb, gn, source = _histogram(base), _histogram(new), "HDR histograms"
    if metric == "p50":
        p = mann_whitney(gb, gn)
        return (f"Mann-Whitney U over {source} (too few for batches: assumes independent "
                f"messages)", p, p <= alpha)
    ib, in_ = quantile_interval(gb, 0.99, alpha), quantile_interval(gn, 0.99, alpha)
    if ib is None or in_ is None:
        return "no samples", None, None
    return (f"95 % order-statistic CIs of p99 over {source} (base {_ns(ib)}, new "
            f"{_ns(in_)}; too few for batches: assumes independent messages)", None,
            in_[0] > ib[1])


def _better(metric: str, base: list[Point], new: list[Point], alpha: float,
            evidence: Evidence, base_values: list[float], new_values: list[float]
            ) -> bool:
    """True when NEW is significantly lower (the same tests, sides swapped)."""
    _, _, significant = _test(metric, new, base, new_values, base_values, alpha, evidence)
    return significant is True


def _seconds(points: list[Point]) -> list[float]:
    """The messages delivered in each whole second of the points' per-second series (the last
    second of each point left out: the receive window may end inside it)."""
    return [float(row["received"]) for p in points for row in p.series[:-1]
            if row.get("received") is not None]


def _accounting(points: list[Point]) -> tuple[int, int]:
    return (sum(p.get("lost") or 0 for p in points), sum(p.get("sent") or 0 for p in points))


def _histogram(point: Point) -> Grouped:
    return [(float(v), c) for v, c in point.histogram]


def _ns(interval: tuple[float, float]) -> str:
    return f"{format_ns(interval[0])}–{format_ns(interval[1])}"
