"""Leases: the OS resources a run creates outside its own process tree — recorded before they
exist, released in reverse order, and reclaimed by the next mwperf when their owner died.

Network namespaces, network devices, cgroups and detached processes outlive a SIGKILLed mwperf.
So every run that creates such things takes a *lease*: a JSON file in the lease directory
(``$MWPERF_LEASE_DIR``, else ``/run/mwperf/leases`` as root, else a per-user folder under /tmp)
naming its owner — pid *and* the process start time, so a recycled pid is never mistaken for the
owner — and each resource, written *before* the resource is created (a crash between the two
leaves a lease entry for a resource that does not exist, which releasing tolerates; the other
order would leak). Leaving the lease's ``with`` block releases everything, newest first;
:func:`reap_stale`, called by every command that creates resources, releases the leases whose
owner is gone and says what it removed.

Resource kinds and how each is released live here, not in the modules that create them, so a
reaper in a fresh process can release any stale lease without importing those modules:
``process`` (``PID:STARTTIME``: SIGKILL to its process group if it is still that process),
``netns`` (``ip netns delete``), ``link`` (``ip link delete``), ``cgroup`` (a cgroup directory:
its tasks are killed, then it is removed), ``cgroup-parent`` (a cgroup that several runs
share: removed only when empty, left to its other users otherwise), ``path`` (a file or
directory, e.g. in /dev/shm; a name with ``*`` is a glob pattern: every match goes).
Releasing is idempotent: a resource that is already gone is not an error.
"""

import errno
import json
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import RunError

KINDS = ("process", "netns", "link", "cgroup", "cgroup-parent", "path")
"""the kinds of resource a lease can hold (see the module docstring for how each is released)"""
TAG_PREFIX = "mwp"
"""leased resources' names start with ``mwp`` + the lease tag, so a person can spot them too"""


def lease_dir() -> Path:
    """Where lease files live: $MWPERF_LEASE_DIR, /run/mwperf/leases as root, else under /tmp."""
    if env := os.environ.get("MWPERF_LEASE_DIR"):
        return Path(env)
    if os.geteuid() == 0:
        return Path("/run/mwperf/leases")
    return Path(tempfile.gettempdir()) / f"mwperf-leases-{os.getuid()}"


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22), None if
    there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2:].split()[19])


def process_id(pid: int) -> str:
    """A ``process`` resource name: ``PID:STARTTIME`` (identifies the process, not just the pid)."""
    started = start_time(pid)
    if started is None:
        raise RunError(f"process {pid} is not running")
    return f"{pid}:{started}"


class Lease:
    """The resources one run holds. Use as a context manager: ``with Lease.take("run") as l:``."""

    def __init__(self, path: Path, document: dict[str, Any]) -> None:
        self.path = path
        self._doc = document

    @classmethod
    def take(cls, purpose: str) -> "Lease":
        """A new, empty lease owned by this process, written to the lease directory."""
        folder = lease_dir()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        tag = secrets.token_hex(3)
        pid = os.getpid()
        lease = cls(folder / f"{tag}.json", {
            "tag": tag, "purpose": purpose, "owner": process_id(pid), "taken_at": time.time(),
            "resources": []})
        lease._write()
        return lease

    @classmethod
    def load(cls, path: Path) -> "Lease":
        """The lease stored in ``path`` (raises ValueError/OSError when unreadable)."""
        document = json.loads(path.read_text("utf-8"))
        if not isinstance(document, dict) or not isinstance(document.get("resources"), list):
            raise ValueError(f"{path}: not a lease")
        return cls(path, document)

    @property
    def tag(self) -> str:
        """Six hex digits that name this lease's resources: ``mwp<tag>...``."""
        return str(self._doc["tag"])

    @property
    def prefix(self) -> str:
        """The start of every resource name this lease creates, e.g. ``mwp3fa91c``."""
        return f"{TAG_PREFIX}{self.tag}"

    @property
    def purpose(self) -> str:
        """What the lease was taken for (a run id, 'doctor', ...)."""
        return str(self._doc.get("purpose", "?"))

    @property
    def resources(self) -> list[tuple[str, str]]:
        """(kind, name) of every resource held, oldest first."""
        return [(str(kind), str(name)) for kind, name in self._doc["resources"]]

    def owner_alive(self) -> bool:
        """True while the process that took the lease is still running (same pid and start)."""
        pid, _, started = str(self._doc.get("owner", "")).partition(":")
        return pid.isdigit() and str(start_time(int(pid))) == started

    def add(self, kind: str, name: str) -> None:
        """Record a resource; call it *before* creating the resource."""
        if kind not in KINDS:
            raise ValueError(f"lease kind {kind!r}: allowed {', '.join(KINDS)}")
        self._doc["resources"].append([kind, name])
        self._write()

    def release_one(self, kind: str, name: str) -> None:
        """Release one resource now and forget it (e.g. a daemon stopped before the run ends)."""
        RELEASERS[kind](name)
        self._doc["resources"].remove([kind, name])
        self._write()

    def release(self) -> list[str]:
        """Release every resource, newest first, then delete the lease file; returns one line per
        resource that could not be released (the lease file is kept then, for the next reaper)."""
        problems = []
        for kind, name in reversed(self.resources):
            try:
                RELEASERS[kind](name)
            except (OSError, RunError, KeyError) as exc:
                problems.append(f"{kind} {name}: {exc}")
                continue
            self._doc["resources"].remove([kind, name])
        if problems:
            self._write()
        else:
            self.path.unlink(missing_ok=True)
        return problems

    def __enter__(self) -> "Lease":
        return self

    def __exit__(self, *exc_info: object) -> None:
        for line in self.release():
            print(f"mwperf: warning: could not release {line} (lease {self.path})")

    def _write(self) -> None:
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self._doc), "utf-8")
        os.replace(temporary, self.path)


def reap_stale(notify: Callable[[str], None]) -> list[tuple[str, str]]:
    """Release every lease whose owner is gone; ``notify`` gets one line per lease reaped.
    Returns the (kind, name) of what was released."""
    folder = lease_dir()
    released: list[tuple[str, str]] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            lease = Lease.load(path)
        except FileNotFoundError:
            continue  # released by its owner since the listing: another run just ended
        except (OSError, ValueError) as exc:
            notify(f"ignoring unreadable lease {path}: {exc}")
            continue
        if lease.owner_alive():
            continue
        held = lease.resources
        problems = lease.release()
        done = [r for r in held if r not in lease.resources]
        released += done
        if not done and not problems:
            continue  # everything it held was already gone (the kernel's PDEATHSIG): no news
        what = ", ".join(f"{kind} {name}" for kind, name in done) or "nothing released"
        notify(f"cleaned up after an earlier mwperf that did not finish ({lease.purpose}): {what}"
               + (f"; could not release: {'; '.join(problems)}" if problems else ""))
    return released


def _release_process(name: str) -> None:
    pid_text, _, started = name.partition(":")
    pid = int(pid_text)
    if str(start_time(pid)) != started:
        return  # gone (or the pid now belongs to another process: not ours to kill)
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return
    for _ in range(200):  # reaped by its parent (or init) within a few ms
        if str(start_time(pid)) != started or _zombie(pid):
            return
        time.sleep(0.005)
    raise RunError(f"process {pid} survived SIGKILL")


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] == "Z"


def _ip(*args: str, gone: str) -> None:
    """Run ``ip ARGS``; an error whose message contains ``gone`` means already released."""
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0 and gone not in done.stderr:
        raise RunError(f"'ip {' '.join(args)}' failed: {done.stderr.strip()}")


def _release_netns(name: str) -> None:
    if Path("/run/netns", name).exists():
        _ip("netns", "delete", name, gone="No such file")


def _release_link(name: str) -> None:
    if Path("/sys/class/net", name).exists():
        _ip("link", "delete", name, gone="Cannot find device")


def _release_cgroup(name: str) -> None:
    folder = Path(name)
    if not folder.is_dir():
        return
    for _ in range(100):
        try:
            folder.rmdir()
            return
        except OSError:  # still has tasks: kill them (they are ours: the cgroup is)
            for task in (folder / "cgroup.procs").read_text().split():
                try:
                    os.kill(int(task), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.01)
    folder.rmdir()


def _release_cgroup_parent(name: str) -> None:
    try:
        Path(name).rmdir()
    except FileNotFoundError:
        pass
    except OSError as exc:
        if exc.errno not in (errno.EBUSY, errno.ENOTEMPTY, errno.EACCES, errno.EPERM):
            raise  # busy: another run's cgroups; not permitted: not created by this user


def _release_path(name: str) -> None:
    if "*" in name:
        pattern = Path(name)
        for match in pattern.parent.glob(pattern.name):
            _release_path(str(match))
        return
    path = Path(name)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=False)
    else:
        path.unlink(missing_ok=True)


RELEASERS: dict[str, Callable[[str], None]] = {
    "process": _release_process, "netns": _release_netns, "link": _release_link,
    "cgroup": _release_cgroup, "cgroup-parent": _release_cgroup_parent, "path": _release_path,
}


def stop_leased(popen: subprocess.Popen, lease: Any, lease_id: str, timeout_s: float) -> None:
    """Stop a helper process mwperf started in its own process group and leased as
    ``("process", lease_id)``: SIGINT (it writes what it collected), SIGKILL after
    ``timeout_s``; then release it from ``lease``."""
    if popen.poll() is None:
        os.killpg(popen.pid, signal.SIGINT)
        try:
            popen.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(popen.pid, signal.SIGKILL)
            popen.wait()
    if ("process", lease_id) in lease.resources:
        lease.release_one("process", lease_id)
