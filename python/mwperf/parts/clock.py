"""The clock part: with ``--clock-sync`` the pub serves clock probes and each sub probes it
(clocksync.py); TEST ONLY ``--test-clock`` starts an emulated host's agents in a shifted time
namespace and adds the injected truth beside the estimate."""

from typing import TYPE_CHECKING, Any

from ..clocksync import annotate, clock_address, clock_args, in_test_clock
from ..errors import UsageError
from .base import P, Part

if TYPE_CHECKING:
    from ..point import Point
    from ..result_types import RunResult
    from .state import PointState


class ClockSync(Part):
    name = "clock sync"

    def wanted(self, cfg: "Point") -> bool:
        return bool(cfg.clock_sync or cfg.test_clock)

    def validate(self, cfg: P, options: dict[str, Any]) -> P:
        if cfg.test_clock and cfg.mode == "oneway" and not cfg.clock_sync:
            raise UsageError("--test-clock: a one-way point across shifted clocks needs "
                             "--clock-sync (else every latency mixes the two clocks); round "
                             "trips need none")
        return cfg

    def start(self, run: "PointState") -> None:
        run.found["clock"] = clock_address(run.cfg, run.network)  # the pub's probe port

    def args(self, run: "PointState", role: str) -> list[str]:
        return clock_args(role, run.cfg, run.found.get("clock"))

    def command(self, run: "PointState", role: str, argv: list[str]) -> list[str]:
        return in_test_clock(run.cfg, role, argv)

    def section(self, run: "PointState", result: "RunResult") -> None:
        annotate(result, run.cfg)  # --test-clock: the injected truth beside the estimate
