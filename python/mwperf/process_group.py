"""What a process group costs (a user's program and every child it started in its group: a
launch of several nodes, a shell script's programs), read from /proc.

- CPU: the user and system time of every member, plus what each reaped of its exited children
  (``cutime``/``cstime``), in seconds; a difference of two reads is the time spent between them.
- Memory: the resident set of the members now, summed (``VmRSS``), and the sum of each member's
  own peak (``VmHWM``): an upper bound of the group's peak (the members' peaks need not
  coincide), exact for one process.
"""

import os
from dataclasses import dataclass
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Usage:
    processes: int
    cpu_user_s: float
    cpu_sys_s: float
    rss_kib: int
    peak_rss_kib: int


def members(pgid: int, proc: Path = Path("/proc")) -> list[int]:
    """The pids whose process group is ``pgid`` (zombies included)."""
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat(entry)
        if fields is not None and int(fields[2]) == pgid:
            found.append(int(entry.name))
    return sorted(found)


def usage(pgid: int, proc: Path = Path("/proc")) -> Usage:
    """The group's CPU and memory now (zeros when it has no member left)."""
    user = system = 0.0
    rss = peak = count = 0
    for pid in members(pgid, proc):
        fields = _stat(proc / str(pid))
        if fields is None:
            continue  # it exited between the two reads
        count += 1
        user += (int(fields[11]) + int(fields[13])) / _TICKS
        system += (int(fields[12]) + int(fields[14])) / _TICKS
        memory = _memory(proc / str(pid) / "status")
        rss += memory.get("VmRSS", 0)
        peak += memory.get("VmHWM", 0)
    return Usage(count, round(user, 3), round(system, 3), rss, peak)


def _stat(folder: Path) -> list[str] | None:
    """/proc/PID/stat's fields after the command name (state is [0], pgrp [2], utime [11])."""
    try:
        return (folder / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _memory(path: Path) -> dict[str, int]:
    found = {}
    try:
        for line in path.read_text().splitlines():
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        return {}
    return found
