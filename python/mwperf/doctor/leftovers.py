"""The doctor's leftovers check: leases of a killed mwperf are released (as every command that
creates resources does first), and mwperf-named resources no lease accounts for are reported
with the command that removes them (not removed: without a lease, whose they are is unknown —
e.g. a run using another $MWPERF_LEASE_DIR).
"""

from pathlib import Path

from ..emulation import cgroups
from ..errors import RunError
from ..leases import TAG_PREFIX, Lease, lease_dir, reap_stale
from .finding import Finding

NETNS_DIR = Path("/run/netns")
NET_DEVICES = Path("/sys/class/net")


def check_leftovers() -> list[Finding]:
    reaped: list[str] = []
    reap_stale(reaped.append)
    live = _live_leases()
    findings = [Finding("stale leases", "warn", line, "nothing to do: released now") for line in
                reaped]
    if not reaped:
        runs = f"; {len(live)} held by running mwperf processes" if live else ""
        findings.append(Finding("stale leases", "ok", f"none in {lease_dir()}{runs}"))
    held = {name for lease in live for _, name in lease.resources}
    orphans = [(what, name, fix) for what, name, fix in _named_resources() if name not in held]
    for what, name, fix in orphans:
        findings.append(Finding("orphan", "warn", f"{what} {name} looks like mwperf's but no "
                                "lease holds it", fix))
    if not orphans:
        findings.append(Finding("orphans", "ok", f"no {TAG_PREFIX}* cgroup, namespace or "
                                "network device outside a lease"))
    return findings


def _live_leases() -> list[Lease]:
    folder = lease_dir()
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            lease = Lease.load(path)
        except (OSError, ValueError):
            continue
        if lease.owner_alive():
            found.append(lease)
    return found


def _named_resources() -> list[tuple[str, str, str]]:
    """(kind, name as a lease records it, how to remove it) of every ``mwp*`` resource."""
    found = []
    try:
        hierarchy = cgroups.cpu_hierarchy()
    except RunError:  # no agent binary to read the hierarchies: no cgroup of ours to find
        hierarchy = None
    parent = hierarchy.mount / cgroups.PARENT if hierarchy else None
    if parent is not None and parent.is_dir():
        found += [("cgroup", str(path), f"rmdir {path} (after killing the pids in "
                   f"{path / 'cgroup.procs'})") for path in sorted(parent.glob(f"{TAG_PREFIX}*"))]
    if NETNS_DIR.is_dir():
        found += [("network namespace", path.name, f"ip netns delete {path.name}")
                  for path in sorted(NETNS_DIR.glob(f"{TAG_PREFIX}*"))]
    found += [("network device", path.name, f"ip link delete {path.name}")
              for path in sorted(NET_DEVICES.glob(f"{TAG_PREFIX}*"))]
    return found
