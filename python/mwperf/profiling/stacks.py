"""Folding ``perf script`` output into stacks per process: ``root;...;leaf -> samples`` (the
folded format flame graphs are drawn from), and the top functions by self and total share."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

HEADER = re.compile(r"^(?P<comm>\S.*?)\s+(?P<pid>\d+)/(?P<tid>\d+)\s+(?P<period>\d+)\s*$")
FRAME = re.compile(r"^\s+(?P<ip>[0-9a-f]+)\s+(?P<sym>.*?)\s*$")


@dataclass
class Profile:
    """One process's samples."""

    pid: int
    comm: str
    stacks: Counter[str] = field(default_factory=Counter)
    cpu_ns: int = 0
    """the samples' periods added up: the CPU time they stand for (perf's cpu-clock counts
    nanoseconds; at a frequency, perf adapts each period, so samples / frequency is only near)"""

    @property
    def samples(self) -> int:
        return sum(self.stacks.values())

    def top(self, n: int = 15) -> list[dict[str, float | str]]:
        """The ``n`` functions with the most samples of their own (self %), with their share
        of the stacks they appear in at all (total %)."""
        own: Counter[str] = Counter()
        anywhere: Counter[str] = Counter()
        for stack, count in self.stacks.items():
            frames = stack.split(";")
            own[frames[-1]] += count
            for name in set(frames):
                anywhere[name] += count
        total = self.samples or 1
        return [{"function": name, "self_pct": round(100 * count / total, 2),
                 "total_pct": round(100 * anywhere[name] / total, 2)}
                for name, count in own.most_common(n)]


def fold(script: str) -> dict[int, Profile]:
    """Every process's stacks from ``perf script -F comm,pid,tid,period,ip,sym`` output."""
    profiles: dict[int, Profile] = {}
    current: Profile | None = None
    frames: list[str] = []
    period = 0

    def flush() -> None:
        if current is not None and frames:
            current.stacks[";".join(reversed(frames))] += 1
            current.cpu_ns += period
        frames.clear()

    for line in script.splitlines():
        head = HEADER.match(line)
        if head:
            flush()
            pid = int(head["pid"])
            period = int(head["period"])
            current = profiles.setdefault(pid, Profile(pid, head["comm"]))
            continue
        frame = FRAME.match(line)
        if frame and current is not None:
            name = frame["sym"] or "[unknown]"
            frames.append(name.replace(";", ":"))
        elif not line.strip():
            flush()
    flush()
    return profiles


def folded_text(profile: Profile) -> str:
    """The folded format: one ``stack count`` line per distinct stack."""
    return "".join(f"{stack} {count}\n" for stack, count in profile.stacks.most_common())
