#!/usr/bin/env python3
"""Latency under load (issue 26): the built-in graph `under-load` (/ping 64 B at 100 Hz beside
/load 1 MiB at `rate: max` on the same transport) with `--baseline /ping`, so every run measures
the ping alone and then under load. Interleaved repetitions per transport; medians and spread
of the ping's p50/p99 alone and under load, and of what the load delivered. --write updates the
"under-load" section of BENCHMARKS.md.

    python3 benchmarks/bench_under_load.py --reps 3 --seconds 5 --write
"""

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import median

from benchlib import find_agent, read_result, revision, stamp, write_section

ROOT = Path(__file__).resolve().parent.parent
TRANSPORTS = "cyclonedds,zenoh,tcp"


def run(agent: Path, transport: str, seconds: float) -> dict:
    """One graph run: the ping's p50/p99 alone and under load, the load's delivery."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python"), "MWPERF_AGENT": str(agent)}
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "graph.json"
        cmd = [sys.executable, "-m", "mwperf.cli", "run", "--graph", "under-load", "--transport",
               transport, "--baseline", "/ping", "--duration", f"{seconds:g}s", "--no-save",
               "--json-out", str(out)]
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600,
                              check=False)
        if not out.is_file():
            return {"error": (done.stderr.strip().splitlines() or ["no result"])[-1]}
        result = read_result(out.read_text())
    [ping] = [e for e in result["baseline"]["edges"] if e["topic"] == "/ping"]
    [load] = [e for e in result["edges"] if e["topic"] == "/load"]
    if not ping["alone"] or not ping["in_graph"]:
        return {"error": f"no ping samples ({result['status_reason']})"}
    return {"alone_p50": ping["alone"]["p50_ns"], "alone_p99": ping["alone"]["p99_ns"],
            "load_p50": ping["in_graph"]["p50_ns"], "load_p99": ping["in_graph"]["p99_ns"],
            "load_msgs": load["achieved_per_s"] or 0.0,
            "load_mb": (load["payload_bytes_per_s"] or 0.0) / 1e6, "load_lost": load["lost"]}


def spread(values: list[float], unit: float, digits: int = 0) -> str:
    """median [min..max] in `unit`."""
    v = [x / unit for x in values]
    return f"{median(v):.{digits}f} [{min(v):.{digits}f}..{max(v):.{digits}f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--transports", default=TRANSPORTS)
    ap.add_argument("--agent")
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    agent = find_agent(a.agent, "bench_under_load")
    transports = a.transports.split(",")
    runs: dict[str, list[dict]] = {t: [] for t in transports}
    for i in range(a.reps):
        for t in (transports if i % 2 == 0 else transports[::-1]):
            r = run(agent, t, a.seconds)
            runs[t].append(r)
            print(f"{t} rep {i + 1}/{a.reps}: {r}", file=sys.stderr)
    lines = ["| transport | ping p50 alone | ping p50 under load | ping p99 alone | ping p99 under load "
             "| load delivered msgs/s | load MB/s | load lost |",
             "|---|---|---|---|---|---|---|---|"]
    notes = []
    for t in transports:
        good = [r for r in runs[t] if "error" not in r]
        notes += [f"{t}: {r['error']}" for r in runs[t] if "error" in r]
        if not good:
            continue
        col = {k: [r[k] for r in good] for k in good[0]}
        lines.append(f"| {t} | {spread(col['alone_p50'], 1e3)} µs | {spread(col['load_p50'], 1e3)} µs "
                     f"| {spread(col['alone_p99'], 1e3)} µs | {spread(col['load_p99'], 1e3)} µs "
                     f"| {spread(col['load_msgs'], 1)} | {spread(col['load_mb'], 1)} "
                     f"| {', '.join(str(x) for x in col['load_lost'])} |")
    text = "\n".join([
        f"Measured {stamp()} at {revision()}: `python3 benchmarks/bench_under_load.py --reps {a.reps} "
        f"--seconds {a.seconds:g}`: the built-in graph `under-load` with `--baseline /ping` "
        f"({a.reps} runs per transport, transports interleaved); medians [min..max] over the runs. "
        "Alone = the /ping nodes only, the same run, just before; under load = beside /load "
        "(1 MiB, `rate: max`, reliable keep-all).", "", *lines, "",
        *(f"- {n}" for n in notes)])
    print(text)
    if a.write:
        write_section("under-load", text)


if __name__ == "__main__":
    main()
