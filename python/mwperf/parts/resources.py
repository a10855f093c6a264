"""The resources part (every point and graph run): each local agent's (a graph's: node's) and
daemon's RSS, open descriptors, threads and (``--count-allocs``) live heap sampled once a
second from the sender's start (a graph's go instant) to the end of its measurement
(soak/sampler.py), their growth over the steady state (soak/growth.py) into the result's
``resources``, and a point's gates (``--gate``, soak/gates.py) checked on the merged result into
its ``gates`` (a graph run's: graph/measure.py, over its edges too). Last in the registry: a
gate reads what the other parts wrote."""

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..soak.gates import GRAPH_ONLY, evaluate, parse_gates, refuse
from ..soak.targets import load_targets
from ..soak.growth import growth, steady_window
from ..soak.sampler import Sampler
from .base import P, Part

if TYPE_CHECKING:
    from ..point import Point
    from ..result_types import RunResult
    from .state import PointState

SAMPLER = "resources_sampler"


class Resources(Part):
    name = "resources"
    on_graphs = True

    def wanted(self, cfg: "Point") -> bool:
        return True

    def validate(self, cfg: P, options: dict[str, Any]) -> P:
        targets = load_targets(options.get("targets"))
        gates = parse_gates(options.get("gates"), targets)
        if any(g.metric == "live-allocs-growth" for g in gates) and not cfg.count_allocs:
            raise UsageError("--gate: live-allocs-growth needs --count-allocs (the live heap "
                             "is read from its allocation counter)")
        refuse(gates, GRAPH_ONLY, "graph runs only (--graph: each edge classifies its "
               "messages as late by its period); a single stream has p50|p99|max<=DURATION")
        return replace(cfg, gates=tuple(g.text for g in gates if g.source is None),  # type: ignore[type-var]
                       targets=targets)

    def sender_started(self, run: "PointState") -> None:
        run.found[SAMPLER] = Sampler(lambda: listing(run)).start()

    def sender_done(self, run: "PointState") -> None:
        _stop(run)

    def interrupted(self, run: "PointState") -> None:
        _stop(run)

    def section(self, run: "PointState", result: "RunResult") -> None:
        sampler: Sampler | None = _stop(run)
        if sampler is not None:  # a graph's phases are its go file's (graph/run.py)
            report = run.sender_report() or {}
            result["resources"] = section(sampler, report.get("phases")
                                          or run.found.get("phases"))
        if (run.cfg.gates or run.cfg.targets) and getattr(run.cfg, "graph", None) is None:
            result["gates"] = evaluate(parse_gates(run.cfg.gates, run.cfg.targets),
                                       dict(result))


def _stop(run: "PointState") -> Sampler | None:
    sampler = run.found.get(SAMPLER)
    if sampler is not None:
        sampler.stop()
    return sampler


def listing(run: "PointState") -> list[tuple[str, str, int, bool]]:
    """The point's processes on this machine now: (name, kind, pid, count_allocs)."""
    agents = [(run.shown_name(a.name), "agent", a.popen.pid, run.cfg.count_allocs)
              for a in list(run.agents.agents if run.agents is not None else [])
              if getattr(a, "channel", None) is None]  # a real host's: not readable here
    daemons = [(d.name, "daemon", d.popen.pid, False) for d in list(run.daemons.daemons)
               if getattr(d, "channel", None) is None]
    return agents + daemons


def section(sampler: Sampler, phases: dict[str, Any] | None) -> dict[str, Any]:
    """The result's ``resources``: the steady state, and each process's series and growth."""
    window = steady_window(phases, sampler.origin_ns)
    return {"interval_ns": sampler.interval_ns, "origin_ns": sampler.origin_ns,
            "steady": None if window is None else {"start_ns": window[0], "end_ns": window[1]},
            "processes": [{"name": w.name, "kind": w.kind, "pid": w.pid,
                           "live_heap": w.counter is not None,
                           "series": w.series, "growth": growth(w.series, window)}
                          for w in sampler.watched.values()]}

