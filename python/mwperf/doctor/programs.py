"""The doctor's program checks: the agent and its transports, each transport's daemon or
library, and the tools the benchmarks and reports use.

A transport not built into the agent is reported, not needed; a daemon is needed when its
transport is built in (the default suite runs every built-in transport). What each transport
needs is its hook's ``doctor`` (python/mwperf/transports/<name>.py), whose program names and
packages come from the daemon modules, so the doctor checks what a run would start.
"""

import ctypes.util
import shutil
from importlib import metadata

from ..agent import find_agent
from ..daemons.base import package_version
from ..errors import RunError
from ..config import TRANSPORTS
from ..transports import hook
from .finding import Finding

SETUP = "make setup"
TOOLS = (
    ("ddsperf", "cyclonedds-tools", "Cyclone DDS reference for the benchmarks"),
    ("sockperf", "sockperf", "UDP/TCP reference for the benchmarks"),
    ("iperf3", "iperf3", "throughput reference for the link emulator's benchmarks"),
    ("chromium", "chromium", "rendering and testing HTML reports"),
    ("perf", "linux-perf", "--profile: CPU profiles of agents and daemons"),
    ("heaptrack", "heaptrack", "--alloc-sites: allocations by call site"),
)
"""(program, Debian package, what it is for): used by benchmarks, reports and the optional cost
measurements (--profile, --alloc-sites), not by a plain run"""


def which(program: str) -> str | None:
    """Where ``program`` is (an absolute path is checked as is)."""
    return shutil.which(program)


def find_library(name: str) -> str | None:
    return ctypes.util.find_library(name)


def check_agent_and_transports() -> list[Finding]:
    try:
        agent = find_agent()
        version = agent.version()
        built = agent.transports()
    except RunError as exc:
        return [Finding("agent", "missing", str(exc), "make build (or set MWPERF_AGENT to the "
                        "binary)", needed=True)]
    findings = [Finding("agent", "ok", f"{version} ({agent.path})", needed=True)]
    for transport in TRANSPORTS:
        if transport not in built:
            findings.append(Finding(transport, "warn", "not built into the agent",
                                    f"{SETUP} && make build"))
        else:
            findings += hook(transport).doctor(Checks())
    return findings


class Checks:
    """What a transport's ``doctor`` hook probes (transports/hooks.py, DoctorChecks); looks
    ``which`` and ``find_library`` up when called, so tests can replace them."""

    def built_in(self, name: str, what: str) -> Finding:
        return Finding(name, "ok", f"built in ({what})")

    def program(self, name: str, program: str, package: str, role: str,
                needed: bool) -> Finding:
        return _program(name, program, package, role, needed)

    def library(self, name: str, library: str, package: str) -> Finding:
        found = find_library(library)
        if found:
            return Finding(name, "ok", f"library {found}", needed=True)
        return Finding(name, "missing", f"library lib{library} not found",
                       f"apt-get install {package} (or {SETUP})", needed=True)


    def python_package(self, name: str, package: str, role: str) -> Finding:
        try:
            version = metadata.version(package)
        except metadata.PackageNotFoundError:
            return Finding(name, "missing", f"{role}: Python package {package} not installed",
                           f"pip install {package}", needed=True)
        return Finding(name, "ok", f"{role}: Python package {package} {version}", needed=True)


def _program(name: str, program: str, package: str, role: str, needed: bool) -> Finding:
    path = which(program)
    if path is None:
        return Finding(name, "missing", f"{role} {program} not found",
                       f"apt-get install {package} (or {SETUP})", needed=needed)
    return Finding(name, "ok", f"{role} {path}{_version(package)}", needed=needed)


def _version(package: str) -> str:
    version = package_version(package)
    return f" ({package} {version})" if version else ""


def check_tools() -> list[Finding]:
    findings = []
    for program, package, purpose in TOOLS:
        path = which(program)
        if path is None:
            findings.append(Finding(program, "missing", f"not found ({purpose})",
                                    f"apt-get install {package}"))
        else:
            findings.append(Finding(program, "ok", f"{path} ({purpose})"))
    return findings
