#!/usr/bin/env python3
"""What a bridge costs (issue 14, seed 002), measured through the real bridges.

1. Added latency at 100 Hz Array1k, round trip, best-effort (seed 002's QoS): each bridge and the
   direct path of its transport (same hosts and links), interleaved repetitions (every path once,
   then again); the added p50/p99 is the median over repetitions of bridge minus direct measured
   in the same repetition. Twice: on loopback (the bridges' own cost) and across --link
   wan-internet with each half on its own host (the seed's setting).
2. Maximum sustainable rate per payload on loopback (the bridge's capacity, not the WAN's):
   round trip at 100, 300, 1000, 3000, 10000 Hz; sustainable = the path delivered >= 95 % of the
   offered rate with < 1 % loss; the highest such rate is reported (">= 10000" when all were).
3. What a bridge costs to run and start: the halves' CPU (share of one core during the 100 Hz
   loopback points) and peak RSS, and start_s (bridge B started to both halves health-checked).

Usage: python3 benchmarks/bench_bridges.py [--reps 3] [--seconds 5] [--write]   (root for part 1b)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from benchlib import med, read_result, revision, stamp, write_section  # noqa: E402  (benchmarks/ on sys.path)

REPO = Path(__file__).resolve().parent.parent
PATHS = (("mqtt", "direct"), ("mqtt", "mqtt-bridge"), ("cyclonedds", "direct"),
         ("cyclonedds", "zenoh-ros2dds"), ("cyclonedds", "foxglove"), ("zenoh", "direct"),
         ("zenoh", "zenoh-ros2dds"))
PAYLOADS = ("Struct256", "Array1k", "PointCloud512k")
RATES = (100, 300, 1000, 3000, 10000)


def run_point(transport: str, bridge: str, rate: int, payload: str, seconds: float,
              link: str | None) -> dict | None:
    argv = [sys.executable, "-m", "mwperf.cli", "run", "--transport", transport, "--bridge",
            bridge, "--rate", str(rate), "--payload", payload, "--duration", f"{seconds}s",
            "--warmup", "1s", "--reliability", "best-effort", "--no-save", "--json"]
    argv += ["--link", link] if link else []
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    try:
        return read_result(done.stdout)
    except ValueError:
        print(f"  {transport}/{bridge} {rate} Hz {payload}: exit {done.returncode}: "
              f"{done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None


def _resp(result: dict | None, key: str) -> float | None:
    m = (result or {}).get("measurement") or {}
    return (m.get("response") or {}).get(key)


def added(reps: int, seconds: float, link: str | None) -> list[str]:
    runs: dict[tuple[str, str], list[dict | None]] = {p: [] for p in PATHS}
    for rep in range(reps):
        for path in PATHS:
            runs[path].append(run_point(*path, 100, "Array1k", seconds, link))
            print(f"  rep {rep + 1} {path} {link or 'loopback'}: p50 "
                  f"{_resp(runs[path][-1], 'p50_ns')}", file=sys.stderr)
    lines = ["| transport | bridge | p50 | p99 | added p50 | added p99 | delivered | bridge CPU | "
             "bridge peak RSS | start |", "|---|---|---|---|---|---|---|---|---|---|"]
    for transport, bridge in PATHS:
        mine, direct = runs[(transport, bridge)], runs[(transport, "direct")]
        p50 = med(_resp(r, "p50_ns") for r in mine)
        p99 = med(_resp(r, "p99_ns") for r in mine)
        add50 = med(_resp(a, "p50_ns") - _resp(d, "p50_ns") for a, d in zip(mine, direct)
                    if _resp(a, "p50_ns") is not None and _resp(d, "p50_ns") is not None)
        add99 = med(_resp(a, "p99_ns") - _resp(d, "p99_ns") for a, d in zip(mine, direct)
                    if _resp(a, "p99_ns") is not None and _resp(d, "p99_ns") is not None)
        delivered = med((r or {}).get("bridge", {}).get("delivered_ratio") for r in mine)
        halves = [h for r in mine if r for h in r["bridge"]["halves"]]
        cpu = med([100 * ((h["cpu_user_s"] or 0) + (h["cpu_sys_s"] or 0)) / h["wall_s"]
                   for h in halves if h.get("wall_s")])
        rss = med([h["peak_rss_kib"] for h in halves if h.get("peak_rss_kib")])
        start = med((r or {}).get("bridge", {}).get("start_s") for r in mine)
        direct_row = bridge == "direct"
        lines.append(
            f"| {transport} | {bridge} | {p50 / 1e3:.0f} µs | {p99 / 1e3:.0f} µs | "
            + ("— | — | " if direct_row else f"{add50 / 1e3:+.0f} µs | {add99 / 1e3:+.0f} µs | ")
            + f"{100 * delivered:.1f} % | "
            + ("— | — | — |" if direct_row else
               f"{cpu:.1f} % per half | {rss / 1024:.1f} MiB per half | {start:.2f} s |"))
    return lines


def max_rates(seconds: float) -> list[str]:
    lines = ["| transport | bridge | " + " | ".join(PAYLOADS) + " |",
             "|---|---|" + "---|" * len(PAYLOADS)]
    for transport, bridge in PATHS:
        cells = []
        for payload in PAYLOADS:
            best, seen = None, []
            for rate in RATES:
                r = run_point(transport, bridge, rate, payload, seconds, None)
                m = (r or {}).get("measurement") or {}
                ratio = (r or {}).get("bridge", {}).get("delivered_ratio")
                loss = (m.get("accounting") or {})
                lost = loss.get("lost", 0) / loss["sent"] if loss.get("sent") else 1.0
                ok = ratio is not None and ratio >= 0.95 and lost < 0.01
                seen.append(f"{rate}:{'ok' if ok else 'no'}")
                if not ok:
                    break
                best = rate
            print(f"  max {transport}/{bridge} {payload}: {' '.join(seen)}", file=sys.stderr)
            cells.append("< 100 Hz" if best is None else
                         (f">= {best} Hz" if best == RATES[-1] else f"{best} Hz"))
        lines.append(f"| {transport} | {bridge} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--skip-max", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    out = [f"Measured {stamp()} at {revision()}; 2 shared cores, load average {load:.1f} at the "
           f"start (figures are medians of {args.reps} interleaved repetitions, {args.seconds:g} s "
           f"after 1 s warm-up; round trip, best-effort).", "",
           "**Added latency at 100 Hz Array1k, loopback** (the bridges' own cost):", ""]
    out += added(args.reps, args.seconds, None)
    if os.geteuid() == 0:
        out += ["", "**Added latency at 100 Hz Array1k across `--link wan-internet`** (each half "
                "on its own host; direct over the same hosts and links):", ""]
        out += added(args.reps, args.seconds, "wan-internet")
    if not args.skip_max:
        out += ["", "**Maximum sustainable rate on loopback** (delivered >= 95 % of the offered "
                "rate and loss < 1 %, rates 100/300/1000/3000/10000 Hz, 2 s each):", ""]
        out += max_rates(2.0)
    text = "\n".join(out)
    print(text)
    if args.write:
        write_section("bridges", text)


if __name__ == "__main__":
    main()
