#!/usr/bin/env python3
"""A bridge inside a graph (docs/bridges.md "On graphs"): the two-sides graph (tests/
bridged_graph.py: /state 100 Hz 256 B robot (a) -> base (b) and -> local (a), /cmd 50 Hz 64 B
base -> robot) over mqtt through mosquitto's bridge and direct, on loopback, interleaved
repetitions (direct, bridge, then the same topic as a one-way stream through each: the check
that what a crossing edge shows is the bridge's and not the graph's). Per edge: p50 and p99
(medians over repetitions, min-max), the added p50 (median of bridge minus direct in the same
repetition), and every edge's count against its publisher's.

Usage: python3 benchmarks/bench_graph_bridge.py [--reps 3] [--seconds 5] [--write]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import med, read_result, revision, spread, stamp, write_section  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
from bridged_graph import TWO_SIDES  # noqa: E402

BRIDGES = ("direct", "mqtt-bridge")
EDGES = (("/state", "robot", "base"), ("/cmd", "base", "robot"), ("/state", "robot", "local"))
CROSSING = EDGES[:2]


def mwperf(*args: str) -> dict | None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    done = subprocess.run([sys.executable, "-m", "mwperf.cli", "run", *args, "--no-save",
                           "--json"], capture_output=True, text=True, env=env, check=False)
    try:
        return read_result(done.stdout)
    except ValueError:
        print(f"  {args}: exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}",
              file=sys.stderr)
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    graph = Path(tempfile.mkdtemp()) / "two-sides.yaml"
    graph.write_text(TWO_SIDES)
    common = ("--transport", "mqtt", "--duration", f"{args.seconds}s", "--warmup", "1s")
    p50: dict[tuple, list[float]] = {}
    p99: dict[tuple, list[float]] = {}
    whole = []
    for rep in range(args.reps):
        for bridge in BRIDGES:
            result = mwperf("--graph", str(graph), "--bridge", bridge, *common)
            edges = {(e["topic"], e["from"], e["to"]): e for e in (result or {}).get("edges", [])}
            for key in EDGES:
                edge = edges.get(key)
                if edge and edge.get("latency"):
                    p50.setdefault((bridge, key), []).append(edge["latency"]["p50_ns"])
                    p99.setdefault((bridge, key), []).append(edge["latency"]["p99_ns"])
                    whole.append(edge["received"] == edge["sent"])
            stream = mwperf("--bridge", bridge, "--mode", "oneway", "--rate", "100",
                            "--payload", "256", *common)
            response = ((stream or {}).get("measurement") or {}).get("service") or {}
            if response:
                p50.setdefault((bridge, "stream"), []).append(response["p50_ns"])
                p99.setdefault((bridge, "stream"), []).append(response["p99_ns"])
            print(f"  rep {rep + 1} {bridge}: "
                  + ", ".join(f"{k[0]} {k[2]} {p50.get((bridge, k), [None])[-1]}"
                              for k in EDGES), file=sys.stderr)
    load = os.getloadavg()[0]
    rows = ["| edge | direct p50 (min-max) | mqtt-bridge p50 (min-max) | added p50 | direct p99 | "
            "mqtt-bridge p99 |", "|---|---|---|---|---|---|"]
    for key in (*EDGES, "stream"):
        name = ("/state one-way stream, 100 Hz 256 B (the check)" if key == "stream"
                else f"{key[0]} {key[1]} -> {key[2]}" + (" (crosses)" if key in CROSSING
                                                          else " (side a only)"))
        direct, bridged = p50.get(("direct", key), []), p50.get(("mqtt-bridge", key), [])
        added = med(b - d for b, d in zip(bridged, direct))
        rows.append(f"| {name} | {med(direct) / 1e3:,.0f} µs ({spread([x / 1e3 for x in direct])}"
                    f") | {med(bridged) / 1e3:,.0f} µs ({spread([x / 1e3 for x in bridged])}) | "
                    f"{added / 1e3:+,.0f} µs | {med(p99.get(('direct', key), [])) / 1e3:,.0f} µs | "
                    f"{med(p99.get(('mqtt-bridge', key), [])) / 1e3:,.0f} µs |")
    text = "\n".join([
        f"Measured {stamp()} at {revision()}; 2 shared cores, load average {load:.1f} at the end "
        f"({args.reps} interleaved repetitions, {args.seconds:g} s after 1 s warm-up, loopback; "
        "medians, min-max in brackets).", "", *rows, "",
        f"Every edge received what its publisher sent: {sum(whole)} of {len(whole)} edge runs "
        "(the publisher's own count)."])
    print(text)
    if args.write:
        write_section("graph-bridge", text)


if __name__ == "__main__":
    main()
