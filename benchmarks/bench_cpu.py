#!/usr/bin/env python3
"""CPU quotas (--cpu-quota) against what the agents then get: for each quota (none, 100, 75,
50, 25 %, applied to both agents), the udp round trip at 1 kHz (seed 000's sender/echoer at
1 kHz) with an idle echo, with 0.3 ms of CPU work in the pong's callback (--busy-loop 300us: a
pong that wants 30 % of a CPU), and with --busy-poll (both agents spin: they want a whole CPU
each, so their share is what the quota, or the machine, gives them). Reported: each agent's
CPU share (CPU time / wall time of the agent process, from its own report), the share of CFS periods in which the
kernel throttled the pong, RTT p50/p99 and loss. And the plainest check: a pure spinner
(`while True: pass`) started the way agents are (AgentSet with the same CpuPlacement), pinned to
CPU 0, its CPU share over 3 s per quota. Repetitions are interleaved (every quota
once, then again), medians shown. With --write the table replaces the text between the
bench:cpu markers in BENCHMARKS.md.

Needs root (cgroups) and the agent of $MWPERF_AGENT.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import read_result, revision, stamp, write_section  # noqa: E402  (run as a script: benchmarks/ is on sys.path)

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))
from mwperf.emulation.cpu import CpuPlacement, parse_limits  # noqa: E402
from mwperf.leases import Lease  # noqa: E402
from mwperf.procs import AgentSet  # noqa: E402

SPIN_S = 3.0
QUOTAS = ("none", "100%", "75%", "50%", "25%")
MODES = {"idle": [], "0.3 ms work": ["--busy-loop", "300us"], "busy-poll": ["--busy-poll"]}
"""the agents' load: an idle echo, 0.3 ms of CPU work per message in the pong, spinning agents"""


def run_point(quota: str, extra: list[str], seconds: float) -> dict:
    argv = [sys.executable, "-m", "mwperf.cli", "run", "--transport", "udp", "--rate", "1000",
            "--duration", f"{seconds}s", "--warmup", "1s", "--no-save", "--json", *extra]
    if quota != "none":
        argv += ["--cpu-quota", quota]
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    if done.returncode not in (0, 3):
        sys.exit(f"bench: {' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    result = read_result(done.stdout)
    share = {}
    for agent in result["agents"]:
        process = agent["process"]
        share[agent["role"]] = (process["cpu_user_s"] + process["cpu_sys_s"]) / process["wall_s"]
    throttled = None
    if result.get("cpu"):
        stats = result["cpu"]["agents"]["pong"]["throttling"]
        if stats["periods"]:
            throttled = stats["throttled_periods"] / stats["periods"]
    response = result["measurement"]["response"]
    accounting = result["measurement"]["accounting"]
    return {"pong": share["pong"], "ping": share["ping"], "p50": response["p50_ns"] / 1e3,
            "p99": response["p99_ns"] / 1e3, "throttled": throttled,
            "loss": accounting["lost"] / accounting["sent"] if accounting["sent"] else None}


def spin_share(quota: str) -> tuple[float, float | None]:
    """A pure spinner on CPU 0 under ``quota``: (CPU share, throttled share of periods)."""
    limits = parse_limits(None if quota == "none" else quota, "0", None, ("pong", "ping"))
    with tempfile.TemporaryDirectory() as scratch, Lease.take("bench_cpu") as lease:
        placement = CpuPlacement(limits, lease)
        with AgentSet(Path(scratch), placement) as agents:
            pid = agents.spawn("pong", [sys.executable, "-c", "while True: pass"]).popen.pid
            cpu0, wall0 = _cpu_s(pid), time.monotonic()
            time.sleep(SPIN_S)
            share = (_cpu_s(pid) - cpu0) / (time.monotonic() - wall0)
            throttling = placement.describe()["agents"]["pong"]["throttling"]
    throttled = (throttling["throttled_periods"] / throttling["periods"]
                 if throttling and throttling["periods"] else None)
    return share, throttled


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    runs: dict[tuple[str, str], list[dict]] = {}
    spins: dict[str, list[tuple[float, float | None]]] = {}
    for rep in range(args.reps):
        for quota in QUOTAS:
            spins.setdefault(quota, []).append(spin_share(quota))
            print(f"rep {rep + 1} spinner {quota}: {spins[quota][-1]}", file=sys.stderr)
        for mode, extra in MODES.items():
            for quota in QUOTAS:
                runs.setdefault((mode, quota), []).append(run_point(quota, extra, args.seconds))
                print(f"rep {rep + 1} {mode} {quota}: {runs[(mode, quota)][-1]}", file=sys.stderr)
    commit = revision()
    lines = [f"Measured {stamp()} at {commit}, {args.reps} interleaved repetitions "
             f"of {args.seconds:g} s (after 1 s warm-up), medians; udp, Array1k, 1000 Hz; "
             f"load average at the start: {load:.1f} on {os.cpu_count()} CPUs.", "",
             "| agents | --cpu-quota | pong CPU share | ping CPU share "
             "| pong throttled periods | RTT p50 | RTT p99 | loss |",
             "|---|---|---|---|---|---|---|---|"]
    for mode in MODES:
        for quota in QUOTAS:
            rows = runs[(mode, quota)]
            throttled = median([r["throttled"] for r in rows])
            lines.append(
                f"| {mode} | {quota} | {100 * median([r['pong'] for r in rows]):.1f} % "
                f"| {100 * median([r['ping'] for r in rows]):.1f} % "
                f"| {'—' if throttled is None else f'{100 * throttled:.0f} %'} "
                f"| {median([r['p50'] for r in rows]):.1f} µs "
                f"| {median([r['p99'] for r in rows]):.1f} µs "
                f"| {100 * median([r['loss'] for r in rows]):.2f} % |")
    lines += ["", f"A pure spinner pinned to CPU 0 ({SPIN_S:g} s, same repetitions, medians):", "",
              "| --cpu-quota | spinner CPU share | throttled periods |", "|---|---|---|"]
    for quota in QUOTAS:
        throttled = median([t for _, t in spins[quota]])
        lines.append(f"| {quota} | {100 * median([s for s, _ in spins[quota]]):.1f} % "
                     f"| {'—' if throttled is None else f'{100 * throttled:.0f} %'} |")
    table = "\n".join(lines)
    print(table)
    if args.write:
        write_section("cpu", table)


if __name__ == "__main__":
    main()
