"""The allocation-counting part (``--count-allocs``): every local agent runs with mwperf's
malloc counter preloaded and reports its allocations per message."""

from typing import TYPE_CHECKING, Any

from ..agent import alloc_preload
from ..errors import UsageError
from .base import P, Part

if TYPE_CHECKING:
    from ..point import Point
    from .state import PointState


class CountAllocs(Part):
    name = "count allocs"

    def wanted(self, cfg: "Point") -> bool:
        return cfg.count_allocs

    def validate(self, cfg: P, options: dict[str, Any]) -> P:
        if cfg.remote is not None:
            raise UsageError("--count-allocs: not yet for agents on real hosts (--host); count "
                             "allocations with the agents on this machine (loopback or --link)")
        return cfg

    def args(self, run: "PointState", role: str) -> list[str]:
        return ["--count-allocs"]

    def env(self, run: "PointState", name: str, env: dict[str, str] | None
            ) -> dict[str, str] | None:
        return {**(env or {}), "LD_PRELOAD": alloc_preload(run.agent)}
