"""The agent on a real host: found, or copied there, or one line saying what to build.

A remote agent is usable when its ``--version`` line (version, git revision, transports built
in) is the local one's, word for word: the two ends of a measurement then run the same code.
Looked for, in order: the per-user cache on the host (``~/.cache/mwperf/agent/<sha256>/``,
named after the local binary's checksum, so a rebuilt agent never meets an old copy), then
``mwperf-agent`` on the host's PATH. Neither, and ``uname -m`` there equals this machine's: the
local binary is streamed into the cache through the SSH connection, its SHA-256 checked there
before it is made executable, and mwperf says so. Another architecture: one line naming it and
the cargo target to build (e.g. a Raspberry Pi: ``aarch64-unknown-linux-gnu``).
"""

import functools
import hashlib
import os
import platform
import sys
from dataclasses import dataclass
from pathlib import Path

from ..agent import Agent
from ..errors import RunError
from .ssh import SshConnection

CACHE_ENV = "MWPERF_REMOTE_CACHE"
DEFAULT_CACHE = ".cache/mwperf"
"""the remote per-user folder, relative to the remote home (where ssh starts commands)"""
COPY_TIMEOUT_S = 600.0
TARGETS = {"x86_64": "x86_64-unknown-linux-gnu", "aarch64": "aarch64-unknown-linux-gnu",
           "armv7l": "armv7-unknown-linux-gnueabihf", "riscv64": "riscv64gc-unknown-linux-gnu"}
COPY_SCRIPT = ('set -e; umask 077; mkdir -p "$1"; cat > "$1/.part"; '
               'sha256sum "$1/.part" | cut -d" " -f1')
"""a fixed script: the folder comes as a positional argument, never pasted into the text"""
INSTALL_SCRIPT = 'set -e; chmod 700 "$1/.part"; mv -f "$1/.part" "$1/mwperf-agent"'


def remote_cache(home: str) -> str:
    """The remote folder for the agent copies and the scratch folders of runs (absolute:
    processes there start in their scratch folder)."""
    folder = os.environ.get(CACHE_ENV) or DEFAULT_CACHE
    return folder if folder.startswith("/") else f"{home.rstrip('/')}/{folder}"


@dataclass(frozen=True)
class RemoteAgent:
    """The agent a host runs, and how it got there."""

    path: str
    version: str
    copied: bool


@functools.cache
def _checksum(path: Path, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as binary:
        for block in iter(lambda: binary.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def checksum(path: Path) -> str:
    """SHA-256 of a local file (cached per path, size and modification time)."""
    stat = path.stat()
    return _checksum(path, stat.st_size, stat.st_mtime_ns)


def remote_version(conn: SshConnection, program: str) -> str | None:
    """The ``--version`` line of ``program`` on the host, None if it does not run."""
    done = conn.run([program, "--version"], timeout_s=30)
    if done.returncode != 0:
        return None
    return done.stdout.decode(errors="replace").strip()


def ensure_agent(conn: SshConnection, local: Agent, say=None) -> RemoteAgent:
    """A usable agent on ``conn``'s host (module doc); RunError when there can be none."""
    say = say or (lambda text: print(f"mwperf: {text}", file=sys.stderr))
    want = local.version()
    folder = f"{conn.cache}/agent/{checksum(local.path)[:16]}"
    cached = f"{folder}/mwperf-agent"
    for candidate in (cached, "mwperf-agent"):
        if remote_version(conn, candidate) == want:
            return RemoteAgent(cached if candidate == cached else candidate, want, False)
    machine = conn.text(["uname", "-m"])
    here = platform.machine()
    if machine != here:
        target = TARGETS.get(machine, f"{machine}-unknown-linux-gnu")
        raise RunError(f"host '{conn.name}' is {machine} and this mwperf-agent is {here}: "
                       f"build one for it with 'cargo build --release --target {target}' and "
                       f"install it there as mwperf-agent on PATH")
    size = local.path.stat().st_size
    say(f"host '{conn.name}': copying mwperf-agent ({size / 1e6:.1f} MB, {want}) to "
        f"{conn.target}:{folder}/")
    done = conn.run(["sh", "-c", COPY_SCRIPT, "sh", folder], stdin=local.path.read_bytes(),
                    timeout_s=COPY_TIMEOUT_S)
    got = done.stdout.decode(errors="replace").strip()
    if done.returncode != 0 or got != checksum(local.path):
        raise RunError(f"host '{conn.name}': the copy of mwperf-agent arrived damaged "
                       f"(sha256 {got or done.stderr.decode(errors='replace').strip()!r}, "
                       f"expected {checksum(local.path)}); is the disk there full?")
    conn.text(["sh", "-c", INSTALL_SCRIPT, "sh", folder])
    if remote_version(conn, cached) != want:
        raise RunError(f"host '{conn.name}': the copied mwperf-agent does not run there "
                       f"(libraries missing? try 'ssh {conn.target} {cached} --version')")
    return RemoteAgent(cached, want, True)
