#!/usr/bin/env python3
"""A chain's middle node as mwperf's rcl agent vs a real rclpy node (single- and
multi-threaded executor): BENCHMARKS.md, "A chain's middle node: rcl agent vs rclpy".

    python3 benchmarks/bench_rclpy_chain.py --rounds 5 --duration 5s

source (agent) --/a--> middle --/b--> sink (agent), 100 Hz, 256 B, on --transport ros2
(managed Kilted, rmw_fastrtps_cpp); the middle node is a chain stage with no work of its own
(``client: agent``, or ``client: rclpy`` with ``executor: single | multi``). The three variants
run interleaved, round after round, so the machine's load falls on each alike. Per variant the
median over the rounds (lowest-highest) of: /a's p50 (source -> the middle's callback start),
the stage's p50 (callback start -> its publish), /b's p50 (its publish -> the sink's callback),
the chain's p50 and p99 end to end, the middle node's CPU. Checked per run against the other
program's own count: /b's
sent (the middle's own count of what it forwarded) equals what its callbacks took of /a (its
log, summarised by the agent's collectors); a run where they disagree is named and the script
exits 1. Messages lost on /a or /b (a reader's keep-last history overflowing while its node was
starved) are counted, not hidden.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import read_result  # (run as a script: benchmarks/ is on sys.path)

GRAPH = """name: chain-middle
nodes:
  - name: source
    publishers: [{topic: /a, rate: 100, payload: 256}]
  - name: middle
    client: %s
    executor: %s
    subscribers: [{topic: /a, publish: /b}]
  - name: sink
    subscribers: [{topic: /b}]
chains:
  a_to_b: [/a, /b]
"""
VARIANTS = {"rcl agent": ("agent", "single"), "rclpy single": ("rclpy", "single"),
            "rclpy multi": ("rclpy", "multi")}


def one(folder: Path, variant: str, duration: str) -> dict[str, float]:
    path = folder / f"{variant.replace(' ', '_')}.yaml"
    path.write_text(GRAPH % VARIANTS[variant])
    out = folder / "r.json"
    done = subprocess.run([sys.executable, "-m", "mwperf.cli", "run", "--graph", str(path),
                           "--transport", "ros2", "--duration", duration, "--warmup", "300ms",
                           "--no-save", "--json-out", str(out)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{variant}: exit {done.returncode}: {done.stderr.strip()[-400:]}")
    r = read_result(out.read_text())
    edges = {e["topic"]: e for e in r["edges"]}
    if edges["/a"]["received"] != edges["/b"]["sent"]:
        raise SystemExit(f"{variant}: the middle's log has {edges['/a']['received']} messages "
                         f"of /a but it counted {edges['/b']['sent']} forwarded")
    [chain] = r["chains"]
    middle = next(n for n in r["nodes"] if n["name"] == "middle")
    return {"a_p50": chain["hops"][0]["latency_p50_ns"], "stage_p50": chain["hops"][1]
            ["stage_p50_ns"], "b_p50": chain["hops"][1]["latency_p50_ns"],
            "e2e_p50": chain["end_to_end"]["p50_ns"], "e2e_p99": chain["end_to_end"]["p99_ns"],
            "cpu": middle["cpu_percent"], "messages": edges["/a"]["sent"],
            "lost": edges["/a"]["lost"] + edges["/b"]["lost"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--duration", default="5s")
    args = ap.parse_args()
    runs: dict[str, list[dict[str, float]]] = {v: [] for v in VARIANTS}
    with tempfile.TemporaryDirectory() as scratch:
        for r in range(args.rounds):
            for variant in VARIANTS:
                runs[variant].append(one(Path(scratch), variant, args.duration))
                print(f"round {r + 1} {variant}: {runs[variant][-1]}", file=sys.stderr)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    print("| middle node | /a p50 | stage p50 | /b p50 | chain p50 | chain p99 | middle CPU |"
          " lost / sent |")
    print("|---|---|---|---|---|---|---|---|")
    for variant, rows in runs.items():
        def cell(key: str, scale: float = 1e3, unit: str = " µs",
                 rows: list[dict[str, float]] = rows) -> str:
            values = [row[key] / scale for row in rows]
            return (f"{statistics.median(values):.0f}{unit} ({min(values):.0f}–"
                    f"{max(values):.0f})")
        print(f"| {variant} | {cell('a_p50')} | {cell('stage_p50')} | {cell('b_p50')} | "
              f"{cell('e2e_p50')} | {cell('e2e_p99', 1e6, ' ms')} | "
              f"{cell('cpu', 1, ' %')} | {sum(row['lost'] for row in rows)} / "
              f"{sum(row['messages'] for row in rows)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
