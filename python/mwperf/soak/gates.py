"""Pass/fail gates on a point (``--gate EXPR``, repeatable; a scenario's ``gates:`` list), as
ddsperf's -Q: growth of each process's resources over the steady state, measured messages,
time to match the peer, latency and loss.

A gate is checked on the point's result once it is merged (parts/resources.py); its figure
comes from the result alone, and a figure the run did not measure fails the gate ("not
measured"): a gate never passes on no evidence. A growth gate is checked for every process it
applies to (rss/fd/threads: every local agent and daemon; live allocations: every agent with
--count-allocs) and names those that failed; its figure is the worst one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..durations import format_ns, parse_duration
from ..errors import UsageError
from ..sizes import format_bytes, parse_size

FORMS = ("rss-growth<=SIZE", "fd-growth<=N", "threads-growth<=N", "live-allocs-growth<=SIZE",
         "min-samples=N", "matched-within=DURATION", "p50<=DURATION", "p99<=DURATION",
         "max<=DURATION", "lost<=N", "loss<=PCT%")
GROWTH = {"rss-growth": "rss_bytes", "fd-growth": "fds", "threads-growth": "threads",
          "live-allocs-growth": "live_heap_bytes"}
"""growth gate -> the field of a process's ``growth``"""
LATENCY = {"p50": "p50_ns", "p99": "p99_ns", "max": "max_ns"}
UNITS = {"rss-growth": "bytes", "live-allocs-growth": "bytes", "fd-growth": "count",
         "threads-growth": "count", "min-samples": "count", "matched-within": "ns",
         "p50": "ns", "p99": "ns", "max": "ns", "lost": "count", "loss": "percent"}
_SHAPE = re.compile(r"\s*([a-z0-9-]+)\s*(<=|=)\s*(\S.*?)\s*")


@dataclass(frozen=True)
class Gate:
    """One gate as given and understood."""

    text: str
    metric: str
    limit: float
    """in the unit of UNITS[metric]: bytes, a count, ns or percent"""

    @property
    def unit(self) -> str:
        return UNITS[self.metric]


def parse_gate(text: str) -> Gate:
    """``text`` as a gate; UsageError naming --gate and the allowed forms otherwise."""
    match = _SHAPE.fullmatch(str(text))
    metric, op, value = match.groups() if match else ("", "", "")
    wanted = "=" if metric in ("min-samples", "matched-within") else "<="
    try:
        if metric not in UNITS or op != wanted:
            raise ValueError
        limit = _limit(metric, value)
    except ValueError:
        raise UsageError(f"--gate: '{text}' is not a gate; allowed: {', '.join(FORMS)} "
                         f"(SIZE like 2MiB or 0, DURATION like 5s or 2ms)") from None
    return Gate(f"{metric}{op}{value}", metric, limit)


def _limit(metric: str, value: str) -> float:
    unit = UNITS[metric]
    if unit == "bytes":
        return float(parse_size(value))
    if unit == "ns":
        return float(parse_duration(value))
    if unit == "percent":
        number = float(value.removesuffix("%"))
    elif metric in ("min-samples", "lost"):
        if not value.isdigit():
            raise ValueError(value)
        number = float(value)
    else:
        number = float(value)
    if number < 0 or number != number:
        raise ValueError(value)
    return number


def parse_gates(texts: Any) -> tuple[Gate, ...]:
    """Every gate of ``--gate`` / ``gates:`` (a text or a list of texts)."""
    if texts is None:
        return ()
    items = [texts] if isinstance(texts, str) else list(texts)
    return tuple(parse_gate(t) for t in items)


def shown(gate: Gate, figure: float | None) -> str:
    """A figure in the gate's unit, for people."""
    if figure is None:
        return "not measured"
    if gate.unit == "bytes":
        return ("-" if figure < 0 else "") + format_bytes(int(round(abs(figure))))
    if gate.unit == "ns":
        return format_ns(figure)
    if gate.unit == "percent":
        return f"{figure:.3g}%"
    return f"{figure:g}" if float(figure).is_integer() else f"{figure:.3g}"


def evaluate(gates: tuple[Gate, ...], result: dict[str, Any]) -> list[dict[str, Any]]:
    """The result's ``gates``: each gate's figure, limit, passed and what it says."""
    return [_growth(g, result) if g.metric in GROWTH else _point(g, result) for g in gates]


def _entry(gate: Gate, figure: float | None, passed: bool, what: str,
           processes: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"gate": gate.text, "metric": gate.metric, "unit": gate.unit,
                             "figure": figure, "limit": gate.limit, "passed": passed,
                             "what": what}
    if processes is not None:
        entry["processes"] = processes
    return entry


def _growth(gate: Gate, result: dict[str, Any]) -> dict[str, Any]:
    field = GROWTH[gate.metric]
    resources = result.get("resources") or {}
    rows = [(p["name"], (p.get("growth") or {}).get(field), p.get("growth") or {})
            for p in resources.get("processes") or []
            if field != "live_heap_bytes" or any(s.get("live_heap_bytes") is not None
                                                 for s in p.get("series") or [])]
    if not rows:
        what = ("no process had its live heap sampled (--count-allocs, agents on this machine)"
                if field == "live_heap_bytes" else "no process was sampled (agents and daemons "
                "on this machine only)")
        return _entry(gate, None, False, f"not measured: {what}", [])
    processes = [{"name": name, "figure": figure,
                  "passed": figure is not None and figure <= gate.limit} for name, figure, _ in rows]
    failed = [p for p in processes if not p["passed"]]
    measured = [p["figure"] for p in processes if p["figure"] is not None]
    worst = max(measured) if measured else None
    span = next((g for _, _, g in rows if g.get("start_ns") is not None), {})
    over = (f" over {((span['end_ns'] - span['start_ns']) / 1e9):.0f} s of steady state"
            if span else "")
    if failed:
        named = ", ".join(f"{p['name']} {shown(gate, p['figure'])}" for p in failed)
        what = f"failed for {named}{over} (limit {shown(gate, gate.limit)})"
    else:
        top = max(processes, key=lambda p: p["figure"])
        what = (f"largest {top['name']} {shown(gate, top['figure'])}{over} "
                f"(limit {shown(gate, gate.limit)}; {len(processes)} processes)")
    return _entry(gate, worst, not failed, what, processes)


def _point(gate: Gate, result: dict[str, Any]) -> dict[str, Any]:
    measurement = result.get("measurement") or {}
    response = measurement.get("response") or {}
    accounting = measurement.get("accounting") or {}
    figure: float | None
    if gate.metric == "min-samples":
        figure = response.get("count")
        passed = figure is not None and figure >= gate.limit
        relation = ">="
    elif gate.metric == "matched-within":
        figure = (result.get("discovery") or {}).get("matched_ns")
        passed, relation = figure is not None and figure <= gate.limit, "<="
    elif gate.metric in LATENCY:
        figure = response.get(LATENCY[gate.metric])
        passed, relation = figure is not None and figure <= gate.limit, "<="
    elif gate.metric == "lost":
        figure = accounting.get("lost")
        passed, relation = figure is not None and figure <= gate.limit, "<="
    else:  # loss
        sent = accounting.get("sent")
        figure = 100 * accounting["lost"] / sent if sent else None
        passed, relation = figure is not None and figure <= gate.limit, "<="
    what = (f"{gate.metric} {shown(gate, figure)}, needs {relation} {shown(gate, gate.limit)}"
            if figure is not None else f"not measured ({gate.metric} is not in the result)")
    return _entry(gate, figure, bool(passed), what)


def failed(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The gates of ``result`` that failed."""
    return [g for g in result.get("gates") or [] if not g.get("passed")]


def exit_code(code: int, failed_count: int) -> int:
    """``mwperf run``'s exit code with gates: 1 when any failed (as ``mwperf compare`` on a
    regression), else the run's own (0 complete, 3 partial, 1 failed)."""
    return 1 if failed_count else code
