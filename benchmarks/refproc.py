"""What the throughput references share: the CPU time of a process (from /proc while it runs,
from wait4 when it exits), a free port, a child whose stdout lines are collected as they come,
and the delivered rate inside a measuring window cut out of a receiver's running totals.

Running totals: the reference subscribers mwperf builds print ``tp t_ns=T msgs=N bytes=B``
every 100 ms (T on CLOCK_MONOTONIC, the clock of ``time.monotonic_ns()``); ddsperf prints its
``total`` once a second (realtime with ``-R 0``). The benchmark chooses the window [a, b] on the
same clock and reads each total at a and b by linear interpolation between the two lines around
it, so the rate, the loss and the CPU samples taken at a and b all cover the same interval."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import threading
import time
from bisect import bisect_left
from dataclasses import dataclass

TICKS = os.sysconf("SC_CLK_TCK")
TOTALS = re.compile(r"^tp t_ns=(\d+) msgs=(\d+) bytes=(\d+)\s*$", re.M)
SENT = re.compile(r"^sent msgs=(\d+) bytes=(\d+) seconds=([\d.]+)(?: refused=(\d+))?", re.M)


def cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of process `pid` (all its threads) so far; None once it is gone."""
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) ": state is fields[0]
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (stat fields 14, 15)


def free_port(kind: int = socket.SOCK_STREAM) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Child:
    """A started process whose stdout lines are collected by a thread (``lines``), reaped with
    wait4 so that its whole CPU time is known (``cpu_s`` once it exited)."""

    def __init__(self, cmd: list[str], **kw: object) -> None:
        self.cmd = cmd
        self.p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, **kw)  # type: ignore[call-overload]
        self.lines: list[str] = []
        self.cpu_s: float | None = None
        self.status: int | None = None
        self._seen = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._err: list[str] = []
        self._err_reader = threading.Thread(target=lambda: self._err.extend(self.p.stderr), daemon=True)
        self._err_reader.start()

    def _read(self) -> None:
        for line in self.p.stdout:
            with self._seen:
                self.lines.append(line)
                self._seen.notify_all()
        with self._seen:
            self._seen.notify_all()

    def wait_line(self, pred, timeout: float) -> str | None:
        """The first collected line that satisfies `pred`, waiting up to `timeout` s for it;
        None when the process ended or the time ran out first."""
        end = time.monotonic() + timeout
        with self._seen:
            while True:
                for line in self.lines:
                    if pred(line):
                        return line
                left = end - time.monotonic()
                if left <= 0 or not self._reader.is_alive():
                    return None
                self._seen.wait(left)

    def text(self) -> str:
        with self._seen:
            return "".join(self.lines)

    def stderr(self) -> str:
        return "".join(self._err)

    def reap(self, timeout: float) -> bool:
        """Wait up to `timeout` s for it to exit by itself; its CPU time from wait4."""
        end = time.monotonic() + timeout
        while self.status is None:
            pid, status, usage = os.wait4(self.p.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
                self.p.returncode = self.status
                self.cpu_s = usage.ru_utime + usage.ru_stime
                break
            if time.monotonic() > end:
                return False
            time.sleep(0.01)
        self._reader.join(5)
        self._err_reader.join(5)
        return True

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10) -> None:
        """Signal it (unless it already exited), then reap it; SIGKILL after `timeout` s."""
        if self.status is None:
            try:
                self.p.send_signal(sig)
            except ProcessLookupError:
                pass
            if not self.reap(timeout):
                self.p.kill()
                self.reap(10)


@dataclass
class Point:
    t: float  # seconds or ns, the caller's clock
    msgs: float
    bytes: float
    lost: float = 0.0


def totals(text: str) -> list[Point]:
    """The ``tp`` lines of a reference subscriber, in order."""
    return [Point(int(t), int(m), int(b)) for t, m, b in TOTALS.findall(text)]


def at(points: list[Point], t: float) -> Point | None:
    """The running totals at time `t`, interpolated between the lines around it; None when
    `t` lies outside the lines."""
    ts = [p.t for p in points]
    i = bisect_left(ts, t)
    if i == len(points) or (i == 0 and ts[0] != t):
        return None
    hi = points[i]
    if hi.t == t:
        return hi
    lo = points[i - 1]
    f = (t - lo.t) / (hi.t - lo.t)
    return Point(t, lo.msgs + f * (hi.msgs - lo.msgs), lo.bytes + f * (hi.bytes - lo.bytes),
                 lo.lost + f * (hi.lost - lo.lost))


def window(points: list[Point], a: float, b: float, per_second: float) -> tuple[float, float, float]:
    """(msgs, bytes, lost) delivered between `a` and `b`, per second (`per_second` = units of the
    clock in one second); raises ValueError when the lines do not cover the window."""
    pa, pb = at(points, a), at(points, b)
    if pa is None or pb is None:
        raise ValueError(f"the receiver's totals do not cover the window ({len(points)} lines)")
    secs = (b - a) / per_second
    return (pb.msgs - pa.msgs) / secs, (pb.bytes - pa.bytes) / secs, (pb.lost - pa.lost) / secs


def fastdds_shm() -> set[str]:
    """Fast DDS's entries in /dev/shm (its segments, their _el lock files, its semaphores)."""
    try:
        return {n for n in os.listdir("/dev/shm") if n.startswith(("fastrtps_", "sem.fastrtps_"))}
    except OSError:
        return set()


def remove_unmapped_shm(names: set[str]) -> None:
    """Remove those of `names` (in /dev/shm) that no live process maps: what Fast DDS's shared
    memory transport leaves behind even at a clean exit (its port segments), as mwperf's own
    transport removes it (crates/mwperf-transports/src/middleware/fastdds/shm.rs)."""
    if not names:
        return
    in_use: set[str] = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/maps") as maps:
                in_use.update(line.split("/dev/shm/", 1)[1].strip().removesuffix(" (deleted)")
                              for line in maps if "/dev/shm/" in line)
        except OSError:
            continue
    for name in names:
        if name not in in_use and name.removesuffix("_el") not in in_use:
            try:
                os.unlink(f"/dev/shm/{name}")
            except OSError:
                pass
