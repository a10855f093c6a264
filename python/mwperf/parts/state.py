"""What the runner and the parts share while one point runs (the runner fills it in as the
point goes; the parts read it and keep their own findings on themselves or in ``found``)."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from ..agent import Agent
    from ..bridges.base import BridgePlan
    from ..daemons import DaemonSet
    from ..emulation.network import Network
    from ..leases import Lease
    from ..merge import AgentRun
    from ..place import Place
    from ..procs import AgentProcess, AgentSet
    from ..remote.hosts import PointHosts
    from ..result_types import Warning

from ..point import Point

C = TypeVar("C", bound=Point)

@dataclass
class PointState(Generic[C]):
    """One point under way (``C``: its configuration, config.PointConfig)."""

    cfg: C
    agent: "Agent"
    workdir: Path
    tag: int
    lease: "Lease"
    place: "Place"
    """where its processes run (place.py): this machine, emulated hosts or real hosts"""
    emulated: "Network | None"
    """the emulated hosts and links, when the place is that (their packet counters)"""
    real: "PointHosts | None"
    """the real hosts over SSH, when the place is that"""
    daemons: "DaemonSet"
    agents: "AgentSet | None" = None
    bridge: "BridgePlan | None" = None
    """the bridge's halves and what each side is given (the bridge part sets it)"""
    servers: list["AgentProcess"] = field(default_factory=list)
    sender: "AgentProcess | None" = None
    sender_stopped_ns: int | None = None
    """CLOCK_MONOTONIC when the sender finished"""
    runs: list["AgentRun"] = field(default_factory=list)
    """every agent's report, once collected"""
    warnings: list["Warning"] = field(default_factory=list)
    """warnings of mwperf's own (not the agents')"""
    found: dict[str, Any] = field(default_factory=dict)
    """what a part finds and another reads (e.g. the outage window, the clock's address)"""
    shown: dict[str, str] = field(default_factory=dict)
    """process name -> the name the result gives it, where they differ (a graph's node
    ``node.<name>`` is node ``<name>``)"""

    @property
    def network(self) -> "Place | None":
        """The place, or None on this machine's loopback (as the transports' hooks and the
        bridges take it)."""
        return self.emulated or self.real

    def shown_name(self, name: str) -> str:
        """What the result calls process ``name`` (see ``shown``)."""
        return self.shown.get(name, name)

    def is_local(self, name: str) -> bool:
        """``name`` runs on this machine (possibly in an emulated host's namespace)."""
        return not self.place.is_remote(name)

    def sender_report(self) -> dict[str, Any] | None:
        """The sender's report, once collected."""
        sender = self.sender.role if self.sender is not None else None
        return next((r.report for r in self.runs if r.role == sender and r.report is not None),
                    None)
