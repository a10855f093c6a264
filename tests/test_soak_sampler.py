"""Soak sampling (issue 29) against ground truth: a fake process that grows its resident set by
exactly 1 MiB, opens one descriptor and starts one thread per step, sampled through
mwperf.soak.procfs and the Sampler; each figure checked against the kernel's own counters
(smaps_rollup, ps) and the known steps; the live heap read from libmwperf_alloc.so's counter in
the process's memory against the bytes it allocated; and the least-squares growth of a process
growing at a known rate."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REAL_AGENT
from mwperf.agent import ALLOC_LIBRARY
from mwperf.soak import procfs
from mwperf.soak.growth import growth
from mwperf.soak.sampler import Sampler

MiB = 1 << 20
LIBRARY = REAL_AGENT.resolve().parent / ALLOC_LIBRARY

GROWER = r"""
import os, sys, threading, time
keep = []
step_s = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
def step():
    keep.append(b"x" * (1 << 20))                # 1 MiB, every page written
    keep.append(open("/dev/null"))               # one descriptor
    t = threading.Thread(target=threading.Event().wait, daemon=True); t.start()
sys.stdout.write("ready\n"); sys.stdout.flush()
if step_s:                                        # steps on a fixed grid of its own clock
    start = time.monotonic(); n = 0
    while True:
        n += 1
        time.sleep(max(0.0, start + n * step_s - time.monotonic()))
        keep.append(b"x" * (1 << 20))
for line in sys.stdin:
    step()
    sys.stdout.write("done\n"); sys.stdout.flush()
"""


def grower(*args, env=None):
    proc = subprocess.Popen([sys.executable, "-c", GROWER, *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout.readline() == "ready\n"
    return proc


def step(proc):
    proc.stdin.write("go\n")
    proc.stdin.flush()
    assert proc.stdout.readline() == "done\n"


def smaps_rss(pid):
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Rss:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no Rss line")


def test_rss_fds_threads_against_the_kernel_and_the_known_steps():
    proc = grower()
    try:
        step(proc)  # the first step's one-time costs (thread stacks, imports) out of the way
        before = (procfs.rss_bytes(proc.pid), procfs.open_fds(proc.pid),
                  procfs.threads(proc.pid))
        for _ in range(4):
            step(proc)
        rss, fds, threads = (procfs.rss_bytes(proc.pid), procfs.open_fds(proc.pid),
                             procfs.threads(proc.pid))
        # the kernel's own views of the same resident set, taken while the process waits
        ps = int(subprocess.run(["ps", "-o", "rss=", "-p", str(proc.pid)], capture_output=True,
                                text=True, check=True).stdout) * 1024
        assert rss == ps
        assert abs(rss - smaps_rss(proc.pid)) <= 64 * 1024
        assert len(os.listdir(f"/proc/{proc.pid}/task")) == threads
    finally:
        proc.kill()
        proc.wait()
    assert fds - before[1] == 4 and threads - before[2] == 4
    assert 4 * MiB <= rss - before[0] <= 4 * MiB + 512 * 1024  # + 4 thread stacks' touched pages


def test_a_gone_process_is_none_and_a_reused_pid_is_not_mistaken():
    proc = grower()
    started = procfs.start_time(proc.pid)
    proc.kill()
    proc.wait()
    assert procfs.rss_bytes(proc.pid) is None and procfs.start_time(proc.pid) != started
    sampler = Sampler(lambda: [("ghost", "daemon", proc.pid, False)])
    sampler.sample()
    assert sampler.watched == {}


def test_sampler_series_and_growth_of_a_process_growing_at_a_known_rate():
    proc = grower("0.1")  # 1 MiB every 100 ms: 10 MiB/s
    sampler = Sampler(lambda: [("grower", "daemon", proc.pid, False)], interval_ns=100_000_000)
    try:
        sampler.start()
        time.sleep(3.2)
    finally:
        sampler.stop()
        proc.kill()
        proc.wait()
    watched = sampler.watched["grower"]
    series = watched.series
    assert len(series) >= 25 and watched.pid == proc.pid
    steps = [b["t_ns"] - a["t_ns"] for a, b in zip(series, series[1:])]
    assert all(40_000_000 < s < 400_000_000 for s in steps)
    found = growth(series, (series[5]["t_ns"], series[-1]["t_ns"]))
    span_s = (found["end_ns"] - found["start_ns"]) / 1e9
    assert found["rss_bytes"] == pytest.approx(10 * MiB * span_s, rel=0.15)
    assert found["rss_bytes_per_min"] == pytest.approx(600 * MiB, rel=0.15)
    assert found["fds"] == 0 and found["threads"] == 0
    assert found["live_heap_bytes"] is None  # not preloaded


def test_sampler_names_a_restarted_process_apart():
    first, second = grower(), grower()
    try:
        pids = [first.pid]
        sampler = Sampler(lambda: [("pong", "daemon", pids[-1], False)])
        sampler.sample()
        first.kill()
        first.wait()
        sampler.sample()
        pids.append(second.pid)
        sampler.sample()
        sampler.sample()
    finally:
        second.kill()
        second.wait()
    assert list(sampler.watched) == ["pong", "pong (restart 1)"]
    assert sampler.watched["pong"].gone and len(sampler.watched["pong"].series) == 1
    assert len(sampler.watched["pong (restart 1)"].series) == 2


@pytest.mark.agent
def test_live_heap_is_read_from_the_preloaded_counter():
    if not LIBRARY.is_file():
        pytest.skip(f"{LIBRARY} not built")
    proc = grower(env={**os.environ, "LD_PRELOAD": str(LIBRARY)})
    try:
        counter = procfs.alloc_counter(proc.pid)
        assert counter is not None and counter.pid == proc.pid
        step(proc)
        before = counter.live_bytes()
        for _ in range(3):
            step(proc)
        after = counter.live_bytes()
        # the agent's own reading of the same counter: /proc/PID/mem at the symbol's address
        assert procfs.symbol_value(LIBRARY, procfs.COUNTER_SYMBOL) is not None
    finally:
        proc.kill()
        proc.wait()
    # 3 MiB of bytes objects (malloc'ed), plus the file objects and thread bookkeeping
    assert 3 * MiB <= after - before <= 3 * MiB + 128 * 1024


def test_no_counter_without_the_preload():
    proc = grower()
    try:
        assert procfs.alloc_counter(proc.pid) is None
    finally:
        proc.kill()
        proc.wait()


def test_a_process_without_memory_is_not_sampled():
    # kthreadd (pid 2) has no address space, as an exiting process has between releasing its
    # memory and becoming a zombie: no resident set is read for it, so no sample of 0 bytes
    assert procfs.rss_bytes(2) is None
    assert procfs.rss_bytes(os.getpid()) > 0


def test_an_unreadable_counter_ends_the_series_instead_of_a_sample_without_heap():
    proc = grower()

    class Unreadable:  # the counter of a process whose memory went away between two reads
        def live_bytes(self):
            return None

    try:
        sampler = Sampler(lambda: [("pong", "daemon", proc.pid, False)])
        sampler.sample()
        watched = sampler.watched["pong"]
        watched.counter = Unreadable()
        sampler.sample()
    finally:
        proc.kill()
        proc.wait()
    assert watched.gone and len(watched.series) == 1
