#!/usr/bin/env python3
"""What measuring the costs costs: UDP RTT p50 at 1 kHz with --profile, --count-allocs and
--wire-bytes against the same run without them, interleaved repetitions, medians.

--wire-bytes moves the agents onto two emulated hosts (its reference is the same clean link
without the packet log); --profile and --count-allocs are compared with plain loopback.

    python3 benchmarks/bench_costs_overhead.py --reps 5 --seconds 3 --write
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import measurement_of, read_result, revision, stamp, write_section

CONDITIONS = (("--profile", ["--profile"], []), ("--count-allocs", ["--count-allocs"], []),
              ("--wire-bytes", ["--wire-bytes", "--idle", "0s"], ["--link", "delay=0ms",
                                                                   "--link-backend", "userspace"]))


def p50(args: list[str], seconds: float) -> float:
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "r.json"
        subprocess.run([sys.executable, "-m", "mwperf.cli", "run", "--transport", "udp", "--rate",
                        "1000", "--payload", "64", "--duration", f"{seconds}s", "--warmup",
                        "300ms", "--no-save", "--json-out", str(out), *args], check=True,
                       capture_output=True, env=os.environ)
        return measurement_of(read_result(out.read_text()))["response"]["p50_ns"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    lines = ["| measuring | p50 with / without (median) | ratio | per repetition |", "|---|---|---|---|"]
    for label, extra, base in CONDITIONS:
        ratios, withs, withouts = [], [], []
        for _ in range(args.reps):
            without = p50(base, args.seconds)
            with_ = p50(base + extra, args.seconds)
            withs.append(with_)
            withouts.append(without)
            ratios.append(with_ / without)
        lines.append(f"| {label} | {statistics.median(withs) / 1e3:.1f} / "
                     f"{statistics.median(withouts) / 1e3:.1f} µs | "
                     f"**{statistics.median(ratios):.3f}** | "
                     f"{min(ratios):.3f}–{max(ratios):.3f} |")
    load = os.getloadavg()[0]
    text = (f"Measured {stamp()} at {revision()}, {args.reps} interleaved repetitions of "
            f"{args.seconds:g} s, UDP 64 B at 1 kHz; load average {load:.2f} at the end.\n\n"
            f"```\npython3 benchmarks/bench_costs_overhead.py --reps {args.reps} --seconds "
            f"{args.seconds:g} --write\n```\n" + "\n".join(lines))
    print(text)
    if args.write:
        write_section("costs-overhead", text)


if __name__ == "__main__":
    main()
