"""A scenario's per-point ``timeout``: a hung point is stopped like a Ctrl-C would stop it.

The point runs in this (the main) thread and waits on its agents; a one-shot ``SIGALRM`` raises
``PointTimeout`` there, which the runner handles as it handles Ctrl-C — the agents are stopped
(SIGINT, then SIGKILL), whatever they reported is kept — but the sweep goes on with the next
point instead of ending. Like a Ctrl-C, it waits while processes are being stopped.
"""

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType

from ..durations import format_ns
from ..runner import Interrupted


RETRY_S = 0.1
"""while the agents or daemons are being stopped (procs ignores SIGINT/SIGTERM then, and so does
the timeout: an exception there would leave processes behind), look again this much later"""


class PointTimeout(Interrupted):
    """The point ran longer than the scenario's timeout."""


class Deadline:
    """Whether the timeout fired (so a stop can be told apart from the user's Ctrl-C)."""

    def __init__(self) -> None:
        self.fired = False
        self.reason = ""


@contextlib.contextmanager
def deadline(timeout_ns: int | None, state: Deadline) -> Iterator[Deadline]:
    """Raise PointTimeout in this thread after ``timeout_ns`` (None: never); ``state.fired``
    tells afterwards whether it did."""
    if timeout_ns is None:
        yield state
        return
    state.reason = f"timed out after {format_ns(timeout_ns)} (the scenario's timeout)"

    def expire(signum: int, frame: FrameType | None) -> None:
        if signal.getsignal(signal.SIGTERM) == signal.SIG_IGN:  # agents or daemons are being
            signal.setitimer(signal.ITIMER_REAL, RETRY_S)     # stopped: let that finish first
            return
        state.fired = True
        raise PointTimeout(state.reason)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, timeout_ns / 1e9)
    try:
        yield state
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
