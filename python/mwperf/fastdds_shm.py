"""Fast DDS's shared-memory files in /dev/shm (Fast DDS 2: ``fastrtps_*``; Fast DDS 3, the ROS 2
wheels' rmw_fastrtps_cpp: ``fastdds_*``; each with ``sem.`` semaphores and ``_el`` lock files).
Each agent removes what it made and nobody maps at its exit (crates/mwperf-transports/src/
middleware/fastdds_shm.rs), but with many processes the last to exit counts the others' early
files as someone else's, and a process mwperf did not write (an rclpy relay) sweeps nothing: so
a run removes what appeared during it and no live process maps or has open any more (runs
beside it create theirs at any moment)."""

import os
from pathlib import Path

SHM = Path("/dev/shm")
PREFIXES = ("fastrtps_", "sem.fastrtps_", "fastdds_", "sem.fastdds_")


def entries() -> set[str]:
    """Fast DDS's files in /dev/shm now."""
    try:
        return {n for n in os.listdir(SHM) if n.startswith(PREFIXES)}
    except OSError:
        return set()


def remove_orphaned(before: set[str]) -> None:
    """Remove the files that appeared since ``before`` and no live process maps or has open."""
    new = entries() - before
    if not new:
        return
    mapped = _in_use(new)
    for name in new - mapped:
        if name.removesuffix("_el") in mapped:  # a lock file goes with its segment
            continue
        (SHM / name).unlink(missing_ok=True)


def _in_use(names: set[str]) -> set[str]:
    """Those of ``names`` some live process maps or has open (a run beside this one creates its
    segments at any moment: each is open before it is mapped; a lock file is held open)."""
    found: set[str] = set()
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            text = (proc / "maps").read_text(errors="replace")
        except OSError:
            continue
        found.update(name for name in names if f"/dev/shm/{name}" in text)
        try:
            fds = list((proc / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("/dev/shm/") and target[len("/dev/shm/"):] in names:
                found.add(target[len("/dev/shm/"):])
    return found
