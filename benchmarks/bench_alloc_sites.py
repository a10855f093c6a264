#!/usr/bin/env python3
"""Allocations by call site (issue 13, `mwperf run --alloc-sites`): heaptrack's per-message count
checked against mwperf's own counter (`--count-allocs`, libmwperf_alloc.so) on every transport,
the top call site of each sender, and what recording every backtrace costs.

1. Per transport: `mwperf run --transport T --alloc-sites` and `... --count-allocs` (round trip,
   1 kHz, Struct256, --duration S after 0.3 s warm-up), one after the other: steady-state
   allocations per message of ping and pong by both (two independent interposers, two runs:
   periodic traffic such as DDS heartbeats makes small differences), and the ping's top site.
2. Overhead: RTT p50 with --alloc-sites vs without, interleaved, medians over --reps.

    python3 benchmarks/bench_alloc_sites.py --reps 3 --seconds 2 --write
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import med, read_result, revision, stamp, write_section

ROOT = Path(__file__).resolve().parents[1]
TRANSPORTS = ("udp", "tcp", "cyclonedds", "fastdds", "zenoh", "iceoryx2", "ros1", "mqtt",
              "rustdds")


def run(tmp: Path, *args: str) -> dict:
    out = tmp / "r.json"
    done = subprocess.run([sys.executable, "-m", "mwperf", "run", "--rate", "1000", "--payload",
                           "Struct256", "--warmup", "0.3s", "--json-out", str(out), "--no-save", *args],
                          capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "python")})
    if done.returncode != 0:
        sys.exit(f"bench_alloc_sites: mwperf run {' '.join(args)} failed: {done.stderr[-500:]}")
    return read_result(out.read_text())


def fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--write", action="store_true", help="replace the section in BENCHMARKS.md")
    a = ap.parse_args()
    secs = f"{a.seconds}s"
    lines = [f"Measured {stamp()} at {revision()}: `python3 benchmarks/bench_alloc_sites.py "
             f"--reps {a.reps} --seconds {a.seconds} --write` (1 kHz, Struct256, {secs}).", "",
             "| transport | ping allocs/msg heaptrack / counter | pong allocs/msg heaptrack / counter "
             "| ping's top site (per msg) |", "|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for t in TRANSPORTS:
            sites = run(tmp, "--transport", t, "--duration", secs, "--alloc-sites")
            counted = run(tmp, "--transport", t, "--duration", secs, "--count-allocs")
            by_site = {p["role"]: p for p in sites["alloc_sites"]["processes"]}
            by_count = {ag["role"]: ag["allocations"] for ag in counted["agents"]}
            busy = [s for s in by_site["ping"].get("sites", []) if s["steady_count"] > 0]
            top = (f"{busy[0]['per_msg']:.2f} `{busy[0]['function'][:80]}`" if busy
                   else "none per message")
            lines.append(
                f"| {t} | {fmt(by_site['ping'].get('allocs_per_msg'))} / "
                f"{fmt(by_count['ping']['allocs_per_msg'])} | "
                f"{fmt(by_site['pong'].get('allocs_per_msg'))} / "
                f"{fmt(by_count['pong']['allocs_per_msg'])} | {top} |")
        lines += ["", f"**Overhead** of --alloc-sites (RTT p50, {a.reps} interleaved repeats, "
                  "medians):", "", "| transport | p50 with | p50 without | ratio | runs with | "
                  "runs without |", "|---|---|---|---|---|---|"]
        for t in ("udp", "cyclonedds"):
            p50: dict[bool, list[float]] = {True: [], False: []}
            for _ in range(a.reps):
                for on in (True, False):
                    r = run(tmp, "--transport", t, "--duration", secs,
                            *(["--alloc-sites"] * on))
                    p50[on].append(r["measurement"]["response"]["p50_ns"])
            on, off = med(p50[True]), med(p50[False])
            lines.append(f"| {t} | {on / 1e3:.1f} µs | {off / 1e3:.1f} µs | **{on / off:.3f}** | "
                         + ", ".join(f"{x / 1e3:.1f}" for x in p50[True]) + " | "
                         + ", ".join(f"{x / 1e3:.1f}" for x in p50[False]) + " |")
    lines.append(f"\nLoad average {os.getloadavg()[0]:.2f} at the end.")
    text = "\n".join(lines)
    print(text)
    if a.write:
        write_section("alloc-sites", text)


if __name__ == "__main__":
    main()
