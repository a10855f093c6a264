"""Showing a sweep's progress on stderr: on a terminal a bar (point i/N, ETA, what is being
measured) under the lines of the finished points; otherwise plain lines, one when a point
starts and one when it ends (logs and CI stay readable).

The ETA is the planned time of the points left (warm-up + duration, or count / rate) plus the
mean harness overhead measured so far per point. A point whose length --min-samples changes says
so in its line (``length_note``).
"""

import shutil
import sys
import time
from typing import TextIO

from ..config import PointConfig
from ..durations import format_ns
from ..show.table import format_rate

BAR_WIDTH = 20


class Progress:
    """Progress of a sweep of ``total`` points."""

    def __init__(self, total: int, stream: TextIO | None = None, tty: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.total = total
        self.done = 0
        self.overhead_s: list[float] = []
        self.started = 0.0
        self.planned_left_s = 0.0

    def plan(self, planned_s: float) -> None:
        """The planned measuring time of every point still to run."""
        self.planned_left_s = planned_s

    def start(self, index: int, label: str, planned_s: float, note: str | None = None) -> None:
        """Point ``index`` (1-based) starts; ``planned_s`` its planned measuring time; ``note``
        what sets its length when not the plain duration (``length_note``)."""
        self.started = time.monotonic()
        self._planned = planned_s
        label += f" ({note})" if note else ""
        if self.tty:
            self._bar(index, f"measuring {label}")
        else:
            self._line(f"[{index}/{self.total}] {label} ...")

    def finish(self, index: int, line: str, measured: bool = True) -> None:
        """Point ``index`` ended; ``line`` says how (shown above the bar / as a line)."""
        self.done += 1
        self.planned_left_s = max(0.0, self.planned_left_s - self._planned)
        if measured:
            self.overhead_s.append(max(0.0, time.monotonic() - self.started - self._planned))
        if self.tty:
            self.stream.write("\r\x1b[K")
        self._line(f"[{index}/{self.total}] {line}")
        if self.tty and self.done < self.total:
            self._bar(index, "")

    def note(self, index: int, line: str) -> None:
        """A point that was not measured (skipped, kept from an earlier run)."""
        self._planned = 0.0
        self.started = time.monotonic()
        self.finish(index, line, measured=False)

    def close(self) -> None:
        """Leave the terminal clean."""
        if self.tty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()

    def eta_s(self) -> float:
        """Seconds left: planned time + mean overhead x points left."""
        left = self.total - self.done
        mean = sum(self.overhead_s) / len(self.overhead_s) if self.overhead_s else 1.0
        return self.planned_left_s + mean * left

    def _bar(self, index: int, what: str) -> None:
        filled = round(BAR_WIDTH * self.done / max(self.total, 1))
        eta = format_ns(self.eta_s() * 1e9).replace(" ", "")
        text = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {index}/{self.total} ETA {eta} {what}"
        width = shutil.get_terminal_size((100, 20)).columns
        self.stream.write("\r\x1b[K" + text[:width - 1])
        self.stream.flush()

    def _line(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()


def planned_s(cfg: PointConfig) -> float:
    """The planned measuring time of a point: warm-up + duration (stretched by --min-samples
    at a rate), or warm-up + count / rate (a closed loop at rate 0 counts as no time, or as
    its duration with --min-samples: its length is not known in advance)."""
    if cfg.count is not None:
        return (cfg.warmup_ns / 1e9) + (cfg.count / cfg.rate if cfg.rate > 0 else 0.0)
    return (cfg.warmup_ns + (cfg.measure_ns or 0)) / 1e9


def length_note(cfg: PointConfig) -> str | None:
    """How --min-samples sets the point's length, for its progress line: '10.0 s for 1000
    samples at 100 Hz' (a rate, stretched beyond --duration), 'at least 1000 samples and
    1.00 s' (rate 0); None when it changes nothing (or is not given)."""
    n, duration, measure = cfg.min_samples, cfg.duration_ns, cfg.measure_ns
    if n is None or duration is None or measure is None:
        return None
    if cfg.graph is not None:  # every edge and call at least n: the slowest's n periods
        return (f"{format_ns(measure)} for {n} samples of its slowest topic or call"
                if measure > duration else None)
    if cfg.rate <= 0:
        return f"at least {n} samples and {format_ns(duration)}"
    if measure > duration:
        return f"{format_ns(measure)} for {n} samples at {format_rate(cfg.rate)}"
    return None
