"""The CPU controller's cgroups: which version this machine mounts, and one quota'd cgroup per
agent under a shared ``mwperf`` parent.

cgroup v2 (one unified hierarchy) limits CPU with ``cpu.max`` ("QUOTA PERIOD", in µs) once the
``cpu`` controller is enabled in the parents' ``cgroup.subtree_control``; cgroup v1 has a
hierarchy of its own for ``cpu`` (often co-mounted with ``cpuacct``) with ``cpu.cfs_quota_us``
and ``cpu.cfs_period_us``. A hybrid machine mounts both; the version that has the ``cpu``
controller is the one used. Which is which is read from /proc/self/mountinfo, not guessed from
paths. The cgroups are named ``mwp<lease tag>-<role>`` and recorded in the run's lease before
they exist, so a killed mwperf's cgroups are removed by the next one.

One implementation: reading the hierarchies, creating a group with its quota, its real-time
budget and its throttling figures are the supervisor's (crates/mwperf-supervise/src/cgroup.rs,
which ``supervise --cgroup`` uses on real hosts), asked here through ``mwperf-agent
supervise-cgroup`` (docs/agent-contract.md). Only before the agents start and after they stop:
the agents themselves are still forked here and join their group between fork and exec
(cpu.py), with nothing running beside them.
"""

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agent import find_agent, last_line
from ..errors import RunError
from ..leases import Lease

PARENT = "mwperf"
"""the cgroup every mwperf cgroup lives in (created on demand, removed when empty)"""
PERIOD_US = 100_000
"""the CFS period: the kernel's default, 100 ms; the quota is a share of it"""
MOUNTINFO = Path("/proc/self/mountinfo")
COMMAND = "supervise-cgroup"
TIMEOUT_S = 10.0
_PREFIX = f"mwperf-agent {COMMAND}: "


class Refused(OSError):
    """The supervisor's cgroup code refused a step; the message says what to change."""


def _ask(*args: str) -> Any:
    """What ``mwperf-agent supervise-cgroup ARGS`` printed (JSON); Refused with its one-line
    reason when it refused, RunError when it could not run or is too old to know the command."""
    path = find_agent().path
    command = f"'{path} {COMMAND} {args[0]}'"
    try:
        done = subprocess.run([str(path), COMMAND, *args], capture_output=True, text=True,
                              timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RunError(f"{command} could not run: {exc}") from None
    if done.returncode == 1:
        raise Refused(last_line(done.stderr).removeprefix(_PREFIX))
    try:
        if done.returncode == 0:
            return json.loads(done.stdout)
    except json.JSONDecodeError:
        pass
    raise RunError(f"{command} failed (exit code {done.returncode}): {last_line(done.stderr)}; "
                   f"is it an up-to-date build? run 'make build'")


@dataclass(frozen=True)
class Hierarchy:
    """A mounted cgroup hierarchy."""

    version: int
    """1 or 2"""
    mount: Path
    controllers: tuple[str, ...]
    """v1: the controllers bound to this hierarchy; v2: those available at its root"""

    @classmethod
    def from_json(cls, found: dict[str, Any]) -> "Hierarchy":
        return cls(int(found["version"]), Path(found["mount"]), tuple(found["controllers"]))


def _hierarchies(mountinfo: Path) -> tuple[list[Hierarchy], Hierarchy | None]:
    found = _ask("hierarchies", "--mountinfo", str(mountinfo))
    cpu = found.get("cpu")
    return ([Hierarchy.from_json(h) for h in found["hierarchies"]],
            Hierarchy.from_json(cpu) if cpu else None)


def hierarchies(mountinfo: Path = MOUNTINFO) -> list[Hierarchy]:
    """Every cgroup hierarchy mounted in this process's mount namespace."""
    return _hierarchies(mountinfo)[0]


def cpu_hierarchy(mountinfo: Path = MOUNTINFO) -> Hierarchy | None:
    """The hierarchy that has the ``cpu`` controller (v2 preferred), None if there is none."""
    return _hierarchies(mountinfo)[1]


@dataclass(frozen=True)
class CpuCgroup:
    """One agent's cgroup with a CPU quota."""

    hierarchy: Hierarchy
    path: Path
    quota_us: int
    period_us: int

    @property
    def quota_pct(self) -> float:
        return round(100 * self.quota_us / self.period_us, 3)

    def procs_file(self) -> Path:
        """Writing a pid here moves that process (all its threads) into the cgroup."""
        return self.path / "cgroup.procs"

    def contains(self, pid: int) -> bool:
        """True when ``pid`` is in this cgroup (per /proc/PID/cgroup)."""
        relative = "/" + str(self.path.relative_to(self.hierarchy.mount))
        try:
            lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        except OSError:
            return False
        for line in lines:
            _, controllers, where = line.split(":", 2)
            wanted = controllers == "" if self.hierarchy.version == 2 else (
                "cpu" in controllers.split(","))
            if wanted and where == relative:
                return True
        return False

    def throttling(self) -> dict[str, int | float | None]:
        """The kernel's count of periods, throttled periods and throttled time so far (None
        each when unreadable: the figures never fail a measurement that is done)."""
        try:
            figures = _ask("throttling", "--path", str(self.path))
        except RunError:
            figures = None
        return figures or {"periods": None, "throttled_periods": None, "throttled_s": None}

    def set_rt_runtime(self, fraction: float, siblings: int) -> float:
        """v1 with RT group scheduling: give the cgroup a SCHED_FIFO budget of ``fraction`` of
        each CPU (its tasks get no real-time time at all otherwise), at most 1/``siblings`` of
        the parent's (the kernel refuses children whose budgets add up to more); returns the
        fraction set (Refused, an OSError, with the kernel's reason)."""
        done = _ask("rt-budget", "--path", str(self.path), "--mount", str(self.hierarchy.mount),
                    "--fraction", repr(fraction), "--siblings", str(siblings))
        return float(done["share"])

    def has_rt_group_scheduling(self) -> bool:
        """True when the kernel budgets SCHED_FIFO time per cgroup (v1 cpu.rt_runtime_us)."""
        return self.hierarchy.version == 1 and (self.path / "cpu.rt_runtime_us").exists()


def create(lease: Lease, role: str, quota_pct: float, hierarchy: Hierarchy | None = None
           ) -> CpuCgroup:
    """A new cgroup ``mwp<tag>-<role>`` limited to ``quota_pct`` % of one CPU (150 = 1.5 CPUs),
    recorded in ``lease`` (the parent too, released last and only when empty)."""
    found = hierarchy or cpu_hierarchy()
    if found is None:
        raise RunError("--cpu-quota: no cgroup hierarchy with the cpu controller is mounted "
                       "(see 'mwperf doctor'); mount cgroup2, or cgroup v1 with -o cpu")
    parent = found.mount / PARENT
    path = parent / f"{lease.prefix}-{role}"
    if ("cgroup-parent", str(parent)) not in lease.resources:
        lease.add("cgroup-parent", str(parent))
    lease.add("cgroup", str(path))
    try:
        made = _ask("create", "--name", path.name, "--cpu-quota", repr(float(quota_pct)),
                    "--mount", str(found.mount), "--cgroup-version", str(found.version))
    except Refused as exc:
        raise RunError(str(exc)) from None
    return CpuCgroup(found, Path(made["path"]), int(made["quota_us"]), int(made["period_us"]))
