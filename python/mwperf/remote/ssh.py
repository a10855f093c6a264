"""One OpenSSH connection per real host: a ControlMaster that mwperf starts and owns.

Why the system's OpenSSH client and not a Python SSH library: it is what a robotics engineer's
access to a robot already goes through (``~/.ssh/config`` with its ``Host`` aliases, ProxyJump
through a bastion, the ssh-agent, hardware keys, ``known_hosts``), so ``--host b=ssh://robot``
works exactly when ``ssh robot`` works; multiplexing (ControlMaster) makes every further command
and every point of a sweep reuse the one authenticated connection (docs/design-notes.md).

Rules kept here: keys or agent only (``BatchMode=yes``: ssh never asks for a password); the host
key is verified against known_hosts (``StrictHostKeyChecking=yes``; ``--accept-new-host-key``
turns it into ``accept-new``, which still refuses a *changed* key); every remote command is an
argument vector quoted with ``shlex.join`` (the remote login shell parses exactly one word per
argument; nothing from a scenario is pasted into a shell line); the master is mwperf's child,
killed with it, and leased, so a SIGKILLed mwperf leaves no ssh behind either.
"""

import contextlib
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import RunError
from ..leases import Lease, process_id
from ..procs import _die_with_parent, interrupts_deferred
from .target import SshTarget

CONNECT_TIMEOUT_S = 10
"""how long ssh may take to reach and authenticate to a host before it is 'unreachable'"""
ALIVE_INTERVAL_S = 2
ALIVE_COUNT = 3
"""a silent connection is declared dropped after ALIVE_INTERVAL_S * ALIVE_COUNT seconds"""
COMMAND_TIMEOUT_S = 60.0


@dataclass
class SshOptions:
    """What the user chose about SSH for every host of a run."""

    config: Path | None = None
    """``--ssh-config FILE`` (ssh -F): identity, known_hosts, ProxyJump ...; None: ssh's own"""
    accept_new_host_key: bool = False
    connect_timeout_s: int = CONNECT_TIMEOUT_S


@dataclass
class SshConnection:
    """A live multiplexed connection to one host (``open`` it; ``close`` ends it)."""

    name: str
    target: SshTarget
    options: SshOptions
    control: Path
    master: subprocess.Popen | None = None
    log: Path | None = None
    closed: bool = field(default=False)
    cache: str = ""
    """the per-user mwperf folder on the host (absolute), set once connected"""
    lease: Lease | None = None
    """holds the master and its folder: released by ``close``, or reaped once mwperf is gone"""

    @classmethod
    def open(cls, name: str, target: SshTarget, options: SshOptions,
             lease: Lease | None = None) -> "SshConnection":
        """Connect (bounded by the connect timeout); RunError saying what went wrong. The
        connection owns ``lease`` (its master and folder are recorded there) and releases it
        when it closes; a SIGKILLed mwperf's next run reaps it."""
        folder = Path(tempfile.mkdtemp(prefix="mwssh-", dir="/tmp"))  # short: a socket path
        conn = cls(name, target, options, folder / "c", log=folder / "master.log", lease=lease)
        try:
            if lease is not None:
                lease.add("path", str(folder))
            argv = ["ssh", *conn._base_options(), "-M", "-N", "-o", "ControlPersist=no",
                    *conn._destination()]
            with open(conn.log, "wb") as log, interrupts_deferred():
                conn.master = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                               stderr=log, process_group=0,
                                               preexec_fn=_die_with_parent(os.getpid()))
                if lease is not None:
                    with contextlib.suppress(RunError):
                        lease.add("process", process_id(conn.master.pid))
            deadline = time.monotonic() + options.connect_timeout_s + 5
            while not conn.control.exists():
                if conn.master.poll() is not None or time.monotonic() > deadline:
                    raise RunError(conn._master_failure())
                time.sleep(0.02)
        except BaseException:
            conn.close()
            raise
        return conn

    def _base_options(self) -> list[str]:
        o = self.options
        argv = ["-F", str(o.config)] if o.config else []
        return argv + ["-T", "-o", "BatchMode=yes", "-o", f"ControlPath={self.control}",
                       "-o", "StrictHostKeyChecking=" + ("accept-new" if o.accept_new_host_key
                                                          else "yes"),
                       "-o", f"ConnectTimeout={o.connect_timeout_s}",
                       "-o", f"ServerAliveInterval={ALIVE_INTERVAL_S}",
                       "-o", f"ServerAliveCountMax={ALIVE_COUNT}",
                       "-o", "LogLevel=ERROR"]

    def _destination(self) -> list[str]:
        t = self.target
        return [*(["-p", str(t.port)] if t.port else []), *(["-l", t.user] if t.user else []),
                "--", t.host]

    def _master_failure(self) -> str:
        """One line saying why the connection could not be made, with what to do."""
        text = self.log.read_text(errors="replace") if self.log and self.log.exists() else ""
        last = " ".join(text.split())[-300:] or "(ssh said nothing)"
        where = f"host '{self.name}' ({self.target.url})"
        if "REMOTE HOST IDENTIFICATION HAS CHANGED" in text or "differs from the key" in text:
            return (f"{where}: its host key has CHANGED since it was recorded in known_hosts; "
                    f"mwperf will not connect (this can be an attack). If the robot was "
                    f"reinstalled, remove the old key with 'ssh-keygen -R {self.target.host}'")
        if "Host key verification failed" in text or "No ED25519 host key is known" in text \
                or "host key is known" in text:
            return (f"{where}: its host key is not in known_hosts, so it cannot be verified; "
                    f"check it and connect once with '{self.manual()}', or pass "
                    f"--accept-new-host-key to record it on first use")
        if "Permission denied" in text:
            return (f"{where}: authentication failed ({last}); mwperf uses keys or the "
                    f"ssh-agent only, never a password: 'ssh-copy-id {self.target}' or "
                    f"'ssh-add', or set IdentityFile in --ssh-config; check with "
                    f"'{self.manual()}'")
        if (self.master is not None and self.master.poll() is None) or "timed out" in text:
            return (f"{where}: unreachable: no answer within "
                    f"{self.options.connect_timeout_s} s; is it on and reachable from here? "
                    f"({last})")
        return f"{where}: cannot connect: {last}"

    def manual(self) -> str:
        """The ssh command a person would type to reach the host."""
        t = self.target
        return shlex.join(["ssh", *(["-F", str(self.options.config)] if self.options.config
                                    else []), *(["-p", str(t.port)] if t.port else []),
                           f"{t.user}@{t.host}" if t.user else t.host])

    def command(self, argv: list[str]) -> list[str]:
        """The local ssh command line that runs ``argv`` on the host through the master."""
        if not argv:
            raise ValueError("empty remote command")
        return ["ssh", *self._base_options(), "-o", "ControlMaster=no",
                *self._destination(), shlex.join(argv)]

    def run(self, argv: list[str], stdin: bytes | None = None,
            timeout_s: float = COMMAND_TIMEOUT_S) -> subprocess.CompletedProcess[bytes]:
        """Run ``argv`` on the host and wait; a dropped connection is a RunError."""
        self._check_alive()
        try:
            done = subprocess.run(self.command(argv), input=stdin, capture_output=True,
                                  timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            raise RunError(f"host '{self.name}': '{shlex.join(argv)}' did not finish within "
                           f"{timeout_s:g} s") from None
        if done.returncode == 255:
            raise RunError(f"host '{self.name}' ({self.target.url}): the connection failed: "
                           f"{done.stderr.decode(errors='replace').strip()[-300:]}")
        return done

    def text(self, argv: list[str], timeout_s: float = COMMAND_TIMEOUT_S) -> str:
        """stdout of ``argv`` (it must succeed), stripped."""
        done = self.run(argv, timeout_s=timeout_s)
        if done.returncode != 0:
            raise RunError(f"host '{self.name}': '{shlex.join(argv)}' exited with "
                           f"{done.returncode}: {done.stderr.decode(errors='replace').strip()}")
        return done.stdout.decode(errors="replace").strip()

    def popen(self, argv: list[str], stdout: int | None = subprocess.PIPE,
              stderr: object = subprocess.PIPE) -> subprocess.Popen:
        """Start ``argv`` on the host with a pipe to its stdin (its control channel)."""
        self._check_alive()
        return subprocess.Popen(self.command(argv), stdin=subprocess.PIPE, stdout=stdout,
                                stderr=stderr, process_group=0,
                                preexec_fn=_die_with_parent(os.getpid()))

    def alive(self) -> bool:
        return not self.closed and self.master is not None and self.master.poll() is None

    def _check_alive(self) -> None:
        if not self.alive():
            raise RunError(f"host '{self.name}' ({self.target.url}): the SSH connection is "
                           f"gone: {self._master_failure()}")

    def close(self) -> None:
        """End the master (every session through it ends too) and remove its folder."""
        if self.closed:
            return
        self.closed = True
        if self.master is not None and self.master.poll() is None:
            self.master.terminate()
            try:
                self.master.wait(3)
            except subprocess.TimeoutExpired:
                self.master.kill()
                self.master.wait()
        with contextlib.suppress(OSError):
            for child in self.control.parent.iterdir():
                child.unlink()
            self.control.parent.rmdir()
        if self.lease is not None:
            for line in self.lease.release():
                print(f"mwperf: warning: could not release {line} (lease {self.lease.path})",
                      file=sys.stderr)
