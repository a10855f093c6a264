"""Slower, fewer or more urgent CPUs for the agents: a CPU quota per agent (seed 000's 100/75/50 %
clock), pinning to CPUs, and an optional real-time priority.

``--cpu-quota 50%`` limits every agent to half of one CPU; ``--cpu-quota pong=50%,ping=25%`` sets
it per role (a bare value is the default for roles not named). Each limited agent gets its own
cgroup (cgroups.py) — one agent's CPU time never counts against another's. ``--cpu-pin 1`` or
``--cpu-pin pong=1,ping=0`` pins agents to CPUs (``N`` or ``N-M``), as taskset does.
With emulated hosts (``--link``: hosts a and b; a scenario's ``hosts:``) a name may also be a
host: ``--cpu-quota echoer=50%`` puts everything placed on ``echoer`` — its agents and its
daemons (rosmaster, mosquitto, zenohd, the topic_tools relay) — in one cgroup that shares the
quota, as a slower computer would; ``--cpu-pin echoer=1`` pins them all. A role on a limited host
cannot have a limit of its own as well (one cgroup per process), and host limits exclude
``--rt-priority`` (the daemons would run without it).
``--rt-priority N`` runs the agents SCHED_FIFO at priority N (1-99) when the kernel permits it,
and says so in the result's warnings when it does not (the run still measures).

Everything is applied in the child between fork and exec (the cgroup joined first, so a real-time
budget of that cgroup applies), so the agent and every thread it starts inherit it. The parent
then reads back what took effect; a quota or pinning that did not take is an error (the run
would measure something else than asked), a refused priority a warning. The result's ``cpu``
block records what was applied and how often the kernel throttled each agent.

Real-time tasks are not limited by the CFS quota. With cgroup v1 and RT group scheduling
(``cpu.rt_runtime_us``) the quota becomes the cgroup's real-time budget instead; where the kernel
has no per-cgroup real-time budget, quota and priority together are refused.
"""

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import RunError, UsageError
from ..leases import Lease
from . import cgroups
from .topology import ROLES as ROLE_NAMES
from ..result_types import RunResultCpu, Warning

ALL = "*"
"""the role key of a value given without a role: every agent not named otherwise"""
MAX_RT_PRIORITY = 99
AGENTS_PER_POINT = 2
"""a point's agents (ping + pong, or pub + sub): each gets part of the real-time budget"""
QUOTA_HINT = ("use a share of one CPU such as 50% (every agent), pong=50%,ping=25% (per role) or "
              "echoer=50% (per emulated or real host); above 100% allows more than one CPU")
PIN_HINT = ("use CPU numbers such as 1 or 0-1 (every agent), pong=1,ping=0 (per role) or "
            "echoer=1 (per emulated or real host)")


@dataclass(frozen=True)
class CpuLimits:
    """What the user asked for, per role (``*`` = every agent not named)."""

    quota_pct: tuple[tuple[str, float], ...] = ()
    pin: tuple[tuple[str, tuple[int, ...]], ...] = ()
    rt_priority: int | None = None
    place: tuple[tuple[str, str], ...] = ()
    """(role or daemon, host) when a limit names a host or there are real hosts (empty
    otherwise)"""
    remote: tuple[str, ...] = ()
    """the real hosts (--host): what is placed there is limited by its supervisor"""
    agents: tuple[str, ...] = ()
    """agents named otherwise than the point's roles (a graph's nodes: graph/cpu.py)"""

    def is_agent(self, name: str) -> bool:
        """Whether ``name`` is an agent (a role, or a graph's node), not a daemon."""
        return name in ROLE_NAMES or name in self.agents

    def remote_host(self, name: str) -> str | None:
        """The real host ``name`` (a role or daemon) runs on, None when it runs here."""
        host = dict(self.place).get(name)
        return host if host in self.remote else None

    def host_of(self, name: str) -> str | None:
        """The host ``name`` (a role or daemon) runs on when that host has a limit, else None."""
        host = dict(self.place).get(name)
        limited = {key for key, _ in self.quota_pct + self.pin}
        return host if host in limited else None

    def group_for(self, name: str) -> tuple[str, float] | None:
        """The cgroup ``name`` runs in and its quota: ('host-H', q) on a host with a quota,
        (role, q) for an agent with one of its own, None for no quota (a daemon off a limited
        host is never limited)."""
        host = dict(self.place).get(name)
        quotas = dict(self.quota_pct)
        if host is not None and host in quotas:
            return f"host-{host}", quotas[host]
        if not self.is_agent(name):
            return None
        quota = _for(self.quota_pct, name)
        return None if quota is None else (name, quota)

    def quota_for(self, role: str) -> float | None:
        """The CPU quota ``role`` runs under in % of one CPU (its host's, if limited), None for
        no limit."""
        group = self.group_for(role)
        return None if group is None else group[1]

    def cpus_for(self, name: str) -> tuple[int, ...] | None:
        """The CPUs ``name`` (a role, or a daemon on a pinned host) is pinned to, None for no
        pinning."""
        host = dict(self.place).get(name)
        pins = dict(self.pin)
        if host is not None and host in pins:
            return pins[host]
        return _for(self.pin, name) if self.is_agent(name) else None

    def limited_hosts(self) -> list[str]:
        """The hosts a limit names, in the order of the placement."""
        hosts = dict.fromkeys(host for _, host in self.place)
        limited = {key for key, _ in self.quota_pct + self.pin}
        return [host for host in hosts if host in limited]

    def __bool__(self) -> bool:
        return bool(self.quota_pct or self.pin or self.rt_priority)

    def to_dict(self) -> dict[str, Any]:
        """As the point's configuration records it: {'quota_pct': {'*': 50.0}, ...}; with a
        host limit also ``hosts``, the limited hosts and who runs on each."""
        out: dict[str, Any] = {"quota_pct": dict(self.quota_pct),
                               "pin": {r: list(c) for r, c in self.pin},
                               "rt_priority": self.rt_priority}
        if self.limited_hosts():
            out["hosts"] = {host: [name for name, h in self.place if h == host]
                            for host in self.limited_hosts()}
        return out


def _for(entries: tuple[tuple[str, Any], ...], role: str) -> Any:
    values = dict(entries)
    return values.get(role, values.get(ALL))


def parse_limits(quota: str | None, pin: str | None, rt_priority: str | None,
                 roles: tuple[str, ...], place: tuple[tuple[str, str], ...] = (),
                 remote: tuple[str, ...] = ()) -> CpuLimits:
    """Validate --cpu-quota, --cpu-pin and --rt-priority for a point whose agents are ``roles``;
    ``place``: (role or daemon, host) of the emulated hosts, or of the real hosts ``remote``
    (what runs here is left out; empty on loopback). A limit for a real host is checked
    there, by its supervisor (its CPUs are not this machine's)."""
    hosts = tuple(dict.fromkeys(host for _, host in place))
    there = {key for key, host in place if host in remote} | set(remote)
    quotas = _per_role("--cpu-quota", quota, roles, _quota, QUOTA_HINT, hosts, there)
    pins = _per_role("--cpu-pin", pin, roles, _cpus, PIN_HINT, hosts, there)
    named_hosts = [key for key, _ in quotas + pins if key in hosts and key not in roles]
    for flag, entries in (("--cpu-quota", quotas), ("--cpu-pin", pins)):
        for role, _ in entries:
            host = dict(place).get(role)
            if role in roles and host in {k for k, _ in entries} and host != role:
                raise UsageError(f"{flag}: {role} runs on host {host}, which has a limit of its "
                                 f"own; give the limit to one of them (a process is in one "
                                 f"cgroup)")
    away = [role for role in roles if dict(place).get(role) in remote]
    if away and rt_priority is not None:
        raise UsageError(f"--rt-priority: not for {away[0]} on real host "
                         f"{dict(place)[away[0]]}: mwperf sets real-time priorities on this "
                         f"machine and emulated hosts only; drop --rt-priority, or place "
                         f"{away[0]} here (--place {away[0]}=local)")
    if named_hosts and rt_priority is not None:
        raise UsageError(f"--rt-priority: not with a limit on host {named_hosts[0]} (its "
                         f"daemons would run without it); limit the roles instead")
    priority = None
    if rt_priority is not None:
        text = str(rt_priority).strip()
        if not text.isdigit() or not 1 <= int(text) <= MAX_RT_PRIORITY:
            raise UsageError(f"--rt-priority: must be a whole number from 1 to "
                             f"{MAX_RT_PRIORITY} (SCHED_FIFO priority), got '{text}'")
        priority = int(text)
    return CpuLimits(quotas, pins, priority, place if named_hosts or remote else (),
                     tuple(remote))


def _per_role(flag: str, text: str | None, roles: tuple[str, ...],
              parse: Callable[[str, str, str, bool], Any], hint: str,
              hosts: tuple[str, ...] = (), there: set[str] | frozenset[str] = frozenset()
              ) -> tuple[tuple[str, Any], ...]:
    if text is None:
        return ()
    found: dict[str, Any] = {}
    items = [item.strip() for item in str(text).split(",")]
    if not all(items):
        raise UsageError(f"{flag}: cannot parse '{text}'; {hint}")
    for item in items:
        role, _, value = item.rpartition("=")
        role = role.strip() or ALL
        if role != ALL and role in roles and role in hosts:
            raise UsageError(f"{flag}: '{role}' is both an agent and a host of this run; "
                             f"rename the host to limit it")
        if role != ALL and role not in roles and role not in hosts:
            where = f"; hosts: {', '.join(sorted(hosts))}" if hosts else ""
            raise UsageError(f"{flag}: no agent '{role}' in this run (agents: "
                             f"{', '.join(roles)}{where}); {hint}")
        if role in found:
            raise UsageError(f"{flag}: {'every agent' if role == ALL else role} given twice "
                             f"in '{text}'")
        found[role] = parse(flag, value.strip(), hint, role in there)
    return tuple(found.items())


def _quota(flag: str, text: str, hint: str, remote: bool = False) -> float:
    number = text[:-1].strip() if text.endswith("%") else None
    try:
        value = float(number) if number else None
    except ValueError:
        value = None
    if value is None:
        raise UsageError(f"{flag}: cannot parse '{text}'; {hint}")
    most = 100 * (os.cpu_count() or 1)
    if remote and value >= 1:  # the host's supervisor checks it against the host's CPUs
        return value
    if not 1 <= value <= most:
        raise UsageError(f"{flag}: {text} is outside 1% to {most}% (this machine has "
                         f"{os.cpu_count()} CPUs)")
    return value


def _cpus(flag: str, text: str, hint: str, remote: bool = False) -> tuple[int, ...]:
    first, dash, last = text.partition("-")
    if not first.strip().isdigit() or (dash and not last.strip().isdigit()):
        raise UsageError(f"{flag}: cannot parse '{text}'; {hint}")
    low, high = int(first), int(last) if dash else int(first)
    if high < low:
        raise UsageError(f"{flag}: '{text}' is an empty range; {hint}")
    if remote:  # the host's supervisor checks them against the host's CPUs
        return tuple(range(low, high + 1))
    usable = os.sched_getaffinity(0)
    missing = [cpu for cpu in range(low, high + 1) if cpu not in usable]
    if missing:
        raise UsageError(f"{flag}: CPU {missing[0]} is not available to mwperf (available: "
                         f"{', '.join(map(str, sorted(usable)))})")
    return tuple(range(low, high + 1))


def summary_lines(cpu: dict[str, Any] | None) -> list[str]:
    """One line per agent of a result's ``cpu`` block, then one per limited host, for the
    human summary."""
    lines = []
    for role, agent in ((cpu or {}).get("agents") or {}).items():
        parts = _quota_parts(agent, f"(cgroup v{(cpu or {}).get('cgroup_version')})")
        if agent["pinned"]:
            parts.append(f"CPUs {','.join(map(str, agent['cpus']))}")
        if agent["rt_priority"] is not None:
            parts.append(f"{agent['policy']} {agent['rt_priority']}")
        if agent.get("host"):
            parts.append(f"on host {agent['host']}")
        lines.append(f"{role}: {', '.join(parts) or 'not limited'}")
    for host, entry in ((cpu or {}).get("hosts") or {}).items():
        parts = _quota_parts(entry, "shared")
        if entry["cpus"] is not None:
            parts.append(f"CPUs {','.join(map(str, entry['cpus']))}")
        lines.append(f"host {host}: {', '.join(parts)} by {', '.join(entry['members'])}")
    return lines


def _quota_parts(entry: dict[str, Any], what: str) -> list[str]:
    """'quota Q% WHAT' and how often it throttled, for an agent's or a host's entry."""
    if entry["quota_pct"] is None:
        return []
    parts = [f"quota {entry['quota_pct']:g}% {what}"]
    throttling = entry.get("throttling") or {}
    if throttling.get("periods"):
        parts.append(f"throttled in {throttling['throttled_periods']} of "
                     f"{throttling['periods']} periods")
    return parts


class CpuPlacement:
    """Applies a point's CpuLimits to its agents; cgroups are created in ``lease``.

    Give ``child_setup(role)`` to the spawn (it runs in the child before exec), then call
    ``confirm(role, pid)`` right after the spawn.
    """

    def __init__(self, limits: CpuLimits, lease: Lease) -> None:
        self.limits = limits
        self.lease = lease
        self.groups: dict[str, cgroups.CpuCgroup] = {}
        self.applied: dict[str, dict[str, Any]] = {}
        self.warnings: list[Warning] = []
        self.members: dict[str, list[str]] = {}
        """limited host -> the daemons placed in its cgroup"""
        self._rt_budget: dict[str, float] = {}
        self.remote: dict[str, tuple[str, str, Any]] = {}
        """a process on a real host with limits: name -> (placed as, host, its supervisor's
        channel: remote/supervised.Channel)"""

    def remote_group(self, placed: str) -> tuple[str, float] | None:
        """The cgroup name (``<lease prefix>-<host>`` for a limited host, ``<prefix>-<role>``
        for a role's own quota) and quota of what is placed as ``placed`` on a real host."""
        host = self.limits.remote_host(placed)
        if host is None:
            return None
        if self.limits.host_of(placed) == host:  # the host's limit: everything placed there
            quota = dict(self.limits.quota_pct).get(host)
            return None if quota is None else (f"{self.lease.prefix}-{host}", quota)
        quota = _for(self.limits.quota_pct, placed) if self.limits.is_agent(placed) else None
        return None if quota is None else (f"{self.lease.prefix}-{placed}", quota)

    def supervise_args(self, placed: str, daemon: bool = False) -> list[str]:
        """The supervisor's flags that limit a process placed as ``placed`` (a role, or a
        daemon's topology name) on a real host: its host's shared cgroup or its role's own (a
        daemon only ever gets its host's, as on emulated hosts)."""
        host = self.limits.remote_host(placed) if self.limits else None
        if host is None or (daemon and self.limits.host_of(placed) != host):
            return []
        args: list[str] = []
        group = self.remote_group(placed)
        if group is not None:
            args += ["--cgroup", group[0], "--cpu-quota", f"{group[1]:g}"]
        cpus = self.limits.cpus_for(placed)
        if cpus is not None:
            args += ["--cpu-pin", f"{cpus[0]}-{cpus[-1]}"]
        return args

    def confirm_remote(self, name: str, placed: str, channel: Any, daemon: bool = False) -> None:
        """Wait for what the supervisor of ``name`` applied (its ``cgroup`` line); RunError
        with the supervisor's reason when a limit did not take (the process never ran)."""
        if not self.supervise_args(placed, daemon):
            return
        host = self.limits.remote_host(placed)
        report = channel.wait_limits()
        if report is None:
            reason = channel.refused() or channel.lost or "no report of its CPU limits came"
            flag = "--cpu-pin" if reason.startswith("--cpu-pin") else "--cpu-quota"
            raise RunError(f"{reason}" if reason.startswith("--cpu") else
                           f"{flag}: {name} on host {host}: {reason}")
        self.remote[name] = (placed, str(host), channel)
        if not daemon:
            self.applied[name] = {
                "quota_pct": report.get("quota_pct"), "cgroup": report.get("path"),
                "cpus": list(report.get("cpus") or []),
                "pinned": self.limits.cpus_for(placed) is not None, "rt_priority": None,
                "policy": "SCHED_OTHER", "host": host,
                "cgroup_version": report.get("version")}
        else:
            self.members.setdefault(str(host), []).append(name)

    def _remote_throttling(self, name: str) -> dict[str, Any] | None:
        return self.remote[name][2].throttling if name in self.remote else None

    def _remote_host_entry(self, host: str) -> dict[str, Any]:
        """A limited real host's entry: its group as its supervisors reported it, the group's
        throttling from the member that saw most of it."""
        names = [n for n, (placed, h, _) in self.remote.items()
                 if h == host and self.limits.host_of(placed) == host]
        reports = [self.remote[n][2].cgroup or {} for n in names]
        seen = [self.remote[n][2].throttling for n in names if self.remote[n][2].throttling]
        cpus = dict(self.limits.pin).get(host)
        first = reports[0] if reports else {}
        return {"quota_pct": first.get("quota_pct"), "cgroup": first.get("path"),
                "cpus": list(first.get("cpus") or []) if cpus is not None else None,
                "members": names,
                "throttling": max(seen, key=lambda t: t.get("periods") or 0) if seen else None,
                "cgroup_version": first.get("version")}

    def child_setup(self, role: str) -> Callable[[], None] | None:
        """Create ``role``'s cgroup (now, in mwperf) and return what the child must do."""
        if not self.limits:
            return None
        wanted = self.limits.group_for(role)
        group = self._cgroup(*wanted) if wanted is not None else None
        procs = str(group.procs_file()) if group else None
        cpus = self.limits.cpus_for(role)
        priority = self.limits.rt_priority

        def setup() -> None:  # in the child: errors are found by confirm(), in the parent
            if procs is not None:
                try:
                    with open(procs, "w") as handle:
                        handle.write(str(os.getpid()))
                except OSError:
                    pass
            if cpus is not None:
                try:
                    os.sched_setaffinity(0, cpus)
                except OSError:
                    pass
            if priority is not None:
                try:
                    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
                except OSError:
                    pass
        return setup

    def confirm(self, role: str, pid: int) -> None:
        """Check what took effect on the running agent; RunError if the quota or pinning did not."""
        if not self.limits:
            return
        wanted = self.limits.group_for(role)
        group = self.groups.get(wanted[0]) if wanted else None
        cpus = self.limits.cpus_for(role)
        if group is not None and not group.contains(pid):
            raise RunError(f"--cpu-quota: {role} (pid {pid}) could not be moved into "
                           f"{group.path}")
        actual = sorted(os.sched_getaffinity(pid))
        if cpus is not None and actual != list(cpus):
            raise RunError(f"--cpu-pin: {role} runs on CPUs {actual}, not {list(cpus)}")
        entry: dict[str, Any] = {
            "quota_pct": group.quota_pct if group else None,
            "cgroup": str(group.path) if group else None, "cpus": actual,
            "pinned": cpus is not None, "rt_priority": None, "policy": "SCHED_OTHER"}
        if self.limits.host_of(role) is not None:
            entry["host"] = self.limits.host_of(role)
        if self.limits.rt_priority is not None:
            if os.sched_getscheduler(pid) == os.SCHED_FIFO:
                entry["rt_priority"] = os.sched_getparam(pid).sched_priority
                entry["policy"] = "SCHED_FIFO"
                if role in self._rt_budget:
                    entry["rt_budget_pct"] = round(100 * self._rt_budget[role], 3)
            else:
                self.warnings.append({
                    "code": "rt-priority-denied",
                    "message": f"{role}: SCHED_FIFO priority {self.limits.rt_priority} was "
                               f"refused; it ran SCHED_OTHER",
                    "hint": "real-time priority needs root or CAP_SYS_NICE (or an RLIMIT_RTPRIO "
                            "limit); see 'mwperf doctor'"})
        self.applied[role] = entry

    def join(self, name: str, placed: str, pid: int) -> None:
        """Put daemon ``name`` (pid ``pid``, just started), placed as ``placed`` (the topology's
        name for it: rosmaster, mosquitto, zenohd; a relay sits with the pong), under its host's
        limits, from the parent (the daemons are single processes when they start); nothing
        when its host has none. RunError if that did not take."""
        host = self.limits.host_of(placed)
        if host is None:
            return
        quota, cpus = dict(self.limits.quota_pct).get(host), dict(self.limits.pin).get(host)
        try:
            if quota is not None:
                self._cgroup(f"host-{host}", quota).procs_file().write_text(str(pid))
            if cpus is not None:
                os.sched_setaffinity(pid, cpus)
        except OSError as exc:
            raise RunError(f"--cpu-quota/--cpu-pin: cannot put {name} (pid {pid}) under host "
                           f"{host}'s limits: {exc.strerror or exc}") from None
        self.members.setdefault(host, []).append(name)

    def describe(self) -> RunResultCpu | None:
        """The result's ``cpu`` block (call before the cgroups are released), None if no limits.
        With host limits also ``hosts``: each limited host's quota, CPUs, throttling, and who
        ran there."""
        if not self.limits:
            return None
        hierarchy = next(iter(self.groups.values())).hierarchy if self.groups else None
        agents = {}
        for role, entry in self.applied.items():
            if role in self.remote:
                agents[role] = {**entry, "throttling": self._remote_throttling(role)}
                continue
            wanted = self.limits.group_for(role)
            group = self.groups.get(wanted[0]) if wanted else None
            agents[role] = {**entry, "throttling": group.throttling() if group else None}
        versions = [c.cgroup.get("version") for _, _, c in self.remote.values() if c.cgroup]
        version = hierarchy.version if hierarchy else next((v for v in versions if v), None)
        out = {"cgroup_version": version,
               "period_us": cgroups.PERIOD_US if version else None, "agents": agents}
        hosts = {}
        for host in self.limits.limited_hosts():
            if host in self.limits.remote:
                hosts[host] = self._remote_host_entry(host)
                continue
            group = self.groups.get(f"host-{host}")
            cpus = dict(self.limits.pin).get(host)
            members = [role for role in self.applied if self.limits.host_of(role) == host]
            hosts[host] = {"quota_pct": group.quota_pct if group else None,
                           "cgroup": str(group.path) if group else None,
                           "cpus": list(cpus) if cpus is not None else None,
                           "members": members + self.members.get(host, []),
                           "throttling": group.throttling() if group else None}
        if hosts:
            out["hosts"] = hosts
        return out

    def _cgroup(self, role: str, quota: float) -> cgroups.CpuCgroup:
        """The cgroup named ``role`` (an agent's role, or ``host-H``), created on first use: a
        host's is shared by everything placed there."""
        if role in self.groups:
            return self.groups[role]
        group = cgroups.create(self.lease, role.replace("/", "_"), quota)  # a node: /ns/name
        self.groups[role] = group
        if self.limits.rt_priority is not None:
            if not group.has_rt_group_scheduling():
                raise RunError(
                    f"--rt-priority with --cpu-quota: real-time tasks are not limited by the CPU "
                    f"quota, and this kernel (cgroup v{group.hierarchy.version}) has no "
                    f"per-cgroup real-time budget; use one of the two")
            try:
                self._rt_budget[role] = group.set_rt_runtime(quota / 100, AGENTS_PER_POINT)
            except OSError as exc:
                raise RunError(f"--rt-priority with --cpu-quota: cannot give {group.path} a "
                               f"real-time budget: {exc.strerror or exc}") from None
        if role in self._rt_budget and self._rt_budget[role] * 100 < quota:
            self.warnings.append({
                "code": "rt-budget-below-quota",
                "message": f"{role}: as a SCHED_FIFO task it is limited by a real-time budget of "
                           f"{100 * self._rt_budget[role]:.1f}% of a CPU, less than the "
                           f"{quota:g}% asked (the kernel's real-time share is split between "
                           f"the agents)",
                "hint": "use a lower --cpu-quota, or drop --rt-priority"})
        return group
