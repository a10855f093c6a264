#!/usr/bin/env python3
"""One-way latency against the number of subscribers (--subscribers N, seed 000's "more nodes"
question): for each transport and N, one pub at 1 kHz (Array32, 1000 measured messages after
300 ms warm-up, queue 1000) and N sub processes. Reported per (transport, N), medians over
interleaved repetitions (every point once, then again): the pooled p50 and p99 over all
subscribers' messages, the slowest subscriber's p50, loss over N x sent, and the pooled p50
relative to N = 1 of the same transport measured in the same repetitions (the reference).
With --write the table replaces the text between the bench:subscribers markers in
BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from benchlib import med, read_result, revision, stamp, write_section  # noqa: E402  (benchmarks/ on sys.path)

REPO = Path(__file__).resolve().parent.parent
COUNTS = (1, 2, 4, 8, 16)
TRANSPORTS = ("udp", "ros1", "cyclonedds")


def run_point(transport: str, subscribers: int) -> dict | None:
    """One point's run-result (None when it produced none)."""
    argv = [sys.executable, "-m", "mwperf.cli", "run", "--transport", transport, "--mode",
            "oneway", "--rate", "1000", "--payload", "Array32", "--count", "1000", "--warmup",
            "300ms", "--depth", "1000", "--subscribers", str(subscribers), "--no-save",
            "--json"]
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    if done.returncode not in (0, 3):
        print(f"  {transport} N={subscribers}: exit {done.returncode}: "
              f"{done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return read_result(done.stdout)


def figures(result: dict | None) -> dict[str, float | None]:
    """p50/p99 pooled, the slowest subscriber's p50, loss %."""
    if result is None or result["measurement"] is None:
        return {"p50": None, "p99": None, "slowest": None, "loss": None}
    m = result["measurement"]
    rows = [r["measurement"] for r in result.get("per_subscriber") or [] if r["measurement"]]
    p50s = [r["response"]["p50_ns"] for r in rows] or [m["response"]["p50_ns"]]
    acc = m["accounting"]
    return {"p50": m["response"]["p50_ns"], "p99": m["response"]["p99_ns"],
            "slowest": max(p for p in p50s if p is not None),
            "loss": 100 * acc["lost"] / acc["sent"] if acc["sent"] else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--transports", default=",".join(TRANSPORTS))
    parser.add_argument("--counts", default=",".join(map(str, COUNTS)))
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    transports = args.transports.split(",")
    counts = [int(n) for n in args.counts.split(",")]
    load = os.getloadavg()[0]
    when, rev = stamp(), revision()
    runs: dict[tuple[str, int], list[dict[str, float | None]]] = {}
    for rep in range(args.reps):
        for transport in transports:
            for n in counts:
                print(f"rep {rep + 1}: {transport} N={n}", file=sys.stderr)
                runs.setdefault((transport, n), []).append(figures(run_point(transport, n)))

    def cell(transport: str, n: int, key: str) -> float:
        return med(r[key] for r in runs[(transport, n)])

    lines = [f"Measured {when} at {rev}, {args.reps} interleaved repetitions, medians; one pub at "
             f"1 kHz, Array32, 1000 messages after 300 ms warm-up, depth 1000; load average at the "
             f"start: {load:.1f} on {os.cpu_count()} CPUs.", "",
             "| transport | subscribers | p50 (all messages) | p99 | slowest subscriber's p50 "
             "| loss | p50 / p50 at N = 1 |", "|---|---|---|---|---|---|---|"]
    for transport in transports:
        base = cell(transport, counts[0], "p50")
        for n in counts:
            p50 = cell(transport, n, "p50")
            lines.append(f"| {transport} | {n} | {p50 / 1e3:.1f} µs | "
                         f"{cell(transport, n, 'p99') / 1e3:.1f} µs | "
                         f"{cell(transport, n, 'slowest') / 1e3:.1f} µs | "
                         f"{cell(transport, n, 'loss'):.2f} % | {p50 / base:.2f} |")
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section("subscribers", text)


if __name__ == "__main__":
    main()
