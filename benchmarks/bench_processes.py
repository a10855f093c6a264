"""What the middleware's in-process path gives (issue 38, graph files' `process:`): a talker and
a listener in one process (one middleware session) beside a second listener in a process of its
own, both on the talker's one topic, against the same graph with every node a process of its
own (`--processes per-node`), in interleaved repetitions (the order flips each repetition).

    python3 benchmarks/bench_processes.py --reps 5 --seconds 5 [--rate 1000] [--write]

Per transport: each edge's p50 and p99 (the listener's receive - the talker's send, one
machine's clock), the in-process edge's p50 over the apart edge's of the same run (the same
messages, sent once by one publisher) and over the same edge's when its listener ran apart (the
per-node run of the same repetition); the agents' CPU per message (every process's once) and
their summed peak RSS. Checked in every run, independently of the edges' own counts: each edge
received every message the talker counted sending, and the control plane's /proc sampling saw
2 processes with `process:` and 3 without."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import (ROOT, interleaved_parser, listed, med, read_result, revision, stamp,
                      write_section)

TRANSPORTS = ("udp", "cyclonedds", "fastdds", "zenoh", "iceoryx2")
MODES = ("file", "per-node")
GRAPH = """nodes:
  - {{name: talker, process: robot, publishers: [{{topic: /t, rate: {rate}, payload: 256}}]}}
  - {{name: near, process: robot, subscribers: [{{topic: /t}}]}}
  - {{name: far, subscribers: [{{topic: /t}}]}}
"""
PROBLEMS: list[str] = []


def run(graph: Path, transport: str, mode: str, seconds: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    done = subprocess.run([sys.executable, "-m", "mwperf.cli", "run", "--graph", str(graph),
                           "--transport", transport, "--processes", mode, "--duration",
                           f"{seconds}s", "--warmup", "1s", "--depth", "1000", "--no-save",
                           "--json"], capture_output=True, text=True, env=env, timeout=300,
                          check=False)
    if not done.stdout.strip():
        sys.exit(f"bench_processes: {transport} {mode}: exit {done.returncode}: "
                 f"{done.stderr.strip()[-300:]}")
    result = read_result(done.stdout)
    if result["status"] != "complete":
        PROBLEMS.append(f"{transport} {mode}: {result['status']}: {result['status_reason']}")
    nodes = {n["name"]: n for n in result["nodes"]}
    sent = nodes["talker"]["sent"]["/t"]
    edges = {e["to"]: e for e in result["edges"]}
    for name, edge in edges.items():
        if edge["received"] != sent:
            PROBLEMS.append(f"{transport} {mode}: {name} received {edge['received']} of {sent}")
    processes = result["resources"]["processes"]
    if len(processes) != (2 if mode == "file" else 3):
        PROBLEMS.append(f"{transport} {mode}: {len(processes)} processes sampled")
    once = {n.get("process") or n["name"]: n for n in result["nodes"]}.values()
    cpu = sum(n["cpu_s"] for n in once)
    return {"near_p50": edges["near"]["latency"]["p50_ns"] / 1e3,
            "near_p99": edges["near"]["latency"]["p99_ns"] / 1e3,
            "far_p50": edges["far"]["latency"]["p50_ns"] / 1e3,
            "far_p99": edges["far"]["latency"]["p99_ns"] / 1e3,
            "cpu_us": cpu / sent * 1e6 if sent else float("nan"),
            "rss_mib": sum(n["max_rss_kib"] for n in once) / 1024}


def cell(xs: list[float], fmt: str = ",.1f") -> str:
    return f"{format(med(xs), fmt)} ({format(min(xs), fmt)}-{format(max(xs), fmt)})" if xs \
        else "-"


def main() -> None:
    parser = interleaved_parser(__doc__, 5, TRANSPORTS)
    parser.add_argument("--rate", type=int, default=1000)
    args = parser.parse_args()
    transports = listed(args.transports)
    figures: dict[tuple[str, str, str], list[float]] = {}
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        graph = Path(tmp) / "pair.yaml"
        graph.write_text(GRAPH.format(rate=args.rate))
        for rep in range(args.reps):
            order = MODES if rep % 2 == 0 else tuple(reversed(MODES))
            for transport in transports:
                for mode in order:
                    for key, value in run(graph, transport, mode, args.seconds).items():
                        figures.setdefault((transport, mode, key), []).append(value)
            print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr)
    load_end = os.getloadavg()

    def ratios(a: tuple[str, str, str], b: tuple[str, str, str]) -> str:
        pairs = [x / y for x, y in zip(figures[a], figures[b]) if y]
        return cell(pairs, ".2f")

    lines = [f"Measured {stamp()} at {revision()} (`python3 benchmarks/bench_processes.py "
             f"--reps {args.reps} --seconds {args.seconds} --rate {args.rate}`), 256 B at "
             f"{args.rate} Hz from one talker to two listeners, medians of {args.reps} "
             "interleaved repetitions (min-max; a ratio per repetition, then its median); load "
             f"average {load[0]:.2f} at the start, {load_end[0]:.2f} at the end (2 CPUs). "
             "`near` shares the talker's process with `process:`, `far` never does:", "",
             "| transport | near p50 µs, in process | far p50 µs, same run | in/apart, same run "
             "| near p50 µs, apart (per-node run) | in process / apart run | near p99 µs in / "
             "apart | CPU µs/msg in / apart | RSS MiB in / apart |",
             "|---|---|---|---|---|---|---|---|---|"]
    for t in transports:
        f = figures
        lines.append(
            f"| {t} | {cell(f[(t, 'file', 'near_p50')])} | {cell(f[(t, 'file', 'far_p50')])} | "
            f"{ratios((t, 'file', 'near_p50'), (t, 'file', 'far_p50'))} | "
            f"{cell(f[(t, 'per-node', 'near_p50')])} | "
            f"{ratios((t, 'file', 'near_p50'), (t, 'per-node', 'near_p50'))} | "
            f"{med(f[(t, 'file', 'near_p99')]):,.0f} / {med(f[(t, 'per-node', 'near_p99')]):,.0f} | "
            f"{med(f[(t, 'file', 'cpu_us')]):.1f} / {med(f[(t, 'per-node', 'cpu_us')]):.1f} | "
            f"{med(f[(t, 'file', 'rss_mib')]):.1f} / {med(f[(t, 'per-node', 'rss_mib')]):.1f} |")
    lines += ["", "Checks, every run: each edge received every message the talker counted "
              "sending; the control plane sampled 2 processes with `process:`, 3 without. "
              "Problems: " + ("; ".join(PROBLEMS) if PROBLEMS else "none") + "."]
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section("processes", text)


if __name__ == "__main__":
    main()
