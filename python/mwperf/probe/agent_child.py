"""An agent that probes a live system (``mwperf-agent probe`` for zenoh, ``probe-ros2`` for
ROS 2): started with its stdout in a log file, waited for (its READY line, then its exit, reaped
with os.wait4 so its CPU time and peak memory are the kernel's own figures), sent SIGTERM if the
control plane is interrupted, and its failure turned into one line naming the system (exit 2 of
the agent = a usage error)."""

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import RunError, UsageError
from ..procs import interrupts_deferred

READY_TIMEOUT_S = 15.0
AGENT_PREFIXES = ("mwperf-agent: error: ", "probe-ros2: ", "probe: ")


@dataclass
class Finished:
    """The probe agent's end: when it was ready and when it exited (unix ns), its CPU seconds
    and peak RSS (bytes)."""

    ready_ns: int
    exit_ns: int
    cpu_s: float
    max_rss_bytes: int


def run_probe_agent(args: list[str], log: Path, system: str) -> Finished:
    """Run ``args`` with stdout to ``log`` until it exits; UsageError/RunError ``system: why``."""
    with log.open("w") as out:
        child = None
        try:
            with interrupts_deferred():
                child = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.PIPE, text=True)
            ready = _wait_ready(child, log, Path(args[0]).name + " " + args[1])
            _, status, usage = os.wait4(child.pid, 0)
            exit_ns = time.time_ns()
        except BaseException:
            if child is None:
                raise
            child.send_signal(signal.SIGTERM)
            try:
                child.wait(5)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
            raise
    code = os.waitstatus_to_exitcode(status)
    child.returncode = code
    if code != 0:
        last = ((child.stderr.read() if child.stderr else "").strip().splitlines()
                or ["no output"])[-1]
        for prefix in AGENT_PREFIXES:
            last = last.removeprefix(prefix)
        raise (UsageError if code == 2 else RunError)(f"{system}: {last}")
    return Finished(ready, exit_ns, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024)


def _wait_ready(child: subprocess.Popen[str], log: Path, what: str) -> int:
    """The unix time (ns) the agent printed READY (or exited: the caller reads why from its
    exit code)."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        with log.open(errors="replace") as text:
            if text.read(5) == "READY":
                return time.time_ns()
        # exited? (WNOWAIT: left for wait4 to reap, with its CPU time; Popen.poll would reap it)
        if os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return time.time_ns()
        time.sleep(0.01)
    raise RunError(f"{what} did not start within {READY_TIMEOUT_S:g} s")
