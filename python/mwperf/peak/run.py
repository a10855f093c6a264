"""The search as real measurements: each trial one point (a graph point for ``--graph``) built
from the command line with its rate (its rate scale) set, measured, saved and catalogued like
any point; ``--peak-repeat N`` walks N times; the walks, the peak and how it was combined saved
as ``peak.json`` in a folder of its own under the results. Ctrl-C during a trial keeps the
trials measured so far: the walk and the file say partial."""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..durations import parse_duration
from ..errors import UsageError
from ..results import write_json
from .search import Trial, Walk, combined, search
from .verdict import graph_trial, point_trial

PEAK_FILE = "peak.json"
POINT_RANGE = (10.0, 100_000.0)
"""Hz: a single stream's default range"""
GRAPH_RANGE = (0.25, 16.0)
"""x every publisher's rate: a graph's default range"""


@dataclass(frozen=True)
class PeakRequest:
    """What to search and what a passing trial is."""

    low: float
    high: float
    max_loss: float
    """percent"""
    p99_limit_ns: int | None
    """None: each trial's period (a graph: each edge's)"""
    repeat: int
    graph: bool
    topic: str | None = None
    """a graph's input edge: only this topic's publishers scaled (``--peak-topic``)"""


def parse_request(peak_range: str | None, peak_loss: str | None, peak_p99: str | None,
                  peak_repeat: str | None, graph: bool,
                  peak_topic: str | None = None) -> PeakRequest:
    """The flags as a request; a UsageError naming the flag and what is allowed."""
    if peak_topic is not None and not graph:
        raise UsageError("--peak-topic: only with --graph (a single stream's rate is its own)")
    if peak_topic is not None and not str(peak_topic).strip():
        raise UsageError("--peak-topic: a topic of the graph, e.g. /camera/image_raw")
    low, high = GRAPH_RANGE if graph else POINT_RANGE
    unit = "factors of every publisher's rate" if graph else "messages per second"
    if peak_range is not None:
        parts = str(peak_range).replace("x", "").split("..")
        try:
            low, high = (float(p) for p in parts)
        except ValueError:
            low = high = float("nan")
        if not (0 < low < high < math.inf):
            raise UsageError(f"--peak-range: LOW..HIGH in {unit}, 0 < LOW < HIGH "
                             f"(e.g. {'0.5..8' if graph else '100..20000'}), got '{peak_range}'")
    max_loss = 1.0
    if peak_loss is not None:
        try:
            max_loss = float(str(peak_loss).strip().removesuffix("%"))
        except ValueError:
            max_loss = float("nan")
        if not 0 <= max_loss <= 100:
            raise UsageError(f"--peak-loss: a percentage 0..100 such as 1%, got '{peak_loss}'")
    limit: int | None = None
    if peak_p99 not in (None, "period"):
        try:
            limit = parse_duration(str(peak_p99))
        except (UsageError, ValueError):
            limit = 0
        if limit <= 0:
            raise UsageError(f"--peak-p99: 'period' (each trial's own) or a duration such as "
                             f"2ms, got '{peak_p99}'")
    repeat = 1
    if peak_repeat is not None:
        text = str(peak_repeat).strip()
        if not text.isdigit() or not 1 <= int(text) <= 20:
            raise UsageError(f"--peak-repeat: a whole number 1..20 (3 or more: the best and the "
                             f"worst walk are dropped), got '{peak_repeat}'")
        repeat = int(text)
    return PeakRequest(low, high, max_loss, limit, repeat, graph,
                       None if peak_topic is None else str(peak_topic).strip())


def refuse_with(options: dict[str, Any], graph: bool) -> None:
    """The point options a peak search sets itself or cannot judge."""
    for name, flag in (("rate", "--rate"), ("count", "--count"), ("rate_scale", "--rate-scale"),
                       ("baseline", "--baseline")):
        if options.get(name) not in (None, ""):
            raise UsageError(f"--peak-search: not with {flag} (the search sets the rate"
                             f"{' scale' if graph else ''} of each trial)" if name != "baseline"
                             else "--peak-search: not with --baseline")
    if str(options.get("mode") or "roundtrip").strip() in ("throughput", "service"):
        raise UsageError("--peak-search: --mode roundtrip or oneway (throughput already runs as "
                         "fast as possible; a service's calls have their own --rate per client)")


def run_peak(options: dict[str, Any], request: PeakRequest,
             measure_at: Callable[[dict[str, Any]], tuple[dict[str, Any], Path | None, bool]],
             results_dir: Path | None, say: Callable[[str], None]) -> dict[str, Any]:
    """Walk ``request.repeat`` times. ``measure_at(options)`` measures the point of those
    options and returns (its result, its folder, interrupted)."""
    started = datetime.now(timezone.utc)
    walks: list[Walk] = []
    stopped = False

    def probe(rate: float) -> Trial:
        rate = float(f"{rate:.3g}")
        key = "rate_scale" if request.graph else "rate"
        say(f"peak search: trying {_rate_text(rate, request.graph)} ...")
        value = f"{rate:.6g}" if request.topic is None else f"{request.topic}={rate:.6g}"
        result, _, interrupted = measure_at({**options, key: value})
        judge = graph_trial if request.graph else point_trial
        trial = judge(rate, result, request.max_loss, request.p99_limit_ns)
        say(f"peak search: {_rate_text(rate, request.graph)} "
            f"{'passed' if trial.passed else 'failed'}: {trial.why}")
        return Trial(trial.rate, trial.passed, trial.why, trial.figures, trial.run_id,
                     interrupted)

    for _ in range(request.repeat):
        walk = search(probe, request.low, request.high)
        walks.append(walk)
        if walk.verdict == "interrupted":
            stopped = True
            break
    peaks = [w.peak for w in walks if w.peak is not None and w.verdict == "found"]
    peak, how = combined(peaks)
    tag = secrets.token_hex(2)
    what = options.get("graph") or options.get("transport") or "udp"
    out = {"kind": "peak-search", "version": 1,
           "run_id": f"{started:%Y%m%dT%H%M%SZ}-peak-{str(what).replace('/', '_')}-{tag}",
           "started_at": started.isoformat(), "status": "partial" if stopped else "complete",
           "request": asdict(request), "unit": "x rate" if request.graph else "Hz",
           "peak": peak, "how": how, "peaks": [w.peak for w in walks],
           "walks": [{"verdict": w.verdict, "peak": w.peak,
                      "trials": [asdict(t) for t in w.trials]} for w in walks]}
    if results_dir is not None:
        write_json(results_dir / out["run_id"] / PEAK_FILE, out)
    return out


def _rate_text(rate: float, graph: bool) -> str:
    return f"x{rate:.6g}" if graph else f"{rate:.6g} Hz"  # a graph: the factor
