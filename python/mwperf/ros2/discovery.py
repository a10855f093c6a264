"""How far a ROS 2 node started in this environment discovers others, from the variables ROS 2
(Iron and later) reads: ``ROS_AUTOMATIC_DISCOVERY_RANGE`` (LOCALHOST, SUBNET, OFF or
SYSTEM_DEFAULT; unset or empty = SUBNET, rcl's default) and ``ROS_STATIC_PEERS`` (host names or
addresses separated by ';', used with LOCALHOST and SUBNET). ``ROS_LOCALHOST_ONLY=1``, the
older switch (Humble's only one; Jazzy still honours it over the two, with a warning; Kilted
dropped it), is taken as LOCALHOST without static peers, as Jazzy's rcl takes it. rcl takes an
unknown range as LOCALHOST with a warning; mwperf refuses it, naming the variable (a typo should
not silently change what is measured)."""

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import UsageError

RANGE_ENV = "ROS_AUTOMATIC_DISCOVERY_RANGE"
PEERS_ENV = "ROS_STATIC_PEERS"
LOCALHOST_ONLY_ENV = "ROS_LOCALHOST_ONLY"
RANGES = ("LOCALHOST", "SUBNET", "OFF", "SYSTEM_DEFAULT")
DEFAULT_RANGE = "SUBNET"
_PEER = re.compile(r"^[A-Za-z0-9._:\-\[\]]+$")


@dataclass(frozen=True)
class Discovery:
    """The discovery settings of a ROS 2 environment."""

    range: str
    """one of RANGES"""
    static_peers: tuple[str, ...] = ()
    localhost_only: bool = False
    """ROS_LOCALHOST_ONLY=1 made the range LOCALHOST (and the static peers unused)"""

    @property
    def peers_used(self) -> tuple[str, ...]:
        """The static peers a node uses: none under OFF and SYSTEM_DEFAULT (rmw ignores them)."""
        if self.localhost_only:
            return ()
        return self.static_peers if self.range in ("LOCALHOST", "SUBNET") else ()

    def describe(self) -> str:
        """``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST, ROS_STATIC_PEERS=a;b`` (as in force)."""
        if self.localhost_only:
            return f"{LOCALHOST_ONLY_ENV}=1"
        peers = f", {PEERS_ENV}={';'.join(self.static_peers)}" if self.static_peers else ""
        return f"{RANGE_ENV}={self.range}{peers}"


def from_environment(env: Mapping[str, str] | None = None) -> Discovery:
    """The settings in ``env`` (default os.environ); UsageError names a bad variable."""
    env = os.environ if env is None else env
    text = env.get(RANGE_ENV, "").strip()
    if text and text not in RANGES:
        raise UsageError(f"${RANGE_ENV}: expected one of {', '.join(RANGES)} (or unset: "
                         f"{DEFAULT_RANGE}), got {text!r}")
    peers = tuple(p.strip() for p in env.get(PEERS_ENV, "").split(";") if p.strip())
    bad = [p for p in peers if not _PEER.match(p)]
    if bad:
        raise UsageError(f"${PEERS_ENV}: expected host names or IP addresses separated by ';', "
                         f"got {bad[0]!r}")
    if env.get(LOCALHOST_ONLY_ENV, "").strip() == "1":
        return Discovery("LOCALHOST", peers, localhost_only=True)
    return Discovery(text or DEFAULT_RANGE, peers)
