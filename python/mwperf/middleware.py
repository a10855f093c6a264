"""What each transport needs before its agents start: daemons, and the address the listening
agent (pong/sub) is given (the ``Kind::address_form`` of the agent, docs/transport-plan.md §1).

``prepare`` starts the daemons into a ``DaemonSet`` (which stops them) and returns a ``Plan``.
Across emulated hosts (``network``) each daemon runs on the host it is placed on and listens on
that host's address; a listening agent listens on its own host's address.
With ``--pong relay`` (ROS 1) no pong agent runs: topic_tools' relay echoes, and the ping
connects to the master with the base name the relay was started for.
"""

import secrets
from dataclasses import dataclass
from pathlib import Path

from .agent import Agent
from .config import ROLES, PointConfig
from .daemons import DaemonSet
from .daemons import mosquitto, ros1, zenoh
from .emulation.network import Network
from .errors import RunError

MAX_SOCKET_PATH = 107
LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class Plan:
    """Where the listening agent listens, or (foreign pong) where the sender connects directly."""

    listen: str | None
    """the pong/sub ``--listen`` address; None when no pong agent runs (relay)"""
    connect: str | None = None
    """the ping's ``--connect`` address when there is no pong agent to print it"""


def prepare(cfg: PointConfig, workdir: Path, agent: Agent, daemons: DaemonSet,
            network: Network | None = None) -> Plan:
    """Start what ``cfg.transport`` needs and say where the agents meet (on emulated hosts
    when ``network`` is given)."""
    transport = cfg.transport

    def where(name: str) -> tuple[str, Path | None]:
        """The address and namespace of the host ``name`` (a role or daemon) is placed on."""
        if network is None:
            return LOOPBACK, None
        return network.address_of(name), network.netns_of(name)

    server, _ = where(ROLES[cfg.mode][0])
    if transport in ("udp", "tcp"):
        return Plan(f"{server}:0")
    if transport == "uds":
        return Plan(_socket_path(workdir))
    if transport == "iceoryx2":
        return Plan("auto")
    if transport in ("cyclonedds", "rustdds"):
        return Plan("0/auto")
    if transport == "zenoh":
        if cfg.option("mode") == "client":
            router = daemons.start(lambda: zenoh.router_spec(agent.path, _agent_version(agent),
                                                             *where("zenohd")))
            return Plan(router.address)
        return Plan(f"tcp/{server}:0")
    if transport == "mqtt":
        broker = daemons.start(lambda: mosquitto.spec(workdir, cfg.max_queued,
                                                      *where("mosquitto")))
        return Plan(broker.address)
    if transport == "ros1":
        master = daemons.start(lambda: ros1.master_spec(workdir, *where("rosmaster")))
        if cfg.pong == "relay":
            base = f"mwperf_{secrets.randbits(32):08x}"  # a valid ROS graph name (no '-')
            daemons.start(lambda: ros1.relay_spec(workdir, master.address, base, *where("pong")))
            return Plan(None, connect=f"{master.address}#{base}")
        return Plan(master.address)
    raise RunError(f"--transport: mwperf does not know how to address '{transport}' yet")


def _socket_path(workdir: Path) -> str:
    path = str(workdir / "mwperf.sock")
    if len(path.encode()) > MAX_SOCKET_PATH:
        raise RunError(f"the socket path {path} is longer than {MAX_SOCKET_PATH} bytes; "
                       f"set TMPDIR to a shorter directory")
    return path


def _agent_version(agent: Agent) -> str | None:
    try:
        return agent.version()
    except RunError:
        return None
