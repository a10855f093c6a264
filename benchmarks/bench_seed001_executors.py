#!/usr/bin/env python3
"""Seed 001's executors on ROS 2 (BENCHMARKS.md, "rclpy's executors vs mwperf's rcl pong"): the
table of a run of benchmarks/seed001/executors.yaml and its check against the echo's own count.

    mwperf run benchmarks/seed001/executors.yaml --results R
    python3 benchmarks/bench_seed001_executors.py R

Per cell (busy loop x topics x echo): the round trip's p50 in ms, the median over the rounds
with the lowest-highest in brackets, and with several topics "last", the median over the rounds
of the slowest topic's p50 (the one a single executor serves last). The check: at every point
what the echo counted itself (the rclpy relay's "relayed N", the rcl pong's echoes) lies between
what the ping got back and what it sent (bench_ros2_tax.consistent); a point that fails is
named and the script exits 1.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from bench_ros2_tax import consistent  # (run as a script: benchmarks/ is on sys.path)
from benchlib import read_result

COLUMNS = (("agent", "single", "rcl pong single"), ("agent", "multi", "rcl pong multi"),
           ("relay", "single", "rclpy single"), ("relay", "multi", "rclpy multi"),
           ("relay", "events", "rclpy events"))


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path, help="the results folder of the run")
    args = ap.parse_args()
    cells: dict[tuple[int, int, str, str], list[tuple[float, float]]] = {}
    bad = checked = 0
    for folder in sorted(args.results.glob("*/points/*")):
        result = read_result((folder / "result.json").read_text())
        if result["status"] != "complete":
            print(f"{folder.name}: {result['status']} ({result['status_reason']})")
            continue
        cfg = result["config"]
        ok, text = consistent(folder)
        checked += 1
        if not ok:
            bad += 1
            print(f"MISMATCH {folder.name}: {text}")
        p50 = result["measurement"]["response"]["p50_ns"] / 1e6
        topics = [t["response"]["p50_ns"] / 1e6 for t in result.get("per_topic") or []]
        key = (cfg["busy_loop_ns"], cfg["topics"], cfg["pong"], cfg["executor"])
        cells.setdefault(key, []).append((p50, max(topics, default=p50)))
    print("| busy | topics | " + " | ".join(name for _, _, name in COLUMNS) + " |")
    print("|---|---|" + "---|" * len(COLUMNS))
    for busy, topics in sorted({(k[0], k[1]) for k in cells}):
        row = []
        for pong, executor, _ in COLUMNS:
            got = cells.get((busy, topics, pong, executor))
            if not got:
                row.append("—")
                continue
            text = spread([p for p, _ in got])
            if topics > 1:
                text += f", last {statistics.median(last for _, last in got):.2f}"
            row.append(text)
        print(f"| {busy / 1e6:g} ms | {topics} | " + " | ".join(row) + " |")
    print(f"\nthe echo's own count in range at {checked - bad} of {checked} points")
    return 1 if bad or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
