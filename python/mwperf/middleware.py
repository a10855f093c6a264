"""What each transport needs before its agents start: daemons, and the address the listening
agent (pong/sub) is given (the agent's address form, its descriptor's ``address``).

``prepare`` asks the transport's hook (python/mwperf/transports/<name>.py) to start its daemons
into a ``DaemonSet`` (which stops them) and returns a ``Plan``. Across emulated hosts
(``network``) each daemon runs on the host it is placed on and listens on that host's address; a
listening agent listens on its own host's address. With ``--pong relay`` (ROS 1) no pong agent
runs: topic_tools' relay echoes, and the ping connects to the master with the base name the
relay was started for.
"""

from pathlib import Path

from .agent import Agent
from .config import ROLES, PointConfig
from .daemons import DaemonSet
from .place import LOOPBACK, Place
from .transports import hook
from .transports.hooks import Plan, Setup


__all__ = ["LOOPBACK", "Plan", "prepare"]


def prepare(cfg: PointConfig, workdir: Path, agent: Agent, daemons: DaemonSet,
            network: Place | None = None) -> Plan:
    """Start what ``cfg.transport`` needs and say where the agents meet (on emulated hosts
    when ``network`` is given)."""

    def where(name: str) -> tuple[str, Path | None]:
        """The address and namespace of the host ``name`` (a role or daemon) is placed on."""
        if network is None:
            return LOOPBACK, None
        return network.address_of(name), network.netns_of(name)

    server, _ = where(ROLES[cfg.mode][0])
    return hook(cfg.transport).prepare(Setup(cfg, workdir, agent, daemons, where, server))
