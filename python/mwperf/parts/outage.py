"""The outage and resilience part: a link outage scheduled at the place makes the sender wait
out a silent peer long enough and the pub and the sub count around it; every point's result
gets its ``resilience`` section (discovery, session state, messages missed). Repeated flaps
(``every=``) imply ``--samples``: each flap's figures come from the measuring agent's samples
(resilience.flaps)."""

from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from ..emulation.links import flap_windows
from ..emulation.network import link_specs
from ..emulation.topology import two_hosts
from ..errors import UsageError
from ..merge import make_warning
from ..resilience import flaps, missed_warning, section
from ..restarts import read_samples
from ..roles import MEASURING_ROLE, ROLES
from ..topicnames import SAMPLES_NAME
from .base import P, Part

if TYPE_CHECKING:
    from ..result_types import Flaps
    from ..point import Point
    from ..result_types import RunResult
    from .state import PointState


class Outage(Part):
    name = "resilience"

    def wanted(self, cfg: "Point") -> bool:
        return True  # every result says how its session went

    def validate(self, cfg: P, options: dict[str, Any]) -> P:
        if repeats(cfg) and not getattr(cfg, "samples", True):
            return replace(cfg, samples=True)  # type: ignore[type-var]
        return cfg

    def start(self, run: "PointState") -> None:
        run.found["outage_window"] = run.place.outage_window()
        run.found["outage_every_ns"] = getattr(run.place, "outage_every_ns", 0)

    def given(self, run: "PointState", cfg: P) -> P:
        return outlasting(cfg, run.found.get("outage_window"))

    def args(self, run: "PointState", role: str) -> list[str]:
        return outage_args(role, run.found.get("outage_window"))

    def section(self, run: "PointState", result: "RunResult") -> None:
        outage = {r.role: r.report.get("outage") for r in run.runs if r.report is not None}
        counts = outage.get(ROLES[run.cfg.mode][1]), outage.get(MEASURING_ROLE[run.cfg.mode])
        result["resilience"] = section(result.get("discovery"), *counts,
                                       run.cfg.session_timeout_ns, run.sender_stopped_ns)
        first = result["resilience"]["outage"]
        window, every = run.found.get("outage_window"), run.found.get("outage_every_ns", 0)
        if first is not None and window is not None and every:
            until = run.sender_stopped_ns or window[1]
            first["flaps"] = cast("Flaps", flaps(
                flap_windows(window[0], window[1], every, until), every,
                read_samples(run.workdir / SAMPLES_NAME), run.sender_stopped_ns))
        missed = missed_warning(result["resilience"], *counts, run.sender_stopped_ns)
        if missed is not None:
            result["warnings"].append(make_warning(*missed))


def repeats(cfg: Any) -> bool:
    """The point's links flap again and again (``every=`` in a link spec)."""
    if getattr(cfg, "link", None) is None and getattr(cfg, "topology", None) is None:
        return False
    try:
        specs = link_specs(cfg.topology or two_hosts(), cfg.link).values()
    except UsageError:  # the link's own checks report a bad spec
        return False
    return any(s.up.outage_every_ns or s.down.outage_every_ns for s in specs)


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
