"""The allocation-counting part (``--count-allocs``): every agent (a graph's: node) runs with
mwperf's malloc counter preloaded and reports its allocations per message. An agent on a real
host (``--host``) preloads a copy of the counter there (remote/preload.py, copied in ``start``
before any agent runs)."""

from typing import TYPE_CHECKING

from ..agent import ALLOC_LIBRARY, alloc_preload
from ..remote.preload import remote_preload
from ..roles import ROLES
from .base import Part

if TYPE_CHECKING:
    from ..point import Point
    from .state import PointState


class CountAllocs(Part):
    name = "count allocs"
    on_graphs = True

    def wanted(self, cfg: "Point") -> bool:
        return cfg.count_allocs

    def start(self, run: "PointState") -> None:
        if run.real is not None:
            local = run.agent.path.resolve().parent / ALLOC_LIBRARY
            graph = getattr(run.cfg, "graph", None)
            names = ([n.name for n in graph.graph.nodes] if graph is not None
                     else ROLES[run.cfg.mode])
            run.found["allocs_remote"] = {name: remote_preload(run.real, name, local)
                                          for name in names if run.real.is_remote(name)}

    def args(self, run: "PointState", role: str) -> list[str]:
        return ["--count-allocs"]

    def env(self, run: "PointState", name: str, env: dict[str, str] | None
            ) -> dict[str, str] | None:
        return {**(env or {}), "LD_PRELOAD": alloc_preload(run.agent)}

    def remote_env(self, run: "PointState", role: str, name: str, env: dict[str, str] | None
                   ) -> dict[str, str] | None:
        preload = (run.found.get("allocs_remote") or {}).get(role)
        if preload is None:
            return env
        existing = (env or {}).get("LD_PRELOAD")
        library = preload["LD_PRELOAD"]
        return {**(env or {}), "LD_PRELOAD": f"{library}:{existing}" if existing else library}
