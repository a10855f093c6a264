#!/usr/bin/env python3
"""Harness overhead per point of a sweep: a 50-point loopback scenario (udp, tcp, uds; 0.2 s
points, no warm-up) run with `mwperf run`, several times. A point's overhead is its wall time in
mwperf (sweep.json's ``wall_s``: validation, agent start-up, first contact, teardown, saving the
folder, cataloguing it) minus its measured duration. The reference, measured in the same run:
the same point run by hand with the bare agents (pong started, READY read, ping for 0.2 s, pong
stopped) — what any harness pays for two processes and first contact. With --write the figures
replace the text between the bench:sweep markers in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import med, revision, stamp, stop, write_section  # noqa: E402  (run as a script: benchmarks/ is on sys.path)

REPO = Path(__file__).resolve().parent.parent
TRANSPORTS = ("udp", "tcp", "uds")
RATES = [100 * k for k in range(1, 18)]  # 3 x 17 = 51 points, one excluded: 50


def scenario(duration: str) -> str:
    """The 50-point sweep."""
    return (f"description: harness overhead (bench_sweep.py)\ntransport: [{', '.join(TRANSPORTS)}]\n"
            f"rate: [{', '.join(map(str, RATES))}]\nexclude: [{{transport: uds, rate: {RATES[-1]}}}]\n"
            f"payload: Array64\nduration: {duration}\nwarmup: 0s\n")


def sweep_run(folder: Path, duration_s: float, duration: str) -> tuple[list[float], float]:
    """One `mwperf run` of the scenario: each point's overhead (s) and the whole run's wall."""
    (folder / "bench.yaml").write_text(scenario(duration))
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mwperf.cli", "run", str(folder / "bench.yaml"),
                           "--results", str(folder / "r")], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO / "python")))
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"bench: mwperf run failed ({done.returncode}): {done.stderr[-2000:]}")
    (manifest,) = (folder / "r").glob("*/sweep.json")
    entries = json.loads(manifest.read_text())["entries"]
    assert len(entries) == 50 and all(e["status"] == "complete" for e in entries), entries
    return [e["wall_s"] - duration_s for e in entries], wall


def bare_point(agent: str, transport: str, workdir: Path, duration: str, duration_s: float) -> float:
    """The same point with the bare agents: wall time minus the measured duration."""
    listen = str(workdir / "pong.sock") if transport == "uds" else "127.0.0.1:0"
    started = time.perf_counter()
    pong = subprocess.Popen([agent, "pong", "--transport", transport, "--listen", listen, "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert pong.stdout is not None
        ready = pong.stdout.readline().split()
        subprocess.run([agent, "ping", "--transport", transport, "--connect", ready[2], "--rate",
                        "1000", "--payload", "Array64", "--duration", duration, "--warmup", "0s",
                        "--json", str(workdir / "ping.json"), "--quiet"], check=True,
                       stdout=subprocess.DEVNULL)
    finally:
        stop(pong)
    return time.perf_counter() - started - duration_s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="sweeps (the figures are their medians)")
    ap.add_argument("--duration", default="200ms", help="measured duration of each point")
    ap.add_argument("--write", action="store_true", help="update BENCHMARKS.md (bench:sweep)")
    a = ap.parse_args()
    agent = os.environ.get("MWPERF_AGENT") or str(REPO / "target/release/mwperf-agent")
    duration_s = float(a.duration.removesuffix("ms")) / 1000 if a.duration.endswith("ms") \
        else float(a.duration.removesuffix("s"))
    medians, p90s, walls, bare = [], [], [], []
    for run in range(a.runs):
        with tempfile.TemporaryDirectory(prefix="mwperf-bench-sweep-") as tmp:
            overheads, wall = sweep_run(Path(tmp), duration_s, a.duration)
            overheads.sort()
            medians.append(statistics.median(overheads))
            p90s.append(overheads[int(0.9 * len(overheads))])
            walls.append(wall / 50 - duration_s)
            bare.append(statistics.median(bare_point(agent, t, Path(tmp), a.duration, duration_s)
                                          for t in TRANSPORTS for _ in range(4)))
        print(f"run {run + 1}: per point median {medians[-1]:.3f} s, p90 {p90s[-1]:.3f} s, "
              f"whole run {walls[-1]:.3f} s/point; bare agents {bare[-1]:.3f} s", flush=True)
    rev = revision()
    when = stamp()
    load = os.getloadavg()[0]
    text = "\n".join([
        f"{a.runs} runs of a 50-point loopback sweep (udp/tcp/uds x 100-1700 Hz, Array64, "
        f"{a.duration} points, no warm-up), {when}, rev {rev}, 2 cores shared with other work "
        f"(load average {load:.1f} at the end). Overhead = a point's wall time in mwperf minus "
        f"its measured duration; medians of the runs' figures.",
        "",
        "| | overhead per point |",
        "|---|---|",
        f"| `mwperf run` sweep, median point (sweep.json `wall_s` − duration) | {med(medians):.3f} s |",
        f"| `mwperf run` sweep, p90 point | {med(p90s):.3f} s |",
        f"| `mwperf run` sweep, whole command (incl. start-up, validation, summary) / 50 − duration | {med(walls):.3f} s |",
        f"| reference: bare agents by hand (pong, READY, ping, stop), same run | {med(bare):.3f} s |",
        "",
        f"The issue's budget is ≤ 1 s per point: {'met' if med(walls) <= 1 else 'MISSED'}. "
        "Per run: " + "; ".join(f"{m:.3f} / {p:.3f} / {w:.3f} / {b:.3f} s" for m, p, w, b in
                                zip(medians, p90s, walls, bare)) + " (median / p90 / whole / bare).",
        "",
        "```",
        f"python3 benchmarks/bench_sweep.py --runs {a.runs} --duration {a.duration} --write",
        "```",
    ])
    print(text)
    if a.write:
        write_section("sweep", text)


if __name__ == "__main__":
    main()
