"""Sampling processes with ``perf record`` (Debian ``linux-perf``) while a point runs.

One ``perf record`` attaches to every local agent and daemon (``-p PID,PID...``) once the
sender has started, at 299 Hz with DWARF call graphs (the release agent keeps its
symbol table and .eh_frame but no debug info; frame pointers are not kept, so ``fp`` stacks
would stop at the first Rust frame), and stops with SIGINT when the sender has finished.
``perf script`` then prints each sample's process and stack for stacks.py.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ..leases import Lease, process_id, stop_leased
from ..procs import _die_with_parent

FREQUENCY_HZ = 299
"""samples per second per CPU: odd, so it does not beat with 1 kHz schedules"""
EVENT = "cpu-clock"
"""what is sampled: CPU time (a sample's period is nanoseconds on every machine, where the
default event is cycles wherever the CPU has counters), so the samples add up to CPU seconds"""
STACK_BYTES = 8192
"""user stack copied per sample for DWARF unwinding"""
PROFILE_DIR = "profile"
STOP_TIMEOUT_S = 10


def unavailable() -> str | None:
    """Why perf cannot sample here (one line saying what to change), or None."""
    perf = shutil.which("perf")
    if perf is None:
        return "perf is not installed: apt-get install linux-perf (Debian), or leave out --profile"
    try:
        done = subprocess.run([perf, "--version"], capture_output=True, text=True, timeout=10,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"perf does not run ({exc}); install linux-perf for this kernel"
    if done.returncode != 0:
        return (f"perf does not run: {(done.stderr or done.stdout).strip().splitlines()[-1:]}; "
                f"install linux-perf for this kernel")
    paranoid = Path("/proc/sys/kernel/perf_event_paranoid")
    level = int(paranoid.read_text()) if paranoid.is_file() else 2
    if os.geteuid() != 0 and level > 1:
        return (f"perf may not sample other processes (kernel.perf_event_paranoid = {level}): "
                f"run mwperf as root, or 'sysctl kernel.perf_event_paranoid=1'")
    return None


class Recorder:
    """One running ``perf record`` over some processes."""

    def __init__(self, pids: list[int], folder: Path, lease: Lease):
        """Leased like every process mwperf starts (a crashed run's perf is ended by the next
        one), and ended by the kernel if mwperf dies (parent-death signal)."""
        folder.mkdir(parents=True, exist_ok=True)
        self._lease = lease
        self.data = folder / "perf.data"
        self.log = folder / "perf.log"
        self.pids = pids
        with open(self.log, "wb") as log:
            self.popen = subprocess.Popen(
                ["perf", "record", "-e", EVENT, "-F", str(FREQUENCY_HZ), "--call-graph",
                 f"dwarf,{STACK_BYTES}", "-p", ",".join(map(str, pids)), "-o", str(self.data)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, process_group=0,
                preexec_fn=_die_with_parent(os.getpid()))
        self._lease_id = process_id(self.popen.pid)
        lease.add("process", self._lease_id)

    def stop(self) -> str | None:
        """Stop sampling and write perf.data; an error line, or None when it recorded."""
        stop_leased(self.popen, self._lease, self._lease_id, STOP_TIMEOUT_S)
        if not self.data.is_file() or self.data.stat().st_size == 0:
            words = self.log.read_text(errors="replace").strip().splitlines()
            return f"perf recorded nothing: {words[-1] if words else 'no output'}"
        return None

    def script(self) -> str:
        """The samples as text: ``comm pid/tid period`` then one ``ip symbol`` line per frame,
        leaf first, a blank line after each sample."""
        done = subprocess.run(["perf", "script", "-i", str(self.data), "-F",
                               "comm,pid,tid,period,ip,sym"], capture_output=True, text=True,
                              errors="replace", check=False, timeout=300)
        return done.stdout
