"""The statistics that decide whether a difference between BASE and NEW is real or noise.

All tests are one-sided (H1: NEW is worse, i.e. larger) at level ``ALPHA`` unless the budget
file sets another; a difference is significant when p <= alpha. Distributions are given as
grouped counts ``[(value, count), ...]``: raw samples grouped by DuckDB, or an HDR histogram
(values then resolved to 3 significant digits, which only adds ties).

- :func:`mann_whitney` — Mann-Whitney U (Wilcoxon rank-sum) with mid-ranks for ties, normal
  approximation with tie and continuity correction (Conover, *Practical Nonparametric
  Statistics*, ch. 5.1). Used for the p50 (a shift of the bulk of the distribution).
- :func:`quantile_interval` — the distribution-free confidence interval of a quantile from
  order statistics (the rank of the q-quantile of n samples is Binomial(n, q); normal
  approximation). Used for the p99: NEW is worse when its interval lies wholly above BASE's.
- :func:`permutation_u` — the exact Mann-Whitney test over per-repetition values (all
  assignments enumerated), used when both sides have repetitions.
- :func:`two_proportions` — the two-proportion z-test, for loss (lost of sent).

Caveat stated in docs/report.md: successive messages are not independent (a stall delays many
in a row), so p-values over raw samples are optimistic; that is why a regression also needs
the budget to be exceeded, and why repetitions are the stronger evidence.
"""

import itertools
import math
from collections.abc import Sequence

ALPHA = 0.05
EXACT_LIMIT = 200_000
"""enumerate at most this many assignments in the exact permutation test"""
Grouped = Sequence[tuple[float, int]]


def normal_sf(z: float) -> float:
    """P(Z > z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2))


def mann_whitney(base: Grouped, new: Grouped) -> float:
    """One-sided p-value that ``new`` is stochastically larger than ``base`` (1.0 when either
    side is empty or every value is tied)."""
    counts: dict[float, list[int]] = {}
    for value, count in base:
        counts.setdefault(value, [0, 0])[0] += count
    for value, count in new:
        counts.setdefault(value, [0, 0])[1] += count
    n = sum(c for _, c in base)
    m = sum(c for _, c in new)
    total = n + m
    if not n or not m:
        return 1.0
    below = 0
    rank_sum_new = 0.0
    ties = 0.0
    for value in sorted(counts):
        a, b = counts[value]
        t = a + b
        rank_sum_new += b * (below + (t + 1) / 2)
        ties += t ** 3 - t
        below += t
    u_new = rank_sum_new - m * (m + 1) / 2
    variance = n * m / 12 * ((total + 1) - ties / (total * (total - 1)))
    if variance <= 0:
        return 1.0
    z = (u_new - n * m / 2 - 0.5) / math.sqrt(variance)
    return normal_sf(z)


def quantile_interval(grouped: Grouped, q: float,
                      alpha: float = ALPHA) -> tuple[float, float] | None:
    """The two-sided (1 − alpha) confidence interval of the q-quantile of ``grouped`` (sorted
    by value): the values at ranks n·q ∓ z·sqrt(n·q·(1−q)); None when there are no samples."""
    n = sum(c for _, c in grouped)
    if not n:
        return None
    z = _z(1 - alpha / 2)
    spread = z * math.sqrt(n * q * (1 - q))
    low_rank = max(1, math.floor(n * q - spread))
    high_rank = min(n, math.ceil(n * q + spread) + 1)
    return _value_at(grouped, low_rank), _value_at(grouped, high_rank)


def permutation_u(base: Sequence[float], new: Sequence[float]) -> float:
    """Exact one-sided p-value of the Mann-Whitney U for small samples (repetitions): the
    fraction of all splits of the pooled values whose U is at least the observed one."""
    if not base or not new:
        return 1.0
    pooled = list(base) + list(new)
    m = len(new)
    observed = _u(base, new)
    if math.comb(len(pooled), m) > EXACT_LIMIT:
        return mann_whitney([(v, 1) for v in base], [(v, 1) for v in new])
    at_least = total = 0
    for chosen in itertools.combinations(range(len(pooled)), m):
        picked = set(chosen)
        b = [pooled[i] for i in chosen]
        a = [pooled[i] for i in range(len(pooled)) if i not in picked]
        total += 1
        at_least += _u(a, b) >= observed - 1e-9
    return at_least / total


def two_proportions(lost_base: int, sent_base: int, lost_new: int, sent_new: int) -> float:
    """One-sided p-value that NEW's loss proportion exceeds BASE's (two-proportion z-test)."""
    if not sent_base or not sent_new:
        return 1.0
    pooled = (lost_base + lost_new) / (sent_base + sent_new)
    if pooled in (0.0, 1.0):
        return 1.0
    se = math.sqrt(pooled * (1 - pooled) * (1 / sent_base + 1 / sent_new))
    return normal_sf((lost_new / sent_new - lost_base / sent_base) / se)


def _u(base: Sequence[float], new: Sequence[float]) -> float:
    return sum((b > a) + 0.5 * (b == a) for a in base for b in new)


def _value_at(grouped: Grouped, rank: int) -> float:
    seen = 0
    for value, count in grouped:
        seen += count
        if seen >= rank:
            return value
    return grouped[-1][0]


def _z(p: float) -> float:
    """The standard normal quantile (bisection on erfc; precise enough for test thresholds)."""
    low, high = -10.0, 10.0
    for _ in range(80):
        mid = (low + high) / 2
        if 1 - normal_sf(mid) < p:
            low = mid
        else:
            high = mid
    return (low + high) / 2
