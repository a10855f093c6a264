"""Budgets: how much worse NEW may be than BASE before it counts, per metric.

``--budget METRIC=LIMIT`` (repeatable) or ``--budget-file F.yaml`` (one file per platform,
as ros2-performance keeps its targets): a mapping ``METRIC: LIMIT`` and optionally
``alpha: 0.05``. LIMIT is relative (``+10%``), in percentage points for loss (``+0.5pp``), a
duration for latencies (``+50us``), a size for RSS (``+8MiB``), a count for allocations per
message (``+0``) or bytes for wire bytes per message (``+16``); the sign is optional
(budgets only ever allow getting worse). Throughput (delivered msgs/s of ``--mode throughput``
points) gets worse by falling: its budget is ``-5%`` (or ``5%``; a ``+`` is refused as
ambiguous) or an absolute fall in msgs/s (``-1000``). A layer of ``--layers`` points
(``layer.NAME``, e.g. ``layer.middleware_send=+10%`` or ``=+50us``) is held to its p50, relative
or as a duration (verdict.py says how it is decided). Without any budget the defaults below
apply; a metric without a budget is shown but never fails the comparison.
"""

import math
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..durations import parse_duration
from ..errors import UsageError
from ..layer_names import NAMES as LAYER_NAMES
from ..sizes import parse_size
from .stats import ALPHA

LAYER_PREFIX = "layer."
LAYER_METRICS = tuple(LAYER_PREFIX + name for name in LAYER_NAMES)
"""--layers points (docs/layers.md): each layer's p50 (round trips: both directions summed),
in ns; compared where a side has the layer (a verdict needs both), no default budget"""
METRICS = ("p50", "p99", "max", "loss", "cpu", "rss", "allocs_per_msg", "wire_bytes",
           "timeouts", "server_p99", "throughput") + LAYER_METRICS
SERVICE_METRICS = ("timeouts", "server_p99")
"""service points' (--mode service): calls that timed out (% of the calls made, budgets in
percentage points like loss) and the server's time per call (p99, a duration); compared only
where a side measured them"""
THROUGHPUT_METRICS = ("throughput",)
"""throughput points' (--mode throughput, docs/throughput.md): delivered messages per second,
summed over the subscribers; worse when LOWER (the only such metric); compared only where a
side is a throughput point"""
LOWER_IS_WORSE = THROUGHPUT_METRICS
COST_METRICS = ("allocs_per_msg", "wire_bytes") + SERVICE_METRICS + THROUGHPUT_METRICS
"""what the middleware costs (docs/costs.md): heap allocations per message (every agent's,
summed; --count-allocs) and IP bytes on the wire per message (both ways; --wire-bytes).
Compared only where both sides measured them; budgets as a count (allocs_per_msg=+0) or
bytes (wire_bytes=+16), or relative (+5%)"""
GRAPH_METRICS = ("edge.p50", "edge.p99", "edge.max", "edge.loss", "chain.p50", "chain.p99",
                 "chain.max", "call.p50", "call.p99", "call.timeouts")
"""graph runs' (compare/graphs.py): each edge's latency and loss, each chain's end to end,
each call edge's latency and timeouts; budgets as their stream counterparts"""
LATENCY_METRICS = ("p50", "p99", "max", "server_p99", "edge.p50", "edge.p99", "edge.max",
                   "chain.p50", "chain.p99", "chain.max", "call.p50", "call.p99")
SHARE_METRICS = ("loss", "cpu", "timeouts", "edge.loss", "call.timeouts")
"""the metrics in % whose budget may be in percentage points"""
DEFAULTS = {"p50": "+10%", "p99": "+10%", "loss": "+0.5pp", "edge.p50": "+10%",
            "edge.p99": "+10%", "edge.loss": "+0.5pp", "chain.p50": "+10%", "chain.p99": "+10%",
            "call.p50": "+10%", "call.p99": "+10%", "call.timeouts": "+0.5pp"}
_FORM = re.compile(r"^(?P<sign>[+-]?)\s*(?P<number>[^%p]+?)\s*(?P<unit>%|pp)?$")


@dataclass(frozen=True)
class Budget:
    """How much worse a metric may get: ``relative`` (fraction of BASE) or ``absolute`` (in
    the metric's unit: ns, percentage points, %, KiB)."""

    metric: str
    text: str
    relative: float | None = None
    absolute: float | None = None

    def exceeded(self, base: float, new: float) -> bool:
        """True when ``new`` is worse than ``base`` by more than the budget allows (for a
        metric in LOWER_IS_WORSE: lower)."""
        if self.metric in LOWER_IS_WORSE:
            if self.relative is not None:
                return new < base * (1 - self.relative)
            assert self.absolute is not None
            return base - new > self.absolute
        if self.relative is not None:
            return new > base * (1 + self.relative) + (1e-12 if base == 0 else 0)
        assert self.absolute is not None
        return new - base > self.absolute


@dataclass(frozen=True)
class Budgets:
    """The budgets in force and the test level."""

    limits: dict[str, Budget]
    alpha: float = ALPHA
    source: str = "defaults"


def parse_budget(metric: str, text: str, where: str) -> Budget:
    """One budget ``text`` for ``metric``; ``where`` names the flag or file:line in errors."""
    if metric not in METRICS + GRAPH_METRICS:
        if metric.startswith(LAYER_PREFIX):
            raise UsageError(f"{where}: unknown layer '{metric[len(LAYER_PREFIX):]}' in "
                             f"'{metric}'; the layers are {', '.join(LAYER_NAMES)} (e.g. "
                             f"layer.middleware_send=+10%)")
        raise UsageError(f"{where}: unknown metric '{metric}'; allowed: "
                         f"{', '.join(m for m in METRICS if m not in LAYER_METRICS)}, "
                         f"layer.NAME (NAME: {', '.join(LAYER_NAMES)}); for graph runs "
                         f"{', '.join(GRAPH_METRICS)}")
    raw = str(text).strip()
    match = _FORM.match(raw)
    hint = _allowed(metric)
    if not match:
        raise UsageError(f"{where}: {metric}={raw!r} is not a budget; {hint}")
    number, unit = match["number"].strip(), match["unit"]
    falls = metric in LOWER_IS_WORSE
    if match["sign"] == ("+" if falls else "-"):
        raise UsageError(f"{where}: {metric}={raw}: " + (
            f"{metric} gets worse by falling: write -{number}{unit or ''}" if falls else
            f"budgets say how much worse (higher) NEW may be: write +{number}{unit or ''}")
            + f"; {hint}")
    if unit in ("%", "pp"):
        if unit == "pp" and metric not in SHARE_METRICS:
            raise UsageError(f"{where}: {metric}={raw}: percentage points (pp) apply to "
                             f"{', '.join(SHARE_METRICS)} only; {hint}")
        try:
            value = float(number)
        except ValueError:
            raise UsageError(f"{where}: {metric}={raw!r} is not a budget; {hint}") from None
        if not math.isfinite(value) or value < 0:
            raise UsageError(f"{where}: {metric}={raw}: must be a finite number >= 0; {hint}")
        if unit == "%":
            return Budget(metric, raw, relative=value / 100)
        return Budget(metric, raw, absolute=value)
    try:
        if metric in LATENCY_METRICS or metric in LAYER_METRICS:
            return Budget(metric, raw, absolute=float(parse_duration(number)))
        if metric == "rss":
            return Budget(metric, raw, absolute=parse_size(number) / 1024)
        if metric in COST_METRICS:  # and throughput: msgs/s
            amount = float(number)
            if math.isfinite(amount) and amount >= 0:
                return Budget(metric, raw, absolute=amount)
    except ValueError:
        pass
    raise UsageError(f"{where}: {metric}={raw!r} is not a budget; {hint}")


def from_flags(flags: tuple[str, ...]) -> dict[str, Budget]:
    """The ``--budget METRIC=LIMIT`` flags."""
    found: dict[str, Budget] = {}
    for flag in flags:
        metric, sep, limit = flag.partition("=")
        if not sep:
            raise UsageError(f"--budget: {flag!r} is not METRIC=LIMIT (e.g. p99=+10%, "
                             f"loss=+0.5pp)")
        found[metric.strip()] = parse_budget(metric.strip(), limit, "--budget")
    return found


def from_file(path: Path) -> Budgets:
    """A YAML budget file: ``METRIC: LIMIT`` lines and optionally ``alpha``."""
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise UsageError(f"--budget-file: cannot read {path}: {exc.strerror or exc}") from None
    try:
        node = yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        raise UsageError(f"--budget-file {path}{line}: not YAML "
                         f"({getattr(exc, 'problem', None) or exc})") from None
    if node is None:
        raise UsageError(f"--budget-file {path}: empty; give e.g. 'p99: +10%'")
    if not isinstance(node, yaml.MappingNode):
        raise UsageError(f"--budget-file {path}:{node.start_mark.line + 1}: expected a mapping "
                         f"METRIC: LIMIT (e.g. 'p99: +10%')")
    limits: dict[str, Budget] = {}
    alpha = ALPHA
    for key, value in node.value:
        where = f"--budget-file {path}:{key.start_mark.line + 1}"
        if not isinstance(value, yaml.ScalarNode):
            raise UsageError(f"{where}: {key.value}: expected a single value such as +10%")
        if key.value == "alpha":
            try:
                alpha = float(value.value)
            except ValueError:
                alpha = -1.0
            if not 0 < alpha < 1:
                raise UsageError(f"{where}: alpha: must be a number between 0 and 1, got "
                                 f"{value.value!r}")
            continue
        limits[key.value] = parse_budget(key.value, value.value, where)
    return Budgets(limits, alpha, str(path))


def resolve(flags: tuple[str, ...], file: str | None) -> Budgets:
    """The budgets of the command line: the file's, then the flags' (which win), else the
    defaults."""
    budgets = from_file(Path(file)) if file else Budgets({}, ALPHA, "")
    given = from_flags(flags)
    if not file and not given:
        defaults = {m: parse_budget(m, t, "default") for m, t in DEFAULTS.items()}
        return Budgets(defaults, ALPHA, "defaults")
    source = " + ".join(s for s in (budgets.source, "--budget" if given else "") if s)
    return Budgets({**budgets.limits, **given}, budgets.alpha, source)


def _allowed(metric: str) -> str:
    extra = {"loss": " or +0.5pp", "cpu": " or +5pp", "timeouts": " or +0.1pp", "rss": " or +8MiB",
             "edge.loss": " or +0.5pp", "call.timeouts": " or +0.1pp",
             "allocs_per_msg": " or +N allocations per message (e.g. +0)",
             "wire_bytes": " or +N bytes per message (e.g. +16)"}.get(metric, "")
    if metric in LATENCY_METRICS or metric in LAYER_METRICS:
        extra = " or +50us"
    if metric in LOWER_IS_WORSE:
        return "allowed: -N% (how far below BASE, e.g. -5%) or -N messages per second"
    return f"allowed: +N% (relative){extra}"
