"""The allocation-sites part (``--alloc-sites``): every local agent runs under heaptrack, cut at
its steady-state markers; the result's ``alloc_sites`` names the call sites."""

from typing import TYPE_CHECKING, Any

from ..allocsites import heaptrack
from ..errors import UsageError
from .base import P, Part

if TYPE_CHECKING:
    from ..point import Point
    from ..result_types import RunResult
    from .state import PointState


class AllocSites(Part):
    name = "alloc sites"
    on_graphs = True

    def wanted(self, cfg: "Point") -> bool:
        return cfg.alloc_sites

    def validate(self, cfg: P, options: dict[str, Any]) -> P:
        if cfg.remote is not None:
            raise UsageError("--alloc-sites: not for agents on real hosts (--host); record the "
                             "call sites with the agents on this machine (loopback or --link)")
        if cfg.count_allocs:
            raise UsageError("--alloc-sites and --count-allocs: one at a time (both intercept "
                             "malloc and would count each other); --alloc-sites reports "
                             "allocations per message too")
        return cfg

    def args(self, run: "PointState", role: str) -> list[str]:
        return ["--alloc-site-markers"]

    def env(self, run: "PointState", name: str, env: dict[str, str] | None
            ) -> dict[str, str] | None:
        return heaptrack.environment(heaptrack.find(), run.workdir, name, env)

    def section(self, run: "PointState", result: "RunResult") -> None:
        agents = run.agents.agents if run.agents is not None else []
        section = heaptrack.collect(heaptrack.find(), run.workdir,
                                    [(a.name, a.role) for a in agents if run.is_local(a.role)])
        for process in section["processes"]:  # a graph's node by its own name
            process["name"] = run.shown_name(process["name"])
        result["alloc_sites"] = section

    def files(self, run: "PointState") -> dict[str, Any]:
        return {"alloc_sites_dir": run.workdir / heaptrack.ALLOC_SITES_DIR}
