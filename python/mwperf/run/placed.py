"""Where one process of a run goes at its place (place.py): the network namespace it runs in,
the environment it needs there and its transport's ``--opt`` settings there; a single stream's
agents and a graph's nodes alike."""

from pathlib import Path

from ..bridges.base import BridgePlan
from ..place import Place
from ..transports import hook

Placed = tuple[Path | None, dict[str, str] | None, tuple[str, ...]]
"""where a process runs: its namespace, its environment, the --opt settings it needs there"""


def placed(place: Place | None, role: str, transport: str, bridge: BridgePlan | None
           ) -> Placed:
    """The namespace ``role`` runs in at ``place``, the environment it needs there (ROS 1
    nodes advertise their host's address, as ROS_IP tells roscpp) and the ``--opt`` settings
    its transport needs there (its ``link_opts`` hook; none with a bridge, which configures
    each side's middleware itself); nothing on this machine's loopback."""
    if place is None:
        return None, None, ()
    hooks = hook(transport)
    opts = hooks.link_opts(place, role) if bridge is None else ()
    return place.netns_of(role), hooks.agent_env(place.address_of(role)), opts
