"""Fast DDS's shared-memory files in /dev/shm (Fast DDS 2: ``fastrtps_*``; Fast DDS 3, the ROS 2
wheels' rmw_fastrtps_cpp: ``fastdds_*``; each with ``sem.`` semaphores and ``_el`` lock files).
Each agent removes what it made and nobody maps at its exit (crates/mwperf-transports/src/
middleware/fastdds_shm.rs), but with many processes the last to exit counts the others' early
files as someone else's, and a process mwperf did not write (an rclpy relay) sweeps nothing: so
a run removes what appeared during it and no live process maps any more."""

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
    """Remove the files that appeared since ``before`` and no live process maps."""
    new = entries() - before
    if not new:
        return
    mapped: set[str] = set()
    for maps in Path("/proc").glob("[0-9]*/maps"):
        try:
            text = maps.read_text(errors="replace")
        except OSError:
            continue
        mapped.update(name for name in new if f"/dev/shm/{name}" in text)
    for name in new - mapped:
        if name.removesuffix("_el") in mapped:  # a lock file goes with its segment
            continue
        (SHM / name).unlink(missing_ok=True)
