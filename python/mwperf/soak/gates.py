"""Pass/fail gates on a point (``--gate EXPR``, repeatable; a scenario's ``gates:`` list; a
target file, ``--targets``: soak/targets.py), as ddsperf's -Q: growth of each process's
resources over the steady state, measured messages, time to match the peer, latency, loss, and
the CPU and peak memory of the run's processes as iRobot's target files state them. A graph run
checks its gates over all its edges and nodes (soak/graph_gates.py).

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
         "max<=DURATION", "lost<=N", "loss<=PCT%", "cpu<=PCT%", "rss<=SIZE", "late<=PCT%",
         "too-late<=PCT%")
GROWTH = {"rss-growth": "rss_bytes", "fd-growth": "fds", "threads-growth": "threads",
          "live-allocs-growth": "live_heap_bytes"}
"""growth gate -> the field of a process's ``growth``"""
LATENCY = {"p50": "p50_ns", "p99": "p99_ns", "max": "max_ns"}
UNITS = {"rss-growth": "bytes", "live-allocs-growth": "bytes", "fd-growth": "count",
         "threads-growth": "count", "min-samples": "count", "matched-within": "ns",
         "p50": "ns", "p99": "ns", "max": "ns", "lost": "count", "loss": "percent",
         "cpu": "percent", "rss": "bytes", "late": "percent", "too-late": "percent"}
GRAPH_ONLY = ("late", "too-late")
"""a graph's edges classify each message as late or too late by their period"""
POINT_ONLY = ("matched-within",)
"""one peer's match: a single stream's (a graph's edges match each on their own)"""
_SHAPE = re.compile(r"\s*([a-z0-9-]+)\s*(<=|=)\s*(\S.*?)\s*")


@dataclass(frozen=True)
class Gate:
    """One gate as given and understood."""

    text: str
    metric: str
    limit: float
    """in the unit of UNITS[metric]: bytes, a count, ns or percent"""
    source: str | None = None
    """where it was written when not on the command line: a target file and its key"""

    @property
    def unit(self) -> str:
        return UNITS[self.metric]


def parse_gate(text: str, source: str | None = None) -> Gate:
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
    return Gate(f"{metric}{op}{value}", metric, limit, source)


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


def parse_gates(texts: Any, targets: Any = ()) -> tuple[Gate, ...]:
    """Every gate of ``--gate`` / ``gates:`` (a text or a list of texts), then those of a
    target file (``targets``: (text, source) pairs, soak/targets.py)."""
    items = [] if texts is None else [texts] if isinstance(texts, str) else list(texts)
    return (tuple(parse_gate(t) for t in items)
            + tuple(parse_gate(text, source) for text, source in targets or ()))


def refuse(gates: tuple[Gate, ...], metrics: tuple[str, ...], why: str) -> None:
    """A UsageError for the first gate whose metric is in ``metrics``, naming where it was
    given (--gate or the target file) and ``why``."""
    for gate in gates:
        if gate.metric in metrics:
            where = f"--targets {gate.source}" if gate.source else "--gate"
            raise UsageError(f"{where}: {gate.text}: {why}")


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
    if gate.source is not None:
        entry["source"] = gate.source
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
    if gate.metric in ("cpu", "rss"):
        processes = [(a.get("role") or "agent", a.get("process"))
                     for a in result.get("agents") or []]
        cores = (result.get("host") or {}).get("cores")
        return processes_gate(gate, processes + daemon_processes(result), cores,
                              "agents and daemons")
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


def processes_gate(gate: Gate, processes: list[tuple[str, dict[str, Any] | None]],
                   cores: int | None, what: str) -> dict[str, Any]:
    """A cpu or rss gate over ``processes`` ((name, its process block: cpu_user_s, cpu_sys_s,
    wall_s, max_rss_kib)), as iRobot's target files mean them: cpu = the processes' CPU time
    over their lifetime as a share of all ``cores`` (iRobot: CPU time / (wall x cores)), the
    processes' rates summed; rss = their peak resident sets summed (iRobot runs its nodes in
    one process: shared libraries counted once there, once per process here)."""
    missing = [name for name, p in processes if not p or (gate.metric == "cpu"
                                                          and not p.get("wall_s"))]
    if not processes or missing or (gate.metric == "cpu" and not cores):
        why = (f"no report from {', '.join(missing)}" if missing
               else "no process reported" if not processes else "the core count is unknown")
        return _entry(gate, None, False, f"not measured ({why})")
    if gate.metric == "cpu":
        shares = [(name, 100 * (p["cpu_user_s"] + p["cpu_sys_s"]) / p["wall_s"] / cores)
                  for name, p in processes if p]
        figure = sum(share for _, share in shares)
        detail = f"of {cores} cores, {len(shares)} {what}"
    else:
        shares = [(name, 1024 * p["max_rss_kib"]) for name, p in processes if p]
        figure = float(sum(size for _, size in shares))
        detail = f"peak resident sets of {len(shares)} {what} summed"
    passed = figure <= gate.limit
    top = max(shares, key=lambda item: item[1])
    what_text = (f"{gate.metric} {shown(gate, figure)} ({detail}; largest {top[0]} "
                 f"{shown(gate, top[1])}), needs <= {shown(gate, gate.limit)}")
    return _entry(gate, figure, passed, what_text,
                  [{"name": name, "figure": value, "passed": True} for name, value in shares])


def daemon_processes(result: dict[str, Any]) -> list[tuple[str, dict[str, Any] | None]]:
    """(name, a process block) of each daemon of ``result`` that was sampled (CPU over the
    measurement, peak RSS over its life: the daemon block); one that had exited is left out."""
    out: list[tuple[str, dict[str, Any] | None]] = []
    for daemon in result.get("daemons") or []:
        user, system, wall = daemon.get("cpu_user_s"), daemon.get("cpu_sys_s"), daemon.get("wall_s")
        if None in (user, system, daemon.get("peak_rss_kib")) or not wall:
            continue
        out.append((f"daemon {daemon['name']}", {"cpu_user_s": user, "cpu_sys_s": system,
                                                 "wall_s": wall,
                                                 "max_rss_kib": daemon["peak_rss_kib"]}))
    return out


def failed(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The gates of ``result`` that failed."""
    return [g for g in result.get("gates") or [] if not g.get("passed")]


def exit_code(code: int, failed_count: int) -> int:
    """``mwperf run``'s exit code with gates: 1 when any failed (as ``mwperf compare`` on a
    regression), else the run's own (0 complete, 3 partial, 1 failed)."""
    return 1 if failed_count else code
