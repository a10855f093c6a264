"""The wire-bytes part (``--wire-bytes``): the emulated links log every packet; the result's
``wire`` splits the bytes by phase and per message (not applicable on loopback or real hosts).
A graph run's phases are its schedule's (the go instant, warm-up, duration and linger), its
messages those of the edges whose nodes sit on different hosts."""

from typing import TYPE_CHECKING, Any

from ..wire import graph_section, not_applicable, section
from ..errors import UsageError
from .base import P, Part

if TYPE_CHECKING:
    from ..point import Point
    from ..result_types import RunResult
    from .state import PointState


class WireBytes(Part):
    name = "wire bytes"
    on_graphs = True

    def wanted(self, cfg: "Point") -> bool:
        return cfg.wire_bytes

    def validate(self, cfg: P, options: dict[str, Any]) -> P:
        if cfg.remote is not None:
            raise UsageError("--wire-bytes: not for agents on real hosts (--host): it counts the "
                             "packets mwperf's emulated links forward; use --link or a "
                             "scenario's emulated hosts")
        return cfg

    def section(self, run: "PointState", result: "RunResult") -> None:
        if run.emulated is None:
            result["wire"] = not_applicable(run.cfg.transport)
            return
        if "graph" in result:  # a graph run: its schedule's phases, the edges across hosts
            result["wire"] = graph_section(run.emulated.reports, run.emulated.wire_ends(),
                                           run.found.get("phases"), result["edges"],
                                           run.found.get("node_hosts") or {})
            return
        measured = result["measurement"]
        report = run.sender_report()
        result["wire"] = section(run.emulated.reports, run.emulated.wire_ends(),
                                 report.get("phases") if report is not None else None,
                                 measured["accounting"]["sent"] if measured else None,
                                 run.cfg.payload_bytes)
