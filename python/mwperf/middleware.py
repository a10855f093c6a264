"""What each transport needs before its agents start: daemons, and the address the listening
agent (pong/sub) is given (the ``Kind::address_form`` of the agent, docs/transport-plan.md §1).

``prepare`` starts the daemons into a ``DaemonSet`` (which stops them) and returns a ``Plan``.
With ``--pong relay`` (ROS 1) no pong agent runs: topic_tools' relay echoes, and the ping
connects to the master with the base name the relay was started for.
"""

import secrets
from dataclasses import dataclass
from pathlib import Path

from .agent import Agent
from .config import PointConfig
from .daemons import DaemonSet
from .daemons import mosquitto, ros1, zenoh
from .errors import RunError

MAX_SOCKET_PATH = 107
ZENOH_PEER_LISTEN = "tcp/127.0.0.1:0"


@dataclass(frozen=True)
class Plan:
    """Where the listening agent listens, or (foreign pong) where the sender connects directly."""

    listen: str | None
    """the pong/sub ``--listen`` address; None when no pong agent runs (relay)"""
    connect: str | None = None
    """the ping's ``--connect`` address when there is no pong agent to print it"""


def prepare(cfg: PointConfig, workdir: Path, agent: Agent, daemons: DaemonSet) -> Plan:
    """Start what ``cfg.transport`` needs and say where the agents meet."""
    transport = cfg.transport
    if transport in ("udp", "tcp"):
        return Plan("127.0.0.1:0")
    if transport == "uds":
        return Plan(_socket_path(workdir))
    if transport == "iceoryx2":
        return Plan("auto")
    if transport in ("cyclonedds", "rustdds"):
        return Plan("0/auto")
    if transport == "zenoh":
        if cfg.option("mode") == "client":
            router = daemons.start(lambda: zenoh.router_spec(agent.path, _agent_version(agent)))
            return Plan(router.address)
        return Plan(ZENOH_PEER_LISTEN)
    if transport == "mqtt":
        broker = daemons.start(lambda: mosquitto.spec(workdir, cfg.max_queued))
        return Plan(broker.address)
    if transport == "ros1":
        master = daemons.start(lambda: ros1.master_spec(workdir))
        if cfg.pong == "relay":
            base = f"mwperf_{secrets.randbits(32):08x}"  # a valid ROS graph name (no '-')
            daemons.start(lambda: ros1.relay_spec(workdir, master.address, base))
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
