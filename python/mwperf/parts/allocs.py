"""The allocation-counting part (``--count-allocs``): every local agent runs with mwperf's
malloc counter preloaded and reports its allocations per message."""

from typing import TYPE_CHECKING

from ..agent import alloc_preload
from .base import Part

if TYPE_CHECKING:
    from ..config import PointConfig
    from .state import PointState


class CountAllocs(Part):
    name = "count allocs"

    def wanted(self, cfg: "PointConfig") -> bool:
        return cfg.count_allocs

    def args(self, run: "PointState", role: str) -> list[str]:
        return ["--count-allocs"]

    def env(self, run: "PointState", name: str, env: dict[str, str] | None
            ) -> dict[str, str] | None:
        return {**(env or {}), "LD_PRELOAD": alloc_preload(run.agent)}
