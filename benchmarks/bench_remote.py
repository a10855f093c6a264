#!/usr/bin/env python3
"""Real hosts over SSH (issue 12): what the SSH path costs and whether it disturbs the numbers.

A real OpenSSH server runs in a network namespace joined by a veth pair (tests/ssh_support.py):
that namespace is the "robot". Measured, as medians of --reps interleaved repetitions:
- UDP RTT p50/p99 at 1 kHz, 64 B datagrams, ping here and pong on the robot through `--host`
  (the pong runs under `mwperf-agent supervise` at the end of an SSH channel), against sockperf
  (server in the robot's namespace, ping-pong client here) over the same veth in the same run;
- the agent's size (stripped of debug info) and the time to copy it (first run, empty cache) vs
  a run that finds it (the version check only), and the time to connect (ControlMaster).

    python3 benchmarks/bench_remote.py --reps 5 --seconds 3 --write
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import as_read, revision, stamp, write_section  # noqa: E402  (run as a script)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tests"))
from mwperf.agent import find_agent  # noqa: E402
from mwperf.config import build_point  # noqa: E402
from mwperf.remote import hosts as remote_hosts  # noqa: E402
from mwperf.runner import run_point  # noqa: E402
from ssh_support import Robot  # noqa: E402

SIZE = 64


CONDITIONS = (("rate max, blocking (both)", 0), ("1 kHz, sender spins between sends (both)", 1000))
"""(label, rate): sockperf paces a fixed rate by spinning, so mwperf's sender spins there too
(--spin-margin = the period), as benchmarks/bench.py compares them"""


def mwperf_rtt(robot: Robot, seconds: float, rate: int) -> tuple[float, float]:
    agent = find_agent()
    spin = {"spin_margin": "1ms"} if rate else {}
    cfg = build_point({"transport": "udp", "rate": str(rate), "payload": str(SIZE - 56),
                       "duration": f"{seconds}s", "warmup": "500ms", "host": f"b={robot.url}",
                       "ssh_config": str(robot.folder / "ssh_config"), **spin},
                      lambda: agent)
    with tempfile.TemporaryDirectory(prefix="mwperf-bench-") as scratch:
        result = as_read(run_point(cfg, agent, Path(scratch)).result)
    response = result["measurement"]["response"]
    return response["p50_ns"], response["p99_ns"]


def sockperf_rtt(robot: Robot, seconds: float, rate: int) -> tuple[float, float]:
    server = subprocess.Popen(["ip", "netns", "exec", robot.netns, "sockperf", "server", "-i",
                               robot.address, "-p", "11111"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        out = subprocess.run(["sockperf", "ping-pong", "-i", robot.address, "-p", "11111", "-m",
                              str(SIZE), "-t", str(int(seconds)),
                              *(["--mps", str(rate)] if rate else []), "--full-rtt"],
                             capture_output=True, text=True, timeout=seconds + 30).stdout
    finally:
        server.terminate()
        server.wait(5)
    p50 = float(re.search(r"percentile 50\.000 =\s+([\d.]+)", out).group(1)) * 1000
    p99 = float(re.search(r"percentile 99\.000 =\s+([\d.]+)", out).group(1)) * 1000
    return p50, p99


def deploy_times(robot: Robot) -> tuple[float, float, float]:
    """(connect, copy + connect, find + connect) in seconds: a fresh cache, then a warm one."""
    agent = find_agent()
    from mwperf.remote.ssh import SshConnection, SshOptions
    from mwperf.remote.target import parse_target
    cache = tempfile.mkdtemp(prefix="mwperf-remote-cache-")
    os.environ["MWPERF_REMOTE_CACHE"] = cache
    options = SshOptions(robot.folder / "ssh_config")
    t0 = time.monotonic()
    SshConnection.open("b", parse_target(robot.url), options).close()
    connect = time.monotonic() - t0
    times = []
    for _ in range(2):
        remote_hosts.close_all()
        t0 = time.monotonic()
        remote_hosts.connect("b", parse_target(robot.url), options, agent, lambda _: None)
        times.append(time.monotonic() - t0)
    remote_hosts.close_all()
    shutil.rmtree(cache, ignore_errors=True)
    del os.environ["MWPERF_REMOTE_CACHE"]
    return connect, times[0], times[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3)
    parser.add_argument("--write", action="store_true", help="replace the bench:remote section")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="mwperf-robot-"))
    robot = Robot(folder)
    try:
        connect, copy, found = deploy_times(robot)
        ours: dict[int, list] = {rate: [] for _, rate in CONDITIONS}
        theirs: dict[int, list] = {rate: [] for _, rate in CONDITIONS}
        for _ in range(args.reps):
            for _, rate in CONDITIONS:
                ours[rate].append(mwperf_rtt(robot, args.seconds, rate))
                theirs[rate].append(sockperf_rtt(robot, args.seconds, rate))
    finally:
        remote_hosts.close_all()
        robot.close()
        shutil.rmtree(folder, ignore_errors=True)
    size = find_agent().path.stat().st_size
    lines = [f"Measured {stamp()} at {revision()}, {args.reps} interleaved repetitions of "
             f"{args.seconds:g} s, medians; load average {os.getloadavg()[0]:.2f} at the end "
             f"(2 shared cores).", "", "```",
             f"python3 benchmarks/bench_remote.py --reps {args.reps} --seconds {args.seconds:g} "
             f"--write", "```",
             "| UDP RTT, 64 B datagrams | condition | mwperf --host (pong on the robot, via "
             "SSH) p50 / p99 | sockperf (same veth) p50 / p99 | ratio p50 |", "|---|---|---|---|---|"]
    for label, rate in CONDITIONS:
        m50, m99 = (statistics.median(x[i] for x in ours[rate]) for i in (0, 1))
        s50, s99 = (statistics.median(x[i] for x in theirs[rate]) for i in (0, 1))
        ratios = sorted(o[0] / t[0] for o, t in zip(ours[rate], theirs[rate]))
        lines.append(f"| local → robot → local | {label} | {m50 / 1e3:.1f} / {m99 / 1e3:.1f} µs"
                     f" | {s50 / 1e3:.1f} / {s99 / 1e3:.1f} µs | **{m50 / s50:.3f}** (per "
                     f"repetition {ratios[0]:.3f}–{ratios[-1]:.3f}) |")
    lines += ["",
              f"Agent binary (release, no debug info, symbols kept for perf): {size / 1e6:.1f} MB "
              f"(95.2 MB with debug info before). Connect (ControlMaster up): {connect:.2f} s; "
              f"first use of a host with an empty cache (connect, copy, SHA-256 check, facts): "
              f"{copy:.2f} s; later use (connect, version check, facts): {found:.2f} s."]
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section("remote", text)


if __name__ == "__main__":
    main()
