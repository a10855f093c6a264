"""A preload library (``LD_PRELOAD``) for an agent on a real host, e.g. mwperf's system-call
interposer for ``--layers`` (crates/mwperf-layers → ``libmwperf_layers.so``, built by cargo
next to the agent).

On this machine a part names the library beside the local agent in the agent's environment.
A real host has neither that path nor, at first, the library: ``ensure_library`` copies it there
the way deploy.py copies the agent (streamed through the SSH connection, its SHA-256 checked
there before it is installed), into ``<cache>/lib/<sha256>/<name>`` (named after the local
file's checksum: a rebuilt library never meets an old copy, and an unchanged one is copied
once per host, not once per run). It then proves the copy loads: ``env LD_PRELOAD=<copy>
<agent> --version`` must print the agent's version and nothing from the dynamic loader, which
otherwise only warns (``object ... cannot be preloaded``) and runs the agent without it — a
run that would silently measure nothing. Checked once per host and library per mwperf process
(``RealHost.libraries``).

``remote_preload`` gives a part the environment for a role on a real host: the runner puts it
in front of the agent's command there (``env LD_PRELOAD=... mwperf-agent ...``, hosts.py
``PointHosts.spawn``). A preload already set on this machine is not carried over: it names
local files.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import RunError
from .deploy import COPY_SCRIPT, COPY_TIMEOUT_S, TARGETS, checksum

if TYPE_CHECKING:
    from .hosts import PointHosts, RealHost

INSTALL_SCRIPT = 'set -e; chmod 644 "$1/.part"; mv -f "$1/.part" "$1/$2"'
"""a fixed script: folder and file name come as positional arguments"""
PRESENT_SCRIPT = 'sha256sum "$1" 2>/dev/null | cut -d" " -f1'
LOADER_COMPLAINT = "ld.so"
"""what the dynamic loader's warnings about a preload contain (``ERROR: ld.so: object ...``)"""


def _say(text: str) -> None:
    print(f"mwperf: {text}", file=sys.stderr)


def remote_library_path(cache: str, local: Path) -> str:
    """Where the copy of ``local`` lives on a host whose mwperf folder is ``cache``."""
    return f"{cache}/lib/{checksum(local)[:16]}/{local.name}"


def ensure_library(host: RealHost, local: Path, say: Callable[[str], None] = _say) -> str:
    """The path on ``host`` of a copy of ``local`` that its agent can preload (module doc);
    RunError saying what is wrong when there can be none."""
    if not local.is_file():
        raise RunError(f"{local} is missing: it is built with the agent ('make build' or "
                       f"'cargo build --release')")
    want = checksum(local)
    known = host.libraries.get(want)
    if known is not None:
        return known
    conn = host.conn
    path = remote_library_path(conn.cache, local)
    folder = path.rsplit("/", 1)[0]
    present = conn.run(["sh", "-c", PRESENT_SCRIPT, "sh", path]).stdout.decode().strip()
    if present != want:
        machine, here = conn.text(["uname", "-m"]), platform.machine()
        if machine != here:
            target = TARGETS.get(machine, f"{machine}-unknown-linux-gnu")
            raise RunError(f"host '{conn.name}' is {machine} and this {local.name} is {here}: "
                           f"build both for it with 'cargo build --release --target {target}'")
        say(f"host '{conn.name}': copying {local.name} ({local.stat().st_size / 1e6:.1f} MB) "
            f"to {conn.target}:{folder}/")
        done = conn.run(["sh", "-c", COPY_SCRIPT, "sh", folder], stdin=local.read_bytes(),
                        timeout_s=COPY_TIMEOUT_S)
        got = done.stdout.decode(errors="replace").strip()
        if done.returncode != 0 or got != want:
            raise RunError(f"host '{conn.name}': the copy of {local.name} arrived damaged "
                           f"(sha256 {got or done.stderr.decode(errors='replace').strip()!r}, "
                           f"expected {want}); is the disk there full?")
        conn.text(["sh", "-c", INSTALL_SCRIPT, "sh", folder, local.name])
    check_preload(host, path)
    host.libraries[want] = path
    return path


def check_preload(host: RealHost, path: str) -> None:
    """RunError unless the host's agent starts with ``path`` preloaded and the loader says
    nothing about it."""
    conn = host.conn
    done = conn.run(["env", f"LD_PRELOAD={path}", host.agent.path, "--version"])
    said = done.stderr.decode(errors="replace").strip()
    out = done.stdout.decode(errors="replace").strip()
    if done.returncode != 0 or out != host.agent.version or LOADER_COMPLAINT in said:
        raise RunError(f"host '{conn.name}': the agent does not run with {path} preloaded "
                       f"({said[-300:] or f'exit code {done.returncode}'}); try 'ssh "
                       f"{conn.target} env LD_PRELOAD={path} {host.agent.path} --version'")


def remote_preload(hosts: PointHosts, role: str, local: Path,
                   say: Callable[[str], None] = _say) -> dict[str, str]:
    """``{"LD_PRELOAD": remote path}`` for an agent of ``role`` on its real host, the library
    copied there first if need be (``ensure_library``). To call from a part's ``start`` hook
    for every remote role (so any copy happens before an agent runs), and when the runner
    builds a remote agent's environment."""
    host = hosts.hosts[hosts.host_of(role)]
    return {"LD_PRELOAD": ensure_library(host, local, say)}
