"""A managed daemon: started before the agents, checked for readiness with a deadline, measured
(CPU, peak RSS) and always stopped, whatever happens.

Each daemon runs in its own process group (a Ctrl-C in the terminal reaches only mwperf, which
then stops it deliberately) and is SIGKILLed by the kernel if mwperf itself dies — unless it
changes its user ID (mosquitto started as root becomes user mosquitto), which clears that
request; so each daemon is also recorded in the run's lease, and the next mwperf kills one that
outlived a killed mwperf. Its stdout and
stderr go to ``<work dir>/daemons/<name>.log``, which is saved with the point's result.
"""

import contextlib
import functools
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..emulation.hosts import inside
from ..errors import RunError
from ..leases import Lease, process_id
from ..procs import _die_with_parent, _ignoring_interrupts, interrupts_deferred
from ..merge import make_warning
from ..result_types import Daemon, Warning

STOP_GRACE_S = 2.0
NOT_FOUND = 127
"""the exit code of a program that could not be started (a shell's, and the supervisor's)"""
POLL_S = 0.01
"""how often a starting daemon is asked whether it is ready (a TCP connect or a log line: cheap;
every poll interval is start-up time of the point)"""
START_ATTEMPTS = 3
"""a free port can be taken between our check and the daemon's bind: try again with another"""
_TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, close)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class DaemonSpec:
    """How to start one daemon and how to tell it is ready."""

    name: str
    """short name, also the log file name (``mosquitto``, ``rosmaster``, ``relay``)"""
    argv: list[str]
    package: str
    """the Debian package that provides ``argv[0]``, for the install hint"""
    ready: Callable[["DaemonProcess"], bool]
    """one quick, bounded check; True when the daemon serves (it may set ``address``)"""
    env: dict[str, str] | None = None
    """extra environment variables"""
    unset: tuple[str, ...] = ()
    """environment variables to remove (e.g. a venv's PYTHONPATH for Debian's /usr/bin/python3)"""
    ready_timeout_s: float = 10.0
    version: Callable[["DaemonProcess"], str | None] | None = None
    files: dict[str, str] = field(default_factory=dict)
    """files to write before starting (path -> text), e.g. a generated configuration"""
    netns: Path | None = None
    """the network namespace to run in (an emulated host's), and to probe readiness from"""
    after: Callable[[], None] | None = None
    """called once its process is stopped and reaped (removing what it leaves behind)"""


@dataclass
class DaemonProcess:
    """One running daemon."""

    spec: DaemonSpec
    popen: subprocess.Popen
    log_path: Path
    address: str | None = None
    """what the daemon told us to connect to, if it prints that (zenoh router)"""
    killed: bool = False
    died: int | None = None
    """its exit code when it was found gone at the end of the measurement (it should not be)"""
    usage: dict[str, Any] = field(default_factory=dict)
    """CPU and peak RSS, sampled just before it is stopped"""
    _baseline: tuple[float, float, float] = (0.0, 0.0, 0.0)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def exit_code(self) -> int | None:
        return self.popen.poll()

    def log_tail(self) -> str:
        """The last non-empty line of the log, or a note that there was none."""
        try:
            lines = [ln.strip() for ln in self.log_path.read_text(errors="replace").splitlines()]
        except OSError:
            lines = []
        lines = [ln for ln in lines if ln]
        return lines[-1] if lines else "(nothing in its log)"

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def mark_baseline(self) -> None:
        """Start the CPU clock here: the daemon's start-up is not part of the measurement."""
        cpu = _cpu_times(self.popen.pid)
        if cpu is not None:
            self._baseline = (*cpu, time.monotonic())

    def sample(self) -> None:
        """Record CPU time since the baseline and the peak RSS (call while it still runs)."""
        cpu, memory = _cpu_times(self.popen.pid), status_memory(self.popen.pid)
        self.usage = self.usage_since_baseline(cpu, memory.get("VmHWM"), memory.get("RssAnon"),
                                               memory.get("RssShmem"))

    def usage_since_baseline(self, cpu: tuple[float, float] | None, peak_kib: int | None,
                             anon_kib: int | None, shmem_kib: int | None) -> dict[str, Any]:
        """The ``usage`` entry for CPU times read now (user, sys in s) and memory figures."""
        user0, sys0, t0 = self._baseline
        return {
            "cpu_user_s": round(max(0.0, cpu[0] - user0), 3) if cpu else None,
            "cpu_sys_s": round(max(0.0, cpu[1] - sys0), 3) if cpu else None,
            "wall_s": round(time.monotonic() - t0, 3) if t0 else None,
            "peak_rss_kib": peak_kib, "rss_anon_kib": anon_kib, "rss_shmem_kib": shmem_kib,
        }

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """SIGTERM its process group, wait up to ``grace_s``, then SIGKILL; always reaps."""
        if self.exit_code is None and not self.usage:
            self.sample()
        self._signal(signal.SIGTERM)
        try:
            self.popen.wait(grace_s)
        except subprocess.TimeoutExpired:
            self.killed = True
        self._signal(signal.SIGKILL)  # also any child it left in its group
        self.popen.wait()
        if self.spec.after is not None:
            self.spec.after()

    def kill_now(self) -> int:
        """SIGKILL its process group at once and reap it (a restart: no grace, no sample);
        returns the monotonic time just after the signal was sent."""
        self._signal(signal.SIGKILL)
        killed_ns = time.monotonic_ns()
        self.popen.wait()
        return killed_ns

    def describe(self) -> Daemon:
        """The run-result's ``daemons[]`` entry."""
        version = None
        if self.spec.version is not None:
            with contextlib.suppress(Exception):
                version = self.spec.version(self)
        usage = {"cpu_user_s": None, "cpu_sys_s": None, "wall_s": None, "peak_rss_kib": None,
                 **self.usage}
        return {"name": self.name, "argv": self.spec.argv, "version": version,
                "address": self.address, **usage,
                "killed": self.killed, "log": f"daemons/{self.log_path.name}"}

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, sig)


class DaemonSet:
    """The daemons of one point; leaving the ``with`` block stops every one of them."""

    def __init__(self, workdir: Path, lease: Lease | None = None) -> None:
        self.folder = workdir / "daemons"
        self.lease = lease
        self.daemons: list[DaemonProcess] = []
        self.remote: Callable[[DaemonSpec], "DaemonProcess | None"] | None = None
        """starts a daemon placed on a real host there (remote/daemon.py) and returns it, or
        returns None for a daemon that runs here"""
        self.on_spawn: Callable[[DaemonSpec, int], None] | None = None
        """called with each daemon's spec and pid right after it starts (e.g. to put it under
        its emulated host's CPU limits); a RunError from it fails the start"""

    def start(self, make: Callable[[], DaemonSpec]) -> DaemonProcess:
        """Start the daemon ``make()`` describes and wait until it is ready.

        ``make`` is called again (new free port) when the daemon exits before it is ready, up to
        START_ATTEMPTS times. Raises RunError: program missing (naming the Debian package), exited,
        or not ready within its deadline (then it is stopped).
        """
        for attempt in range(1, START_ATTEMPTS + 1):
            spec = make()
            daemon = self._spawn(spec)
            deadline = time.monotonic() + spec.ready_timeout_s
            while True:
                if daemon.exit_code is not None:
                    break
                with contextlib.suppress(OSError):
                    if inside(spec.netns, functools.partial(spec.ready, daemon)):
                        daemon.mark_baseline()
                        return daemon
                if time.monotonic() > deadline:
                    daemon.stop()
                    raise RunError(f"{spec.name} did not become ready within "
                                   f"{spec.ready_timeout_s:g} s; its log: {daemon.log_tail()} "
                                   f"({daemon.log_path})")
                time.sleep(POLL_S)
            if daemon.exit_code == NOT_FOUND:
                raise RunError(f"{spec.name}: {spec.argv[0]} not found on its host; install it "
                               f"there with 'apt-get install {spec.package}'")
            if attempt == START_ATTEMPTS or "in use" not in daemon.log_text().lower():
                raise RunError(f"{spec.name} exited before it was ready (exit code "
                               f"{daemon.exit_code}): {daemon.log_tail()}")
        raise AssertionError("unreachable")

    def respawn(self, old: DaemonProcess, spec: DaemonSpec, log_name: str,
                timeout_s: float) -> DaemonProcess:
        """Start ``spec`` in the place of ``old`` (killed: a restart), logging to
        ``<log_name>.log``, and wait until it is ready (RunError when it is not in time)."""
        new = self._spawn(spec, log_name)
        self.daemons.remove(new)
        self.daemons[self.daemons.index(old)] = new
        deadline = time.monotonic() + timeout_s
        while new.exit_code is None and time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                if inside(spec.netns, functools.partial(spec.ready, new)):
                    new.mark_baseline()
                    return new
            time.sleep(POLL_S)
        raise RunError(f"{spec.name} was not ready again within {timeout_s:g} s of its restart "
                       f"(exit code {new.exit_code}): {new.log_tail()}")

    def _spawn(self, spec: DaemonSpec, log_name: str | None = None) -> DaemonProcess:
        self.folder.mkdir(parents=True, exist_ok=True)
        remote = self.remote(spec) if self.remote is not None else None
        if remote is not None:
            self.daemons.append(remote)
            return remote
        program = spec.argv[0]
        if shutil.which(program) is None:
            raise RunError(f"{spec.name}: {program} not found; install it with "
                           f"'apt-get install {spec.package}' (or 'make setup')")
        for path, text in spec.files.items():
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(text, encoding="utf-8")
        self.folder.mkdir(parents=True, exist_ok=True)
        log_path = self.folder / f"{log_name or spec.name}.log"
        env = {k: v for k, v in os.environ.items() if k not in spec.unset} | (spec.env or {})
        with open(log_path, "ab") as log, interrupts_deferred():
            try:
                popen = subprocess.Popen(spec.argv, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, env=env, process_group=0,
                                         preexec_fn=_die_with_parent(os.getpid(), spec.netns))
            except OSError as exc:
                raise RunError(f"cannot start {spec.name} ({program}): {exc.strerror}") from None
            daemon = DaemonProcess(spec, popen, log_path)
            self.daemons.append(daemon)
            if self.lease is not None:
                with contextlib.suppress(RunError):  # RunError: it exited already
                    self.lease.add("process", process_id(popen.pid))
        if self.on_spawn is not None:
            self.on_spawn(spec, popen.pid)
        return daemon

    def stop_all(self) -> None:
        """Stop every daemon, newest first (a relay before its master); Ctrl-C cannot interrupt."""
        with _ignoring_interrupts():
            for daemon in reversed(self.daemons):
                daemon.stop()

    def sample_all(self) -> None:
        """Record every running daemon's CPU and peak RSS (at the end of the measurement)."""
        for daemon in self.daemons:
            if daemon.exit_code is None:
                daemon.sample()
            else:
                daemon.died = daemon.exit_code

    def describe(self) -> list[Daemon]:
        return [daemon.describe() for daemon in self.daemons]

    def warnings(self) -> list[Warning]:
        """A daemon that died during the measurement (seen by :meth:`sample_all`) or did not stop
        on SIGTERM: the run's warnings (a restarted one's place is its new process's)."""
        died = [make_warning("daemon-exited", f"{d.name} exited during the run (exit code "
                             f"{d.died}): {d.log_tail()}", f"see daemons/{d.log_path.name}")
                for d in self.daemons if d.died is not None]
        return died + [make_warning("daemon-killed", f"{d.name} did not stop within a grace "
                                    "period of SIGTERM and was killed (SIGKILL)",
                                    f"see daemons/{d.log_path.name}")
                       for d in self.daemons if d.killed]

    def __enter__(self) -> "DaemonSet":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop_all()


def _cpu_times(pid: int) -> tuple[float, float] | None:
    """utime and stime in seconds, fields 14 and 15 of /proc/<pid>/stat."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[11]) / _TICKS, int(fields[12]) / _TICKS


MEMORY_LINES = ("VmHWM", "RssAnon", "RssFile", "RssShmem")


def status_memory(pid: int) -> dict[str, int]:
    """The process's own memory lines of /proc/<pid>/status in KiB: VmHWM (its peak resident set
    since its exec: never a parent's, unlike getrusage's ru_maxrss), and the resident set now by
    kind (RssAnon: heap and stacks; RssFile: code and mapped files; RssShmem: shared memory).
    Empty when the process is gone."""
    found: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key in MEMORY_LINES:
                found[key] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        return {}
    return found


def package_version(package: str) -> str | None:
    """The installed Debian package version, if dpkg knows it."""
    try:
        done = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package],
                              capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None
