"""The real hosts of a run: one SSH connection each, reused by every point of a sweep.

``RealHosts.open`` connects to each ``--host``, makes sure the host has this agent
(deploy.py), cleans up what a dead mwperf left there (``mwperf-agent supervise-clean``), learns
the addresses each side sees (``$SSH_CONNECTION`` on the host: the address mwperf's machine is
reached at, and the host's own address on that path) and the host's facts (``mwperf-agent
facts``: kernel, CPU, clock source, time synchronisation). Connections live in a module-level
pool for the whole mwperf process and are closed at exit (and killed with it: they are its
children), so a sweep connects once per host.

Per point, ``PointHosts`` gives the runner what ``emulation.network.Network`` gives it for
emulated hosts: the address of the host a role or daemon is placed on, the ``--opt`` settings
the agents need to meet, where a process runs, and the result's ``hosts`` section.
"""

import atexit
import contextlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ..agent import Agent
from ..errors import RunError
from ..leases import Lease
from .deploy import RemoteAgent, ensure_agent, remote_cache
from .ssh import SshConnection, SshOptions
from .supervised import RemoteProcess
from .target import LOCAL, SshTarget
from ..result_types import RunResult, RunResultHosts


@dataclass
class RealHost:
    """One connected host: its connection, agent, addresses and facts."""

    conn: SshConnection
    agent: RemoteAgent
    address: str
    """the host's address as mwperf's machine reaches it"""
    local_address: str
    """mwperf's machine's address as this host sees it"""
    facts: dict[str, Any]
    cleaned: dict[str, Any] = field(default_factory=dict)
    libraries: dict[str, str] = field(default_factory=dict)
    """preload libraries copied and checked there (preload.py): local SHA-256 -> remote path"""


_POOL: dict[tuple[str, SshTarget, Path | None, bool], RealHost] = {}


def close_all() -> None:
    """Close every pooled connection (at exit; tests call it too)."""
    for host in _POOL.values():
        host.conn.close()
    _POOL.clear()


atexit.register(close_all)


def _say(text: str) -> None:
    print(f"mwperf: {text}", file=sys.stderr)


def connect(name: str, target: SshTarget, options: SshOptions, local: Agent,
            say: Callable[[str], None] = _say) -> RealHost:
    """The pooled host ``name``, connected and prepared on first use."""
    key = (name, target, options.config, options.accept_new_host_key)
    host = _POOL.get(key)
    if host is not None and host.conn.alive():
        return host
    # leased: a SIGKILLed mwperf's master dies with it (PDEATHSIG), its /tmp folder is reaped
    conn = SshConnection.open(name, target, options, Lease.take(f"ssh connection to host {name}"))
    try:
        home, _, seen_text = conn.text(["sh", "-c", 'echo "$HOME"; echo "$SSH_CONNECTION"']
                                       ).partition("\n")
        seen = seen_text.split()
        if len(seen) != 4 or not home.startswith("/"):
            raise RunError(f"host '{name}': cannot tell its home folder and address ($HOME "
                           f"{home!r}, $SSH_CONNECTION {seen_text!r})")
        conn.cache = remote_cache(home)
        agent = ensure_agent(conn, local, say)
        cleaned = _clean(conn, agent.path, say)
        facts = json.loads(conn.text([agent.path, "facts"]))
    except BaseException:
        conn.close()
        raise
    host = RealHost(conn, agent, address=_unbracket(seen[2]), local_address=_unbracket(seen[0]),
                    facts=facts, cleaned=cleaned)
    _POOL[key] = host
    return host


def _unbracket(address: str) -> str:
    return address.removeprefix("::ffff:")


def _clean(conn: SshConnection, agent: str, say: Callable[[str], None]) -> dict[str, Any]:
    """Remove what a dead mwperf left on the host (its supervisor gone: processes, folders)."""
    done = conn.run([agent, "supervise-clean", "--root", f"{conn.cache}/runs"])
    try:
        report = json.loads(done.stdout.decode(errors="replace").strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {}
    if report.get("removed") or report.get("killed") or report.get("cgroups"):
        groups = len(report.get("cgroups") or [])
        say(f"host '{conn.name}': removed what an earlier mwperf left there: "
            f"{len(report.get('killed', []))} process(es), {len(report.get('removed', []))} "
            f"folder(s)" + (f", {groups} cgroup(s)" if groups else ""))
    return report


@dataclass
class PointHosts:
    """The real hosts one point uses, and where each role and daemon runs. A place (place.py):
    real hosts over SSH, and this machine."""

    pins_interfaces: ClassVar[bool] = True
    """a real machine has several interfaces: each agent is told the one on the path"""

    hosts: dict[str, RealHost]
    place: dict[str, str]
    prefix: str
    """the point's lease prefix: names the remote scratch folders"""
    cpu: Any = None
    """the point's emulation.cpu.CpuPlacement: CPU limits of what runs on these hosts"""

    def host_of(self, name: str) -> str:
        return self.place.get(name, LOCAL)

    def is_remote(self, name: str) -> bool:
        return self.host_of(name) != LOCAL

    def address_of(self, name: str) -> str:
        """The address of the host ``name`` is placed on, as the other hosts reach it."""
        host = self.host_of(name)
        if host != LOCAL:
            return self.hosts[host].address
        return next(iter(self.hosts.values())).local_address

    def netns_of(self, name: str) -> None:
        return None

    def scratch(self, name: str, placed_as: str | None = None) -> str:
        """The remote folder process ``name`` works in (the supervisor creates and removes
        it) on the host ``placed_as`` (default: ``name``) is placed on."""
        host = self.hosts[self.host_of(placed_as or name)]
        return f"{host.conn.cache}/runs/{self.prefix}-{name}"

    def host_addresses(self) -> list[str]:
        """Every address the agents meet at: this machine's (as the hosts see it) and each
        real host's."""
        return sorted({self.address_of(n) for n in ("ping", "pong", "pub", "sub")})

    def outage_window(self) -> None:
        return None

    def spawn(self, role: str, argv: list[str], workdir: Path, name: str,
              env: dict[str, str] | None, send: list[str]) -> RemoteProcess:
        """Start ``argv`` (an agent command line with remote paths) on the role's host."""
        host = self.hosts[self.host_of(role)]
        prefix = ["env", *(f"{k}={v}" for k, v in (env or {}).items())] if env else []
        limits = self.cpu.supervise_args(role) if self.cpu is not None else []
        proc = RemoteProcess.start(host.conn, host.agent.path, self.scratch(name, role), role,
                                   prefix + [host.agent.path, *argv[1:]], workdir, name, send,
                                   limits)
        if limits:
            try:
                self.cpu.confirm_remote(name, role, proc.channel)
            except BaseException:
                proc.close()
                proc.wait(10)
                raise
        return proc

    def record(self, result: "RunResult") -> None:
        """The result's ``hosts``: every real host, its agent, addresses and facts."""
        result["hosts"] = self.describe()

    def describe(self) -> RunResultHosts:
        """The result's ``hosts`` section: every real host, its agent, addresses and facts."""
        return {"place": dict(sorted(self.place.items())),
                "local_address": next(iter(self.hosts.values())).local_address,
                "hosts": {name: {"ssh": h.conn.target.url, "address": h.address,
                                 "agent": h.agent.path, "agent_version": h.agent.version,
                                 "agent_copied": h.agent.copied, "facts": h.facts}
                          for name, h in self.hosts.items()}}


@contextlib.contextmanager
def point_hosts(hosts: tuple[tuple[str, SshTarget], ...], place: tuple[tuple[str, str], ...],
                options: SshOptions, local: Agent, prefix: str):
    """The connected hosts of one point (connections stay pooled after it)."""
    connected = {name: connect(name, target, options, local) for name, target in hosts}
    yield PointHosts(connected, dict(place), prefix)
