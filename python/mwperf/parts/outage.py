"""The outage and resilience part: a link outage scheduled at the place makes the sender wait
out a silent peer long enough and the pub and the sub count around it; every point's result
gets its ``resilience`` section (discovery, session state, messages missed)."""

from dataclasses import replace
from typing import TYPE_CHECKING

from ..merge import make_warning
from ..resilience import missed_warning, section
from ..roles import MEASURING_ROLE, ROLES
from .base import P, Part

if TYPE_CHECKING:
    from ..point import Point
    from ..result_types import RunResult
    from .state import PointState


class Outage(Part):
    name = "resilience"

    def wanted(self, cfg: "Point") -> bool:
        return True  # every result says how its session went

    def start(self, run: "PointState") -> None:
        run.found["outage_window"] = run.place.outage_window()

    def given(self, run: "PointState", cfg: P) -> P:
        return outlasting(cfg, run.found.get("outage_window"))

    def args(self, run: "PointState", role: str) -> list[str]:
        return outage_args(role, run.found.get("outage_window"))

    def section(self, run: "PointState", result: "RunResult") -> None:
        outage = {r.role: r.report.get("outage") for r in run.runs if r.report is not None}
        counts = outage.get(ROLES[run.cfg.mode][1]), outage.get(MEASURING_ROLE[run.cfg.mode])
        result["resilience"] = section(result.get("discovery"), *counts,
                                       run.cfg.session_timeout_ns, run.sender_stopped_ns)
        missed = missed_warning(result["resilience"], *counts, run.sender_stopped_ns)
        if missed is not None:
            result["warnings"].append(make_warning(*missed))


def outage_args(role: str, window: tuple[int, int] | None) -> list[str]:
    """``--outage-window`` for the agents that count around a link outage (not a pong)."""
    if window is None or role == "pong":
        return []
    return ["--outage-window", f"{window[0]}:{window[1]}"]


def outlasting(cfg: P, window: tuple[int, int] | None) -> P:
    """With an outage, a sender must not give up on a silent peer before the session could
    have been declared dead: peer timeout >= outage + --session-timeout + 1 s."""
    if window is None:
        return cfg
    need_ns = window[1] - window[0] + cfg.session_timeout_ns + 1_000_000_000
    return replace(cfg, peer_timeout_ns=max(cfg.peer_timeout_ns, need_ns))
