"""Fair side by side (issue 41): the closed-loop ("max") Struct256 round trip of udp, tcp and ros1
with and without `--keep-awake` (a SCHED_IDLE spinner on each CPU while the point runs), and
sockperf's UDP ping-pong (64 B, closed loop) with and without the same spinners, measured in the
same run, interleaved.

    python3 benchmarks/bench_keep_awake.py --reps 5 [--write]

On this VM an idle vCPU halts and the host wakes it (tens of µs, no cpuidle driver): whatever
keeps a CPU busy changes a small message's round trip, so a transport that keeps a thread busy
(ros1's) ranks ahead of one that sleeps. With every CPU kept awake all of them wake on a running
CPU. Medians of interleaved repetitions with their spread (min-max). Checked against: sockperf,
a peer tool, under the same two conditions in the same run (its UDP round trip must move the way
mwperf's does), and each point's own CPU (the agents' CPU seconds do not grow with the spinners:
a SCHED_IDLE task takes none from them)."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from types import SimpleNamespace

from benchlib import ROOT, med, revision, spread, stamp, write_section

sys.path.insert(0, str(ROOT / "python"))
from mwperf.leases import Lease  # noqa: E402
from mwperf.parts.keep_awake import KeepAwake  # noqa: E402

TRANSPORTS = ("udp", "tcp", "ros1")
SOCKPERF_PCT = re.compile(r"percentile (\d+\.\d+) =\s+([\d.]+)")


def mwperf(transport: str, awake: bool, seconds: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    done = subprocess.run([sys.executable, "-m", "mwperf.cli", "run", "--transport", transport,
                           "--rate", "0", "--payload", "Struct256", "--duration", f"{seconds}s",
                           "--no-save", "--json", *(["--keep-awake"] if awake else [])],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    if done.returncode != 0:
        sys.exit(f"bench_keep_awake: {transport}: exit {done.returncode}: "
                 f"{done.stderr.strip()[-300:]}")
    result = json.loads(done.stdout)
    stats = result["measurement"]["response"]
    cpu = sum(a["process"]["cpu_user_s"] + a["process"]["cpu_sys_s"] for a in result["agents"])
    return {"p50_us": stats["p50_ns"] / 1e3, "p99_us": stats["p99_ns"] / 1e3,
            "cpu_s_per_10k": cpu / max(1, result["measurement"]["accounting"]["received"]) * 1e4}


def sockperf(awake: bool, seconds: int) -> dict[str, float]:
    """sockperf ping-pong over UDP loopback, 64 B, closed loop; with ``awake`` the same
    spinners mwperf's --keep-awake starts (the part itself, leased)."""
    part = KeepAwake()
    with Lease.take("bench_keep_awake sockperf") as lease:
        run = SimpleNamespace(lease=lease, warnings=[])
        if awake:
            part.start(run)  # type: ignore[arg-type]
        try:
            common = ["-i", "127.0.0.1", "-p", "11813"]
            server = subprocess.Popen(["sockperf", "server", *common],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.4)
            out = subprocess.run(["sockperf", "ping-pong", *common, "-m", "64", "-t",
                                  str(seconds), "--full-rtt"], capture_output=True, text=True,
                                 timeout=seconds + 30).stdout
            server.terminate()
            server.wait()
        finally:
            part.sender_done(run)  # type: ignore[arg-type]
    pct = {float(p): float(v) for p, v in SOCKPERF_PCT.findall(out)}
    return {"p50_us": pct[50.0], "p99_us": pct[99.0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="write BENCHMARKS.md's section")
    args = parser.parse_args()
    figures: dict[tuple[str, bool, str], list[float]] = {}
    for rep in range(args.reps):
        order = [False, True] if rep % 2 == 0 else [True, False]
        for awake in order:
            for who in (*TRANSPORTS, "sockperf udp"):
                got = (sockperf(awake, args.seconds) if who == "sockperf udp"
                       else mwperf(who, awake, args.seconds))
                for key, value in got.items():
                    figures.setdefault((who, awake, key), []).append(value)
        print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr)
    lines = [f"Measured {stamp()} at {revision()} (`python3 benchmarks/bench_keep_awake.py "
             f"--reps {args.reps} --seconds {args.seconds}`), closed loop, medians of "
             f"{args.reps} interleaved repetitions (min-max), µs:", "",
             "| round trip | p50 idle CPUs | p50 --keep-awake | ratio | p99 idle CPUs | "
             "p99 --keep-awake | agents' CPU s / 10k msgs idle → awake |",
             "|---|---|---|---|---|---|---|"]
    for who in (*TRANSPORTS, "sockperf udp"):
        idle, awake = figures[(who, False, "p50_us")], figures[(who, True, "p50_us")]
        p99i, p99a = figures[(who, False, "p99_us")], figures[(who, True, "p99_us")]
        cpu = ("—" if (who, False, "cpu_s_per_10k") not in figures else
               f"{med(figures[(who, False, 'cpu_s_per_10k')]):.3f} → "
               f"{med(figures[(who, True, 'cpu_s_per_10k')]):.3f}")
        label = f"mwperf {who} Struct256" if who in TRANSPORTS else "sockperf udp 64 B"
        lines.append(f"| {label} | {med(idle):,.1f} ({spread(idle)}) | {med(awake):,.1f} "
                     f"({spread(awake)}) | {med(awake) / med(idle):.3f} | {med(p99i):,.1f} | "
                     f"{med(p99a):,.1f} | {cpu} |")
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section("keep-awake", text)


if __name__ == "__main__":
    main()
