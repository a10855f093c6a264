"""The throughput part (``--mode throughput``, docs/throughput.md): the point's defaults and
refusals while it is built (throughput.py), the delivery a socket cannot give refused before it
runs (a sweep: "not supported"), ``--throughput`` on the pub's and the subs' command lines, and
the result's throughput figures from both sides' reports (throughput_result.py)."""

from typing import TYPE_CHECKING, Any

from ..throughput import check_transport, complete, delivery
from ..throughput_result import complete as complete_result
from ..transports import profile
from .base import P, Part

if TYPE_CHECKING:
    from ..agent import Agent
    from ..point import Point
    from ..result_types import RunResult
    from .state import PointState


class Throughput(Part):
    name = "throughput"

    def wanted(self, cfg: "Point") -> bool:
        return cfg.mode == "throughput"

    def validate(self, cfg: P, options: dict[str, Any]) -> P:
        try:
            known = profile(cfg.transport)
        except Exception:  # an agent that cannot describe it: the run says so later
            known = None
        return complete(cfg, options, known)  # type: ignore[arg-type,return-value]

    def check(self, cfg: "Point", agent: "Agent") -> None:
        check_transport(cfg)  # type: ignore[arg-type]

    def args(self, run: "PointState", role: str) -> list[str]:
        return ["--throughput"] if role in ("pub", "sub") else []

    def section(self, run: "PointState", result: "RunResult") -> None:
        measurement = result["measurement"]
        if measurement is None:
            return
        agents = result["agents"]
        pub = next((a for a in agents if a["role"] == "pub"), None)
        subs = [a for a in agents if a["role"] == "sub"]
        complete_result(measurement, result["config"], delivery(run.cfg),  # type: ignore[arg-type]
                        pub, subs, result.get("wire"))  # type: ignore[arg-type]
