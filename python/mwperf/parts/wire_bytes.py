"""The wire-bytes part (``--wire-bytes``): the emulated links log every packet; the result's
``wire`` splits the bytes by phase and per message (not applicable on loopback or real hosts)."""

from typing import TYPE_CHECKING

from ..wire import not_applicable, section
from .base import Part

if TYPE_CHECKING:
    from ..config import PointConfig
    from ..result_types import RunResult
    from .state import PointState


class WireBytes(Part):
    name = "wire bytes"

    def wanted(self, cfg: "PointConfig") -> bool:
        return cfg.wire_bytes

    def section(self, run: "PointState", result: "RunResult") -> None:
        if run.emulated is None:
            result["wire"] = not_applicable(run.cfg.transport)
            return
        measured = result["measurement"]
        report = run.sender_report()
        result["wire"] = section(run.emulated.reports, run.emulated.wire_ends(),
                                 report.get("phases") if report is not None else None,
                                 measured["accounting"]["sent"] if measured else None,
                                 run.cfg.payload_bytes)
