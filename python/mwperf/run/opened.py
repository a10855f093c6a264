"""A run's resources, opened and released the same way for a single stream (runner.py) and a
graph (graph/run.py): the lease, the place (emulated hosts and links, real hosts over SSH, or
this machine), the daemons, the CPU placement and the agent set. Leaving, for whatever reason,
stops the agents, then the daemons, then releases the place and the lease; the CPU placement
is described before the lease removes its cgroups."""

import contextlib
import secrets
from collections.abc import Iterator
from pathlib import Path

from ..agent import Agent
from ..config import PointConfig
from ..daemons import DaemonSet
from ..emulation.cpu import CpuPlacement
from ..emulation.network import Network, emulated_network
from ..emulation.topology import Topology
from ..leases import Lease
from ..parts.state import PointState
from ..place import Place, ThisMachine
from ..procs import AgentSet
from ..remote.daemon import remote_daemon
from ..remote.hosts import PointHosts, point_hosts
from ..remote.ssh import SshOptions
from ..security.modes import TUNNEL

DAEMON_PLACED_AS = {"relay": "pong", "zenoh-router": "zenohd"}
"""a daemon's name in the topology's placement, where it differs from its own (the relay
echoes where the pong would)"""


@contextlib.contextmanager
def opened(cfg: PointConfig, agent: Agent, workdir: Path, what: str, label: str,
           topology: Topology | None, daemons_there: bool = True,
           placed_as: dict[str, str] | None = None,
           shown: dict[str, str] | None = None) -> Iterator[PointState[PointConfig]]:
    """The run's state with everything opened. ``what``: the run in a few words (its lease's
    name); ``label``: its emulated network's (with the run's tag); ``topology``: its emulated hosts and links (None: this
    machine, or the real hosts of ``cfg.remote``). ``daemons_there``: on real hosts the
    daemons run there too (a stream's; a graph keeps them here). ``placed_as``: where a daemon
    sits in the placement besides DAEMON_PLACED_AS (a graph's servers: with their nodes; it may
    be filled in once open). ``shown``: process names as the result gives them."""
    tag = secrets.randbits(32)
    aliases = placed_as if placed_as is not None else {}
    with (Lease.take(what) as lease,
          _emulated(cfg, topology, workdir, f"{label} {tag & 0xFFFF:04x}") as network,
          real_hosts(cfg, agent, lease) as real,
          DaemonSet(workdir, lease) as daemons):
        place: Place = network or real or ThisMachine()
        placement = CpuPlacement(cfg.cpu, lease)

        def placed(name: str) -> str:
            return DAEMON_PLACED_AS.get(name, aliases.get(name, name))
        daemons.on_spawn = lambda spec, pid: placement.join(spec.name, placed(spec.name), pid)
        if real is not None:
            real.cpu = placement  # the supervisors there apply the CPU limits
            if daemons_there:
                daemons.remote = lambda spec: remote_daemon(real, placed(spec.name), spec,
                                                            workdir, agent)
        run = PointState(cfg, agent, workdir, tag, lease, place, network, real, daemons,
                         shown=shown or {})
        run.found["placement"] = placement
        with AgentSet(workdir, placement) as agents:
            run.agents = agents
            yield run
        run.found["cpu"] = placement.describe()  # before the lease releases the cgroups


def real_hosts(cfg: PointConfig, agent: Agent, lease: Lease
               ) -> contextlib.AbstractContextManager[PointHosts | None]:
    """The run's real hosts over SSH (remote/hosts.py), or nothing."""
    if cfg.remote is None:
        return contextlib.nullcontext()
    options = SshOptions(Path(cfg.remote.ssh_config) if cfg.remote.ssh_config else None,
                         cfg.remote.accept_new_host_key)
    return point_hosts(cfg.remote.hosts, cfg.remote.place, options, agent, lease.prefix)


def _emulated(cfg: PointConfig, topology: Topology | None, workdir: Path, label: str
              ) -> contextlib.AbstractContextManager[Network | None]:
    """The run's emulated hosts and links (emulation/network.py), or nothing (loopback)."""
    if topology is None:
        return contextlib.nullcontext()
    return emulated_network(topology, cfg.link, cfg.link_backend, workdir, label,
                            packet_log=cfg.wire_bytes, layer_log=cfg.layers,
                            tunnel=cfg.secure == TUNNEL)
