"""The allocation-sites part (``--alloc-sites``): every local agent runs under heaptrack, cut at
its steady-state markers; the result's ``alloc_sites`` names the call sites."""

from typing import TYPE_CHECKING, Any

from ..allocsites import heaptrack
from .base import Part

if TYPE_CHECKING:
    from ..config import PointConfig
    from ..result_types import RunResult
    from .state import PointState


class AllocSites(Part):
    name = "alloc sites"

    def wanted(self, cfg: "PointConfig") -> bool:
        return cfg.alloc_sites

    def args(self, run: "PointState", role: str) -> list[str]:
        return ["--alloc-site-markers"]

    def env(self, run: "PointState", name: str, env: dict[str, str] | None
            ) -> dict[str, str] | None:
        return heaptrack.environment(heaptrack.find(), run.workdir, name, env)

    def section(self, run: "PointState", result: "RunResult") -> None:
        agents = run.agents.agents if run.agents is not None else []
        result["alloc_sites"] = heaptrack.collect(
            heaptrack.find(), run.workdir, [(a.name, a.role) for a in agents
                                            if run.is_local(a.role)])

    def files(self, run: "PointState") -> dict[str, Any]:
        return {"alloc_sites_dir": run.workdir / heaptrack.ALLOC_SITES_DIR}
