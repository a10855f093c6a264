#!/usr/bin/env python3
"""CPU quota on an emulated host (issue 5, `--cpu-quota HOST=PCT%`): seed 000's slowed echoer
with ROS 1's own echo. The round trip goes ping on host a -> topic_tools relay on host b -> back
(`--link delay=0`), rosmaster on b too; `--cpu-quota b=Q` puts the relay and rosmaster in one
cgroup. Reported per quota: the relay's CPU share (its CPU time over the run's wall time), the
share of CFS periods in which host b was throttled, RTT p50/p99 and loss.

Ground truth first: two spinners placed on host b (one started as an agent, one joined as a
daemon) under b=50 %, pinned to CPU 0 — together they must get 50 % of a CPU, not 50 % each.
Repetitions are interleaved, medians shown. Needs root, mwperf-linkem, the agent, rosmaster and
topic-tools.

    python3 benchmarks/bench_cpu_hosts.py --reps 3 --seconds 4 --write
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import med, read_result, revision, stamp, write_section  # noqa: E402  (run as a script)

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))
from mwperf.emulation.cpu import CpuPlacement, parse_limits  # noqa: E402
from mwperf.emulation.topology import two_hosts  # noqa: E402
from mwperf.leases import Lease  # noqa: E402
from mwperf.procs import AgentSet  # noqa: E402

QUOTAS = ("none", "50%", "10%", "5%")
SPIN = [sys.executable, "-c", "while True: pass"]
SPIN_S = 3.0


def relay_point(quota: str, seconds: float) -> dict:
    argv = [sys.executable, "-m", "mwperf.cli", "run", "--transport", "ros1", "--pong", "relay",
            "--rate", "1000", "--payload", "Array1k", "--duration", f"{seconds}s", "--warmup",
            "1s", "--link", "delay=0", "--no-save", "--json"]
    if quota != "none":
        argv += ["--cpu-quota", f"b={quota}"]
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    if done.returncode not in (0, 3):
        sys.exit(f"bench: {' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    result = read_result(done.stdout)
    (relay,) = [d for d in result["daemons"] if d["name"] == "relay"]
    throttled = None
    if result.get("cpu"):
        stats = result["cpu"]["hosts"]["b"]["throttling"]
        if stats["periods"]:
            throttled = stats["throttled_periods"] / stats["periods"]
    response, accounting = result["measurement"]["response"], result["measurement"]["accounting"]
    return {"relay": (relay["cpu_user_s"] + relay["cpu_sys_s"]) / relay["wall_s"],
            "throttled": throttled, "p50": response["p50_ns"], "p99": response["p99_ns"],
            "loss": accounting["lost"] / accounting["sent"] if accounting["sent"] else None}


def two_spinners(quota: str) -> tuple[float, float]:
    """Two spinners on host b, CPU 0, under ``quota``: their CPU shares."""
    limits = parse_limits(None if quota == "none" else f"b={quota}", "b=0", None,
                          ("pong", "ping"), two_hosts().place)
    daemon = subprocess.Popen(SPIN)
    try:
        with tempfile.TemporaryDirectory() as scratch, Lease.take("bench_cpu_hosts") as lease:
            placement = CpuPlacement(limits, lease)
            with AgentSet(Path(scratch), placement) as agents:
                agent = agents.spawn("pong", SPIN).popen.pid
                placement.join("rosmaster", "rosmaster", daemon.pid)
                pids = (agent, daemon.pid)
                start, wall0 = [_cpu_s(p) for p in pids], time.monotonic()
                time.sleep(SPIN_S)
                wall = time.monotonic() - wall0
                shares = [(_cpu_s(p) - s) / wall for p, s in zip(pids, start)]
                daemon.kill()
    finally:
        daemon.kill()
        daemon.wait()
    return shares[0], shares[1]


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(x: float | None, digits: int = 1) -> str:
    return "—" if x is None or x != x else f"{100 * x:.{digits}f} %"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--write", action="store_true", help="replace the bench:cpu-hosts section")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    spins: dict[str, list[tuple[float, float]]] = {}
    runs: dict[str, list[dict]] = {}
    for rep in range(args.reps):
        for quota in ("none", "50%"):
            spins.setdefault(quota, []).append(two_spinners(quota))
            print(f"rep {rep + 1} spinners {quota}: {spins[quota][-1]}", file=sys.stderr)
        for quota in QUOTAS:
            runs.setdefault(quota, []).append(relay_point(quota, args.seconds))
            print(f"rep {rep + 1} relay {quota}: {runs[quota][-1]}", file=sys.stderr)
    lines = [f"Measured {stamp()} at {revision()}, {args.reps} interleaved repetitions, medians; "
             f"load average at the start: {load:.1f} on {os.cpu_count()} CPUs.", "",
             "```", f"python3 benchmarks/bench_cpu_hosts.py --reps {args.reps} "
             f"--seconds {args.seconds:g} --write", "```",
             "Ground truth: two spinners on host b, both pinned to CPU 0 (one an agent, one a "
             f"daemon), over {SPIN_S:g} s:", "",
             "| host b quota | agent share | daemon share | together |", "|---|---|---|---|"]
    for quota, found in spins.items():
        a, d = med(s[0] for s in found), med(s[1] for s in found)
        lines.append(f"| {quota} | {pct(a)} | {pct(d)} | {pct(med(s[0] + s[1] for s in found))} |")
    lines += ["", f"ros1 round trip through topic_tools relay on host b, 1 kHz, Array1k, "
              f"{args.seconds:g} s after 1 s warm-up:", "",
              "| host b quota | relay CPU share | host b throttled periods | RTT p50 | RTT p99 "
              "| loss |", "|---|---|---|---|---|---|"]
    for quota in QUOTAS:
        found = runs[quota]
        lines.append(f"| {quota} | {pct(med(r['relay'] for r in found))} | "
                     f"{pct(med(r['throttled'] for r in found), 0)} | "
                     f"{med(r['p50'] for r in found) / 1e3:.1f} µs | "
                     f"{med(r['p99'] for r in found) / 1e3:.1f} µs | "
                     f"{pct(med(r['loss'] for r in found), 2)} |")
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section("cpu-hosts", text)


if __name__ == "__main__":
    main()
