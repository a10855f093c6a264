"""Sampling every local agent and daemon of a point once a second from /proc, in a thread of
the control plane (the agents do nothing extra).

The sampler asks, at each tick, which processes the point has (a callable: the runner's agents
and daemons as they start), so a daemon started late is picked up at its first second. A
process is known by its pid and its start time, so a reused pid is never mistaken for it; it
is sampled until it exits. Memory per second is constant: one small record per process.
Ticks are on a fixed grid of CLOCK_MONOTONIC (origin + k s), so a slow read never drifts the
series.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import procfs

INTERVAL_NS = 1_000_000_000
COUNTER_TRIES = 5


@dataclass
class Watched:
    """One process as the sampler knows it."""

    name: str
    kind: str
    """agent or daemon"""
    listed_pid: int
    """the pid the runner gave (a wrapper's, for an agent started through perf or heaptrack)"""
    pid: int
    started: int | None
    """its start time (/proc/PID/stat), which with the pid names it"""
    counter: procfs.Counter | None = None
    """--count-allocs: where its live heap bytes are read"""
    counter_tries: int = 0
    """--count-allocs: ticks left to find the counter (the dynamic linker maps it just after
    exec)"""
    series: list[dict[str, Any]] = field(default_factory=list)
    gone: bool = False


Listing = Callable[[], list[tuple[str, str, int, bool]]]
"""(name, kind, pid, count_allocs) of each process to sample now; the pid may be a wrapper's
(perf, heaptrack) for an agent, whose mwperf-agent child is then looked for"""


class Sampler:
    """A thread sampling the processes ``listing`` names every ``interval_ns``."""

    def __init__(self, listing: Listing, interval_ns: int = INTERVAL_NS) -> None:
        self.listing = listing
        self.interval_ns = interval_ns
        self.origin_ns = time.monotonic_ns()
        self.watched: dict[str, Watched] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="mwperf-resources", daemon=True)

    def start(self) -> "Sampler":
        self._thread.start()
        return self

    def stop(self) -> None:
        """Take no more samples (the last tick in progress completes)."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(5)

    def _loop(self) -> None:
        tick = 0
        idle = 0
        while not self._stop.is_set():
            self.sample()
            alive = [w for w in self.watched.values() if not w.gone]
            idle = 0 if alive or not self.watched else idle + 1
            if idle >= 3:  # everything it watched has exited: nothing more to sample
                return
            tick = max(tick + 1, (time.monotonic_ns() - self.origin_ns) // self.interval_ns + 1)
            wait_s = (self.origin_ns + tick * self.interval_ns - time.monotonic_ns()) / 1e9
            if self._stop.wait(max(0.0, wait_s)):
                return

    def sample(self) -> None:
        """One tick: find new processes, then read each live one once."""
        try:
            listed = self.listing()
        except Exception:  # the runner's lists change under us: try again at the next tick
            listed = []
        for name, kind, pid, allocs in listed:
            if any(w.listed_pid == pid for w in self.watched.values()):
                continue
            if name in self.watched:  # started again (a restart): a series of its own
                count = sum(w.name.split(" (")[0] == name for w in self.watched.values())
                name = f"{name} (restart {count})"
            real = procfs.agent_pid(pid) if kind == "agent" else pid
            if real is None:
                continue
            watched = Watched(name, kind, pid, real, procfs.start_time(real))
            if watched.started is None:
                continue
            watched.counter_tries = COUNTER_TRIES if allocs else 0
            self.watched[name] = watched
        for watched in self.watched.values():
            if not watched.gone:
                self._read(watched)

    def _read(self, watched: Watched) -> None:
        pid = watched.pid
        if watched.counter is None and watched.counter_tries > 0:
            watched.counter_tries -= 1
            watched.counter = procfs.alloc_counter(pid)
        rss, fds, threads = procfs.rss_bytes(pid), procfs.open_fds(pid), procfs.threads(pid)
        live = watched.counter.live_bytes() if watched.counter is not None else None
        unreadable_heap = watched.counter is not None and live is None
        if (procfs.start_time(pid) != watched.started or None in (rss, fds, threads)
                or unreadable_heap):
            # exited (or exiting, or a zombie, or the pid is another process's now); a process
            # whose counter was found keeps it readable for as long as it has memory
            watched.gone = True
            return
        watched.series.append({"t_ns": max(0, time.monotonic_ns() - self.origin_ns),
                               "rss_bytes": rss, "fds": fds, "threads": threads,
                               "live_heap_bytes": live})
