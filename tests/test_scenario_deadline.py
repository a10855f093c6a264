"""The per-point timeout: it fires in the main thread, but never while procs stops processes."""

import signal
import time

import pytest

from mwperf.procs import _ignoring_interrupts
from mwperf.scenario.deadline import Deadline, PointTimeout, deadline


def test_the_timeout_waits_while_processes_are_stopped() -> None:
    """procs ignores SIGINT/SIGTERM while it stops agents; the timeout must not cut that short."""
    before = signal.getsignal(signal.SIGALRM)
    timer = Deadline()
    started = time.monotonic()
    with pytest.raises(PointTimeout, match=r"^timed out after 50.0 ms \(the scenario's timeout\)$"):
        with deadline(50_000_000, timer):  # 50 ms
            with _ignoring_interrupts():
                time.sleep(0.3)  # a 'cleanup' longer than the timeout: not interrupted
            assert not timer.fired
            time.sleep(5)  # after it, the timeout fires within a retry (0.1 s)
    # after the 0.3 s cleanup, and before the injected 5 s sleep would have ended (a fixed
    # 1.0 s guessed how late a loaded machine delivers the retry's signal)
    assert timer.fired and 0.3 <= time.monotonic() - started < 0.3 + 5
    assert signal.getsignal(signal.SIGALRM) == before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_no_timeout_no_alarm() -> None:
    timer = Deadline()
    with deadline(None, timer):
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert not timer.fired
