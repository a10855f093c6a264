"""The bridge contract: what the control plane asks of every bridge (one module per bridge).

For one point, in this order:
1. ``transports`` while the point is validated: the ``--transport`` values the bridge can carry
   (any other is a usage error naming both).
2. ``ensure(agent)`` before the point starts: the bridge's program is there, or is built now
   (one line while it builds); a RunError naming the bridge and the command that builds or
   installs it otherwise (exit 1, a sweep goes on with its other points).
3. ``prepare(setup)``: start both halves as daemons (``setup.daemons``: health-checked, CPU and
   RSS sampled, always stopped) placed as ``bridge-a`` (sender side) and ``bridge-b`` (server
   side), and say where each agent connects (a ``BridgePlan``).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..agent import Agent
    from ..point import Point
    from ..daemons import DaemonSet

HALVES = ("bridge-a", "bridge-b")
"""placement names: bridge A beside the sender (ping/pub), bridge B beside the server"""


@dataclass(frozen=True)
class BridgeSetup:
    """What ``prepare`` gets: the point, its scratch folder, the agent, the daemons, where a
    placeable name runs (address, namespace), every host's address (empty on loopback), and a
    per-point tag (to keep concurrent runs' names apart)."""

    cfg: "Point"
    workdir: Path
    agent: "Agent"
    daemons: "DaemonSet"
    where: Callable[[str], tuple[str, Path | None]]
    tag: int
    facing: Callable[[str, str], str | None] = lambda name, peer: None
    """the address of ``name``'s host on the link towards ``peer``'s host (its own address when
    both are on one host); None on loopback"""


@dataclass(frozen=True)
class BridgePlan:
    """Where the agents meet their bridge half."""

    listen: str
    """the server's (pong/sub) --listen address: at bridge B"""
    sender: Callable[[str], str]
    """the sender's --connect address, from the address the server printed when ready"""
    sender_transport: str | None = None
    """the sender's transport when it differs from the point's (a bridge between middlewares)"""
    server_transport: str | None = None
    """the server's transport when it differs from the point's (foxglove: a WebSocket client)"""
    sender_opts: tuple[str, ...] = ()
    server_opts: tuple[str, ...] = ()
    """``--opt`` settings for one side only (e.g. that side's DDS configuration)"""
    facts: dict = field(default_factory=dict)
    """what the result's ``bridge`` section records about the path (domains, endpoints, ...)"""


@dataclass(frozen=True)
class Bridge:
    """One bridge: its name, what it is, what it carries, and its hooks."""

    name: str
    description: str
    transports: tuple[str, ...]
    """the --transport values it carries (the server's middleware)"""
    prepare: Callable[[BridgeSetup], BridgePlan]
    ensure: Callable[["Agent"], None]
    """raise RunError (one line: the bridge and the command that builds/installs it) if the
    bridge cannot run here; may build it first"""
    path: Callable[[str], str]
    """one line for people: the message path for a transport"""
    modes: tuple[str, ...] = ("roundtrip", "oneway")
    fanout: bool = False
    """one way to several subscribers (``--subscribers N``): the publisher does not wait for
    the subscribers' match (mqtt), so the bridge may stand between it and them"""
    graphs: bool = False
    """it runs under a graph (graph/bridge_sides.py): both sides one transport with the same
    settings, each node at its side's half"""
