"""A process on a real host, run by ``mwperf-agent supervise`` at the end of an SSH channel.

The supervisor's stdout is a line protocol (docs/agent-contract.md, "supervise"): ``started
PID``, ``out LINE`` / ``err LINE`` (the child's stdout and stderr), ``usage JSON`` (answer to
``sample``), ``file NAME CHUNK``... ``fileend NAME BYTES SHA256`` (the files it was asked to
send back, after the child exits), ``nofile NAME``, and last ``exit CODE``. Its stdin is the
control channel: ``signal INT|TERM|KILL``, ``sample``; EOF — the connection dropped, or mwperf
died — makes it stop the child and remove its scratch folder, so nothing stays on the robot.

``RemoteProcess`` reads that stream on a thread and keeps the same files as a local agent
(``<name>.stdout``, ``<name>.stderr``, the report), so the runner treats both alike. A channel
that closes without ``exit`` is a lost connection: the process counts as ended (exit code
``LOST``), with the reason kept for the result.
"""

import base64
import contextlib
import hashlib
import json
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

from ..procs import AgentProcess
from .ssh import SshConnection

LOST = 255
"""the exit code of a process whose SSH channel closed before it reported its own"""
LIMIT_REFUSED = 126
"""the exit code of a process whose CPU limits could not be applied (it never ran)"""
NOTICE = b"mwperf-agent supervise: "
SIGNAL_NAMES = {signal.SIGINT: "INT", signal.SIGTERM: "TERM", signal.SIGKILL: "KILL"}


class Channel:
    """The supervisor's line protocol, read into local files and state."""

    def __init__(self, popen: subprocess.Popen, stdout_path: Path, stderr_path: Path,
                 files_dir: Path) -> None:
        self.popen = popen
        self.stdout_path, self.stderr_path, self.files_dir = stdout_path, stderr_path, files_dir
        self.remote_pid: int | None = None
        self.returncode: int | None = None
        self.lost: str | None = None
        """why the channel closed without an exit line"""
        self.files: dict[str, bytes] = {}
        self.cgroup: dict[str, Any] | None = None
        """what the supervisor's CPU limits took (``cgroup`` line: path, quota, CPUs)"""
        self.throttling: dict[str, Any] | None = None
        """the cgroup's latest throttling figures (from ``usage`` and ``cgroupend``)"""
        self.cgroup_removed: bool | None = None
        self.notices: list[str] = []
        """the supervisor's own notices (``err mwperf-agent supervise: ...``)"""
        self.limited = threading.Event()
        """set when the ``cgroup`` line came (or the channel closed)"""
        self._chunks: dict[str, list[bytes]] = {}
        self._usage: list[dict[str, Any]] = []
        self._usage_ready = threading.Condition()
        self._write_lock = threading.Lock()
        self.done = threading.Event()
        self._thread = threading.Thread(target=self._read, name="mwperf-remote", daemon=True)
        self._ssh_err = threading.Thread(target=self._read_ssh_errors, daemon=True)
        self._ssh_text: list[str] = []
        self._ssh_err.start()  # first: the reader joins it when the channel closes
        self._thread.start()

    def _read(self) -> None:
        out = open(self.stdout_path, "ab", buffering=0)
        err = open(self.stderr_path, "ab", buffering=0)
        try:
            for raw in self.popen.stdout:
                kind, _, rest = raw.rstrip(b"\n").partition(b" ")
                self._dispatch(kind.decode(errors="replace"), rest, out, err)
        finally:
            out.close()
            err.close()
            self.popen.wait()
            self._ssh_err.join(2)
            if self.returncode is None:
                said = " ".join(" ".join(self._ssh_text).split())[-200:]
                if said:  # what ssh or the remote shell said goes where the process's would
                    with open(self.stderr_path, "ab") as log:
                        log.write(said.encode() + b"\n")
                self.lost = ("the SSH connection closed before the process reported its exit"
                             + (f" ({said})" if said else ""))
                self.returncode = LOST
            with self._usage_ready:
                self._usage_ready.notify_all()
            self.done.set()
            self.limited.set()

    def _dispatch(self, kind: str, rest: bytes, out: Any, err: Any) -> None:
        if kind == "out":
            out.write(rest + b"\n")
        elif kind == "err":
            err.write(rest + b"\n")
            if rest.startswith(NOTICE):
                self.notices.append(rest[len(NOTICE):].decode(errors="replace"))
        elif kind in ("cgroup", "cgroupend"):
            with contextlib.suppress(ValueError):
                figures = json.loads(rest)
                if isinstance(figures, dict) and kind == "cgroup":
                    self.cgroup = figures
                    self.limited.set()
                elif isinstance(figures, dict):
                    self.throttling = figures.get("throttling") or self.throttling
                    self.cgroup_removed = figures.get("removed")
        elif kind == "started":
            with contextlib.suppress(ValueError):
                self.remote_pid = int(rest)
        elif kind == "usage":
            with contextlib.suppress(ValueError):
                figures = json.loads(rest)
                if isinstance(figures, dict) and figures.get("throttling"):
                    self.throttling = figures["throttling"]
                with self._usage_ready:
                    self._usage.append(figures if isinstance(figures, dict) else {})
                    self._usage_ready.notify_all()
        elif kind == "file":
            name, _, chunk = rest.partition(b" ")
            with contextlib.suppress(ValueError):
                self._chunks.setdefault(name.decode(), []).append(base64.b64decode(chunk))
        elif kind == "fileend":
            self._file_end(rest.decode(errors="replace").split())
        elif kind == "exit":
            with contextlib.suppress(ValueError):
                self.returncode = int(rest)

    def _file_end(self, words: list[str]) -> None:
        if len(words) != 3:
            return
        name, size, digest = words
        data = b"".join(self._chunks.pop(name, []))
        if str(len(data)) != size or hashlib.sha256(data).hexdigest() != digest:
            return  # a damaged copy is no report: the runner says the report is missing
        if "/" not in name and name not in ("", ".", ".."):
            (self.files_dir / name).write_bytes(data)
            self.files[name] = data

    def _read_ssh_errors(self) -> None:
        for raw in self.popen.stderr:
            self._ssh_text.append(raw.decode(errors="replace"))

    def tell(self, line: str) -> None:
        """Send one control line; a closed channel is ignored (the process is ending anyway)."""
        with self._write_lock, contextlib.suppress(OSError, ValueError):
            self.popen.stdin.write(line.encode() + b"\n")
            self.popen.stdin.flush()

    def sample(self, timeout_s: float = 5.0) -> dict[str, Any] | None:
        """Ask for the child's CPU and memory figures now; None if no answer came."""
        with self._usage_ready:
            seen = len(self._usage)
            self.tell("sample")
            self._usage_ready.wait_for(lambda: len(self._usage) > seen or self.done.is_set(),
                                       timeout_s)
            return self._usage[seen] if len(self._usage) > seen else None

    def wait_limits(self, timeout_s: float = 30.0) -> dict[str, Any] | None:
        """The ``cgroup`` line's figures once they came; None when the process ended first
        (see ``refused``) or nothing came in time."""
        self.limited.wait(timeout_s)
        return self.cgroup

    def refused(self) -> str | None:
        """Why the supervisor refused to run the process (a CPU limit that did not take)."""
        if self.done.is_set() and self.returncode == LIMIT_REFUSED and self.notices:
            return self.notices[-1]
        return None

    def hang_up(self) -> None:
        """Close the control channel: the supervisor stops the child and cleans up."""
        with self._write_lock, contextlib.suppress(OSError):
            self.popen.stdin.close()

    def wait(self, timeout_s: float | None) -> bool:
        return self.done.wait(timeout_s)


class RemoteProcess(AgentProcess):
    """An agent on a real host, with a local agent's interface (procs.AgentProcess)."""

    channel: Channel
    host: str
    """the name of the real host it runs on (--host NAME=...)"""

    @classmethod
    def start(cls, conn: SshConnection, remote_agent: str, scratch: str, role: str,
              argv: list[str], workdir: Path, name: str, send: list[str],
              limits: list[str] | None = None) -> "RemoteProcess":
        """Run ``argv`` (its paths already the remote scratch's) under the supervisor;
        ``limits``: its CPU limit flags (``--cgroup``, ``--cpu-quota``, ``--cpu-pin``)."""
        stdout_path, stderr_path = workdir / f"{name}.stdout", workdir / f"{name}.stderr"
        for path in (stdout_path, stderr_path):
            path.write_bytes(b"")
        sends = [arg for file in send for arg in ("--send", file)]
        popen = conn.popen([remote_agent, "supervise", "--scratch", scratch, *sends,
                            *(limits or []), "--", *argv])
        proc = cls(role, popen, stdout_path, stderr_path, name=name)
        proc.channel = Channel(popen, stdout_path, stderr_path, workdir)
        proc.host = conn.name
        return proc

    @property
    def exit_code(self) -> int | None:
        return self.channel.returncode if self.channel.done.is_set() else None

    def wait(self, timeout_s: float | None) -> int | None:
        self.channel.wait(timeout_s)
        return self.exit_code

    def send(self, sig: signal.Signals) -> None:
        if self.exit_code is None:
            self.channel.tell(f"signal {SIGNAL_NAMES.get(sig, 'TERM')}")

    def kill(self) -> None:
        """SIGKILL on the remote host; if even that gets no answer, drop the channel (the
        supervisor then kills it on EOF)."""
        if self.exit_code is None:
            self.killed = True
            self.send(signal.SIGKILL)
            if self.channel.wait(3.0) is False:
                self.channel.hang_up()
                if not self.channel.wait(5.0):
                    self.popen.kill()
                    self.channel.wait(2.0)

    def close(self) -> None:
        self.channel.hang_up()
