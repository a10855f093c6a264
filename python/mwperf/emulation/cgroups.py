"""The CPU controller's cgroups: which version this machine mounts, and one quota'd cgroup per
agent under a shared ``mwperf`` parent.

cgroup v2 (one unified hierarchy) limits CPU with ``cpu.max`` ("QUOTA PERIOD", in µs) once the
``cpu`` controller is enabled in the parents' ``cgroup.subtree_control``; cgroup v1 has a
hierarchy of its own for ``cpu`` (often co-mounted with ``cpuacct``) with ``cpu.cfs_quota_us``
and ``cpu.cfs_period_us``. A hybrid machine mounts both; the version that has the ``cpu``
controller is the one used. Which is which is read from /proc/self/mountinfo, not guessed from
paths. The cgroups are named ``mwp<lease tag>-<role>`` and recorded in the run's lease before
they exist, so a killed mwperf's cgroups are removed by the next one.
"""

import errno
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import RunError
from ..leases import Lease

PARENT = "mwperf"
"""the cgroup every mwperf cgroup lives in (created on demand, removed when empty)"""
PERIOD_US = 100_000
"""the CFS period: the kernel's default, 100 ms; the quota is a share of it"""
MOUNTINFO = Path("/proc/self/mountinfo")
_CREATE_ATTEMPTS = 5


@dataclass(frozen=True)
class Hierarchy:
    """A mounted cgroup hierarchy."""

    version: int
    """1 or 2"""
    mount: Path
    controllers: tuple[str, ...]
    """v1: the controllers bound to this hierarchy; v2: those available at its root"""


def hierarchies(mountinfo: Path = MOUNTINFO) -> list[Hierarchy]:
    """Every cgroup hierarchy mounted in this process's mount namespace."""
    found = []
    try:
        lines = mountinfo.read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        before, _, after = line.partition(" - ")
        fields, rest = before.split(), after.split()
        if len(fields) < 5 or len(rest) < 3:
            continue
        mount = Path(fields[4].replace("\\040", " "))
        if rest[0] == "cgroup2":
            try:
                available = (mount / "cgroup.controllers").read_text().split()
            except OSError:
                available = []
            found.append(Hierarchy(2, mount, tuple(available)))
        elif rest[0] == "cgroup":
            options = rest[2].split(",")
            known = ("cpu", "cpuacct", "cpuset", "memory", "devices", "freezer", "blkio", "pids",
                     "net_cls", "net_prio", "perf_event", "hugetlb", "rdma", "misc")
            found.append(Hierarchy(1, mount, tuple(o for o in options if o in known)))
    return found


def cpu_hierarchy(mountinfo: Path = MOUNTINFO) -> Hierarchy | None:
    """The hierarchy that has the ``cpu`` controller (v2 preferred), None if there is none."""
    candidates = [h for h in hierarchies(mountinfo) if "cpu" in h.controllers]
    candidates.sort(key=lambda h: -h.version)
    return candidates[0] if candidates else None


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
        """The kernel's count of periods, throttled periods and throttled time so far."""
        stats: dict[str, int] = {}
        try:
            for line in (self.path / "cpu.stat").read_text().splitlines():
                key, _, value = line.partition(" ")
                if value.strip().isdigit():
                    stats[key] = int(value)
        except OSError:
            pass
        throttled_s = (stats["throttled_usec"] / 1e6 if "throttled_usec" in stats
                       else stats["throttled_time"] / 1e9 if "throttled_time" in stats else None)
        return {"periods": stats.get("nr_periods"), "throttled_periods": stats.get("nr_throttled"),
                "throttled_s": None if throttled_s is None else round(throttled_s, 6)}

    def set_rt_runtime(self, fraction: float, siblings: int) -> float:
        """v1 with RT group scheduling: give the cgroup a SCHED_FIFO budget of ``fraction`` of
        each CPU (its tasks get no real-time time at all otherwise), at most 1/``siblings`` of
        the parent's (the kernel refuses children whose budgets add up to more); returns the
        fraction set."""
        root, parent = self.hierarchy.mount, self.path.parent
        period = int((root / "cpu.rt_period_us").read_text())
        runtime = int((root / "cpu.rt_runtime_us").read_text())
        if runtime < 0:
            runtime = period
        if int((parent / "cpu.rt_runtime_us").read_text()) == 0:
            _write(parent / "cpu.rt_period_us", str(period))
            _write(parent / "cpu.rt_runtime_us", str(runtime))
        share = min(fraction, runtime / period / siblings)
        _write(self.path / "cpu.rt_period_us", str(PERIOD_US))
        _write(self.path / "cpu.rt_runtime_us", str(int(share * PERIOD_US)))
        return share

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
    quota_us = max(1000, round(quota_pct / 100 * PERIOD_US))
    try:
        for attempt in range(_CREATE_ATTEMPTS):  # another run may remove an empty parent meanwhile
            try:
                _make_parent(found, parent)
                path.mkdir()
                break
            except FileNotFoundError:
                if attempt == _CREATE_ATTEMPTS - 1:
                    raise
        if found.version == 2:
            _write(path / "cpu.max", f"{quota_us} {PERIOD_US}")
        else:
            _write(path / "cpu.cfs_period_us", str(PERIOD_US))
            _write(path / "cpu.cfs_quota_us", str(quota_us))
    except PermissionError as exc:
        raise RunError(f"--cpu-quota: cannot create cgroup {path}: {exc.strerror}; limiting "
                       f"CPU needs root (or a delegated cgroup); run mwperf as root") from None
    except OSError as exc:
        raise RunError(f"--cpu-quota: cannot set up cgroup {path}: {exc.strerror or exc}") from None
    return CpuCgroup(found, path, quota_us, PERIOD_US)


def _make_parent(found: Hierarchy, parent: Path) -> None:
    if found.version == 2:
        _enable_cpu(found.mount)
    parent.mkdir(exist_ok=True)
    if found.version == 2:
        _enable_cpu(parent)


def _enable_cpu(folder: Path) -> None:
    """v2: make the cpu controller available to ``folder``'s children."""
    control = folder / "cgroup.subtree_control"
    if "cpu" not in control.read_text().split():
        _write(control, "+cpu")


def _write(path: Path, text: str) -> None:
    """Write a cgroup file; the kernel's error names the file it refused."""
    try:
        path.write_text(text)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.EBUSY):
            raise OSError(exc.errno, f"{os.strerror(exc.errno)} writing '{text}' to {path}") \
                from None
        raise
