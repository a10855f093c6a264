"""A daemon (rosmaster, mosquitto, the zenoh router, the ROS 1 relay) on a real host.

The daemon's spec is the one a local run uses (daemons/): its files, paths and environment
name the point's local work folder; here they are moved into the daemon's scratch folder on the
host (the supervisor's working folder, removed with it), its files are written there through
the SSH connection, and it runs under ``mwperf-agent supervise`` like a remote agent. Its
readiness is checked from mwperf's machine across the real network (the check the daemon's
spec defines: a CONNACK, the master's getPid ...), and its CPU and peak RSS come from the
supervisor (``sample``), read from /proc of its own pid on that host.
"""

import signal
import time
from dataclasses import dataclass
from pathlib import Path

from ..agent import Agent
from ..daemons.base import STOP_GRACE_S, DaemonProcess, DaemonSpec
from .hosts import PointHosts
from .supervised import Channel

WRITE_THEN_EXEC = ('set -e; umask 077; while [ "$1" != -- ]; do mkdir -p "$(dirname "$1")"; '
                   'printf %s "$2" > "$1"; shift 2; done; shift; exec "$@"')
"""a fixed script run as the supervised child: writes each (path, text) pair given as
positional arguments (never pasted into the script), then becomes the daemon (same pid)"""


@dataclass
class RemoteDaemon(DaemonProcess):
    """A daemon whose process is on a real host, behind a supervisor's channel."""

    channel: Channel | None = None

    @property
    def exit_code(self) -> int | None:
        return self.channel.returncode if self.channel.done.is_set() else None

    def mark_baseline(self) -> None:
        figures = self.channel.sample()
        if figures and figures.get("cpu_user_s") is not None:
            self._baseline = (figures["cpu_user_s"], figures["cpu_sys_s"], time.monotonic())

    def sample(self) -> None:
        """CPU and memory of the daemon's own pid on its host, read by the supervisor."""
        figures = self.channel.sample() or {}
        user, system = figures.get("cpu_user_s"), figures.get("cpu_sys_s")
        self.usage = self.usage_since_baseline(
            (user, system) if user is not None and system is not None else None,
            figures.get("peak_rss_kib"), figures.get("rss_anon_kib"), figures.get("rss_shmem_kib"))

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        if self.exit_code is None and not self.usage:
            self.sample()
        self._signal(signal.SIGTERM)
        if not self.channel.wait(grace_s):
            self.killed = True
            self._signal(signal.SIGKILL)
            if not self.channel.wait(3.0):
                self.channel.hang_up()
                self.channel.wait(5.0)
        self.channel.hang_up()

    def _signal(self, sig: signal.Signals) -> None:
        if self.exit_code is None:
            self.channel.tell(f"signal {sig.name.removeprefix('SIG')}")


def remote_daemon(hosts: PointHosts, placed_as: str, spec: DaemonSpec, workdir: Path,
                  agent: Agent) -> DaemonProcess | None:
    """Start ``spec`` on the real host it is placed on; None when it is placed here."""
    if not hosts.is_remote(placed_as):
        return None
    host = hosts.hosts[hosts.host_of(placed_as)]
    scratch = hosts.scratch(spec.name, placed_as)
    local = str(workdir)

    def moved(text: str) -> str:
        if text == str(agent.path):
            return host.agent.path
        return text.replace(local, scratch)

    env = [f"{k}={moved(v)}" for k, v in (spec.env or {}).items()]
    unset = [arg for name in spec.unset for arg in ("-u", name)]
    files = [arg for path, text in spec.files.items() for arg in (moved(path), text)]
    argv = ["sh", "-c", WRITE_THEN_EXEC, "sh", *files, "--",
            "env", *unset, *env, *(moved(a) for a in spec.argv)]
    log_path = workdir / "daemons" / f"{spec.name}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_bytes(b"")
    limits = hosts.cpu.supervise_args(placed_as, daemon=True) if hosts.cpu is not None else []
    popen = host.conn.popen([host.agent.path, "supervise", "--scratch", scratch, *limits, "--",
                             *argv])
    daemon = RemoteDaemon(spec, popen, log_path)
    daemon.channel = Channel(popen, log_path, log_path, workdir)
    if limits:  # in its host's cgroup from its first instruction (its supervisor put it there)
        try:
            hosts.cpu.confirm_remote(spec.name, placed_as, daemon.channel, daemon=True)
        except BaseException:
            daemon.channel.hang_up()
            daemon.channel.wait(10)
            raise
    return daemon
