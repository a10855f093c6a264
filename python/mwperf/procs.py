"""Agent processes: spawned in their own process group, watched, and always torn down.

Each agent gets its own process group, so a Ctrl-C in the terminal reaches only mwperf, which
then stops the agents deliberately (SIGINT, so they still write their reports). The kernel is
asked to SIGKILL an agent if mwperf itself dies without cleaning up. ``AgentSet`` is the
registry: leaving its ``with`` block, for whatever reason, stops every agent still running.
"""

import contextlib
import ctypes
import os
import select
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from .agent import last_line
from .errors import RunError, UsageError

STOP_GRACE_S = 3.0
_PR_SET_PDEATHSIG = 1
_CLONE_NEWNET = 0x40000000
_LIBC = ctypes.CDLL(None, use_errno=True)


PREPARING = "mwperf-agent: preparing: "
"""an agent's stderr line before first-use work that comes before its READY (a shim compiled
against a ROS 2 distribution; crates/mwperf-transports/src/preparing.rs)"""
PREPARING_TIMEOUT_S = 600.0
"""how much longer such an agent may take to be ready: a C++ compile beside a loaded 2-core
machine's other work (tens of seconds; it was stopped after 10 s, and with it the compiler)"""


@dataclass
class AgentProcess:
    """One running agent; stdout and stderr go to files in the work directory."""

    role: str
    popen: subprocess.Popen
    stdout_path: Path
    stderr_path: Path
    killed: bool = False
    """True when it did not stop within the grace period and had to be SIGKILLed."""
    _pidfd: int | None = field(default=None, repr=False)
    name: str = ""
    """this agent among several of one role (``sub.2`` of ``--subscribers``); else the role"""
    placed: tuple[Path | None, dict[str, str] | None] = (None, None)
    """the network namespace and extra environment it was started with (``respawn``)"""
    ready_lines: int = 1
    """the READY lines it prints (one per node of a process of several: graph/processes.py)"""

    def __post_init__(self) -> None:
        self.name = self.name or self.role

    @property
    def exit_code(self) -> int | None:
        """The exit code, negative for a signal, None while running."""
        return self.popen.poll()

    def stderr_tail(self) -> str:
        """The last line the agent printed on stderr."""
        try:
            return last_line(self.stderr_path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            return "(no message on stderr)"

    def stderr_text(self) -> str:
        """Everything the agent printed on stderr ("" when the file is gone)."""
        try:
            return self.stderr_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def wait_ready(self, transport: str, timeout_s: float) -> str:
        """Wait for ``READY <transport> <address>`` on stdout and return the address; an agent
        that said it prepares something on first use (``PREPARING`` on stderr: a shim it
        compiles) gets ``PREPARING_TIMEOUT_S`` more, once."""
        deadline = time.monotonic() + timeout_s
        preparing = ""
        while True:
            code = self.exit_code  # before reading, so a READY printed just before exit counts
            text = self.stdout_path.read_text(encoding="utf-8", errors="replace")
            if self.said_ready(text):
                lines = text.split("\n")[:self.ready_lines]
                said = [self._parse_ready(line, transport) for line in lines]
                if len(set(said)) < len(said):
                    raise RunError(f"{self.role} printed READY for {', '.join(said)}: one line "
                                   "per node of its process expected")
                return said[0]
            if code is not None:
                error = UsageError if code == 2 else RunError
                raise error(f"{self.role} exited before it was ready (exit code {code}): "
                            f"{self.stderr_tail()}")
            if time.monotonic() > deadline:
                if not preparing and (preparing := self._preparing()):
                    deadline = time.monotonic() + PREPARING_TIMEOUT_S
                    continue
                waited = (f"{timeout_s:g} s" if not preparing else
                          f"{timeout_s:g} s + {PREPARING_TIMEOUT_S:g} s for {preparing}")
                raise RunError(f"{self.role} did not print 'READY {transport} <address>' "
                               f"within {waited} (its last words: {self.stderr_tail()})")
            self.wait(0.005)

    def said_ready(self, text: str) -> bool:
        """Whether ``text`` (its stdout) holds all its READY lines (or what stands there)."""
        return text.count("\n") >= self.ready_lines

    def _preparing(self) -> str:
        """What the agent said it prepares before READY (its ``PREPARING`` line), if it did."""
        try:
            text = self.stderr_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        found = [line for line in text.splitlines() if line.startswith(PREPARING)]
        return found[-1].removeprefix(PREPARING) if found else ""

    def _parse_ready(self, line: str, transport: str) -> str:
        parts = line.rstrip("\r").split(" ", 2)
        if len(parts) != 3 or parts[0] != "READY" or parts[1] != transport or not parts[2]:
            raise RunError(f"{self.role} printed {line!r} instead of 'READY {transport} <address>'")
        return parts[2]

    def wait(self, timeout_s: float | None) -> int | None:
        """Wait until the agent exits (exit code) or ``timeout_s`` passes (None)."""
        if self.exit_code is not None or timeout_s == 0:
            return self.exit_code
        if self._pidfd is not None:  # sleeps in the kernel: no polling beside the measurement
            poller = select.poll()
            poller.register(self._pidfd, select.POLLIN)
            poller.poll(None if timeout_s is None else max(1, round(timeout_s * 1000)))
            return self.exit_code
        try:
            return self.popen.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def send(self, sig: signal.Signals) -> None:
        """Send ``sig`` to the agent's process group, if it is still running."""
        if self.exit_code is None:
            try:
                os.killpg(self.popen.pid, sig)
            except ProcessLookupError:
                pass

    def kill(self) -> None:
        """SIGKILL the agent's process group and reap it."""
        if self.exit_code is None:
            self.killed = True
            self.send(signal.SIGKILL)
            self.popen.wait()

    def close(self) -> None:
        """Release the process file descriptor."""
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None


RESPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mwperf-respawn")
"""a restart (``--restart``) starts its process again from this one long-lived thread: the
kernel's parent-death signal (``_die_with_parent``) follows the thread that started a child, and
must not fire when the thread that schedules the restarts ends"""


class Placement(Protocol):
    """Where and how an agent runs (CPU quota, pinning, priority: emulation/cpu.py)."""

    def child_setup(self, role: str) -> Callable[[], None] | None:
        """What the child does before exec (None: nothing)."""

    def confirm(self, role: str, pid: int) -> None:
        """Check, right after the spawn, that it took effect (raises RunError if not)."""


class AgentSet:
    """The agents of one point; the ``with`` block guarantees none outlives it."""

    def __init__(self, workdir: Path, placement: Placement | None = None) -> None:
        self.workdir = workdir
        self.placement = placement
        self.agents: list[AgentProcess] = []

    def spawn(self, role: str, argv: list[str], netns: Path | None = None,
              env: dict[str, str] | None = None, name: str | None = None) -> AgentProcess:
        """Start one agent in its own process group; stdout/stderr go to <name>.stdout/.stderr.

        ``netns``: the network namespace file to start it in (an emulated host), else mwperf's;
        ``env``: variables to set on top of mwperf's environment; ``name``: tells apart several
        agents of one role (default: the role).
        """
        name = name or role
        stdout_path = self.workdir / f"{name}.stdout"
        stderr_path = self.workdir / f"{name}.stderr"
        setup = self.placement.child_setup(role) if self.placement else None
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err, interrupts_deferred():
            try:
                popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                         process_group=0, env={**os.environ, **env} if env else None,
                                         preexec_fn=_die_with_parent(os.getpid(), netns, setup))
            except OSError as exc:
                raise RunError(f"cannot start {argv[0]}: {exc.strerror}") from None
            agent = AgentProcess(role, popen, stdout_path, stderr_path,
                                 _pidfd=_open_pidfd(popen.pid), name=name, placed=(netns, env))
            self.agents.append(agent)
        if self.placement:
            self.placement.confirm(role, popen.pid)
        return agent

    def respawn(self, old: AgentProcess, argv: list[str]) -> AgentProcess:
        """Start ``old`` (which has exited: a restart) again with ``argv``, where and as it ran,
        in its place in the set."""
        new = self.spawn(old.role, argv, *old.placed, name=old.name)
        self.agents.remove(new)
        self.agents[self.agents.index(old)] = new
        old.close()
        return new

    def adopt(self, agent: AgentProcess) -> AgentProcess:
        """Register an agent started elsewhere (on a real host: remote/supervised.py)."""
        self.agents.append(agent)
        return agent

    def stop_all(self, sig: signal.Signals = signal.SIGINT, grace_s: float = STOP_GRACE_S) -> None:
        """Send ``sig`` to every running agent, wait up to ``grace_s`` in all, then SIGKILL.

        A second Ctrl-C during this bounded wait is ignored, so it cannot leave agents behind.
        """
        with _ignoring_interrupts():
            for agent in self.agents:
                agent.send(sig)
            deadline = time.monotonic() + grace_s
            for agent in self.agents:
                agent.wait(max(0.0, deadline - time.monotonic()))
                agent.kill()

    def __enter__(self) -> "AgentSet":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop_all()
        for agent in self.agents:
            agent.close()


def _open_pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _die_with_parent(parent_pid: int, netns: Path | None = None,
                     then: Callable[[], None] | None = None) -> Callable[[], None]:
    """A preexec_fn: SIGKILL the child when mwperf dies (Linux), and let it hear SIGINT/SIGTERM;
    ``then`` runs after that (e.g. joining a cgroup).

    A shell starts background jobs with SIGINT ignored, and children inherit that; the agents
    must not, or the SIGINT that asks them to stop and report would be lost. With ``netns`` the
    child enters that network namespace (setns) before exec: no extra process in between.
    """
    def preexec() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent_pid:  # mwperf died before prctl took effect
            os._exit(1)
        if netns is not None:
            fd = os.open(netns, os.O_RDONLY)
            if _LIBC.setns(fd, _CLONE_NEWNET) != 0:
                os.write(2, f"mwperf: cannot enter network namespace {netns}\n".encode())
                os._exit(1)
            os.close(fd)
        if then is not None:
            then()
    return preexec


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back inside the block and deliver them as it ends (main thread
    only; elsewhere a no-op). Start a child and register it inside one: a Ctrl-C that lands
    while Popen waits for the child's exec would otherwise leave a child nobody stops."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    saved = {sig: signal.signal(sig, lambda signum, _frame: held.append(signum))
             for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        for signum in dict.fromkeys(held):
            signal.raise_signal(signum)


@contextlib.contextmanager
def _ignoring_interrupts() -> Iterator[None]:
    """Ignore SIGINT and SIGTERM inside the block (main thread only; elsewhere a no-op)."""
    saved = {}
    if threading.current_thread() is threading.main_thread():
        saved = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
