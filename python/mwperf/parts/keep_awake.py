"""The keep-awake part (``--keep-awake``, issue 41): while the point runs, one spinner per CPU
at the lowest scheduling class there is (SCHED_IDLE, pinned to its CPU), so no CPU of this
machine ever halts. On a VM whose idle vCPU halts and is woken by the host (tens of µs, no
cpuidle driver: ``--prevent-cpu-idle`` cannot act), a message's wake-up cost otherwise depends
on whether something else happened to keep its CPU busy — a busy thread of one middleware
(ros1's), a neighbour — and a side-by-side ranks those conditions, not the middleware. With
every CPU kept awake, every transport wakes on a running CPU. A SCHED_IDLE task runs only when
nothing else wants the CPU and is preempted at once by any task that wakes (the kernel's
wake-up preemption of the idle class), so it takes no CPU time from what is measured; the host
sees the VM's CPUs busy.

The spinners are leased like every process mwperf starts (a crashed run's are ended by the next
run) and die with mwperf (parent-death signal); the result's ``config.keep_awake`` says they
ran, and a warning says so when one could not be started at SCHED_IDLE.
"""

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..leases import process_id, stop_leased
from ..merge import make_warning
from ..procs import _die_with_parent, interrupts_deferred
from .base import P, Part

if TYPE_CHECKING:
    from ..point import Point
    from ..result_types import RunResult
    from .state import PointState

SPINNER = "while True:\n    pass\n"
"""one spinner's program. It is pinned to its CPU and put in the idle class before it is
executed (``_idle_on``, in the child between fork and exec), so it never competes with what is
measured, not even while its interpreter starts, and Popen returns with it already there (the
start of a point waits for nothing). It says nothing: on a machine whose CPUs are all busy an
idle-class task may wait seconds to run at all (measured: the default suite's 132 quick points
took 160 s beside two busy loops without the part, over 300 s with spinners that printed once
idle and were stopped by a signal they had to run to take)"""
STOP_TIMEOUT_S = 2.0


def cpus() -> list[int]:
    """The CPUs this process may run on (each gets a spinner)."""
    return sorted(os.sched_getaffinity(0))


class KeepAwake(Part):
    name = "keep awake"
    on_graphs = True

    def __init__(self) -> None:
        self.spinners: list[tuple[subprocess.Popen[str], str]] = []

    def wanted(self, cfg: "Point") -> bool:
        return bool(getattr(cfg, "keep_awake", False))

    def validate(self, cfg: P, options: dict[str, Any]) -> P:
        if cfg.remote is not None:
            raise UsageError("--keep-awake: keeps this machine's CPUs awake, not a real host's "
                             "(--host); measure with every process here, or keep the robot's "
                             "CPUs busy there yourself")
        return cfg

    def start(self, run: "PointState") -> None:
        """A spinner on each CPU, running at SCHED_IDLE before the first agent starts."""
        self.spinners = []
        failed: list[str] = []
        for cpu in cpus():
            with interrupts_deferred():
                try:
                    popen = subprocess.Popen(
                        [sys.executable, "-S", "-c", SPINNER], stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, process_group=0,
                        preexec_fn=_die_with_parent(os.getpid(), then=_idle_on(cpu)))
                except (OSError, subprocess.SubprocessError) as exc:
                    failed.append(f"CPU {cpu}: not pinned to it in SCHED_IDLE ({exc})")
                    continue
                lease_id = process_id(popen.pid)
                run.lease.add("process", lease_id)
                self.spinners.append((popen, lease_id))
        if failed:
            run.warnings.append(make_warning(
                "keep-awake-failed", "--keep-awake: a spinner did not start: " + "; ".join(failed),
                "the point ran with those CPUs free to halt"))

    def _stop(self, run: "PointState") -> None:
        for popen, lease_id in self.spinners:
            # back in the normal class first: an idle-class task must run to take its signal
            # and exit, which on busy CPUs may take seconds
            with contextlib.suppress(OSError):
                os.sched_setscheduler(popen.pid, os.SCHED_OTHER, os.sched_param(0))
            stop_leased(popen, run.lease, lease_id, STOP_TIMEOUT_S)
        self.spinners = []

    def sender_done(self, run: "PointState") -> None:
        self._stop(run)

    def interrupted(self, run: "PointState") -> None:
        self._stop(run)

    def section(self, run: "PointState", result: "RunResult") -> None:
        self._stop(run)  # a point that failed before its sender finished


def _idle_on(cpu: int) -> Callable[[], None]:
    """What a spinner's child does before exec: pin itself to ``cpu`` and enter SCHED_IDLE (an
    error there fails the Popen: subprocess's "Exception occurred in preexec_fn")."""
    def setup() -> None:
        os.sched_setaffinity(0, {cpu})
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    return setup
