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
    """Remove the files that appeared since ``before`` and no live process maps or has open. A
    lock file (``_el``, ``_sl``) goes with its segment; a port's semaphore (``sem.<port>_mutex``)
    is kept while its port file exists: Fast DDS closes it after each open of the port and
    opens it again for the next, and removing it while a process holds it lets two open the port
    at once (as the agent's sweep: fastdds_shm.rs)."""
    new = entries() - before
    if not new:
        return
    mapped = _in_use(new)
    semaphores = {name for name in new if guarded_by(name) is not None}
    for name in new - mapped - semaphores:
        if segment_of(name) in mapped:
            continue
        (SHM / name).unlink(missing_ok=True)
    for name in semaphores - mapped:
        if not (SHM / str(guarded_by(name))).exists():
            (SHM / name).unlink(missing_ok=True)


def segment_of(name: str) -> str:
    """The segment a lock file belongs to (``X_el``, ``X_sl`` -> ``X``); other names are their
    own."""
    for suffix in ("_el", "_sl"):
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return name


def guarded_by(name: str) -> str | None:
    """The file a port semaphore guards (``sem.X_mutex`` -> ``X``); None for other names."""
    if name.startswith("sem.") and name.endswith("_mutex"):
        return name[len("sem."):-len("_mutex")]
    return None


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
