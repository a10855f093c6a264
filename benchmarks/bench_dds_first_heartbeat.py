#!/usr/bin/env python3
"""How often a Cyclone DDS reader loses a sample to the first heartbeat of a Fast DDS writer.

A Cyclone DDS reader starts a volatile reader at the last sequence number of the first heartbeat
it accepts from a non-Cyclone writer. If that heartbeat arrives between two fragments of a large
sample, the partial sample is discarded and the reader's ACK covers it, so the writer never
resends it: a reliable reader loses it for good (docs/transports.md, "first heartbeat"). Fast DDS
sends its first heartbeat that Cyclone accepts either on its period (3 s by default) or
piggybacked after a send buffer's worth of data, so in the interop test's sequence (0 B to 200 kB,
sent as soon as the first echo came back) it lands inside a 200 kB sample in about half the runs.

This runs the interop test's measurement (crates/mwperf-transports/tests/transports/dds_interop.rs,
`first_heartbeat_loss`, ignored by `cargo test`): ROUNDS fresh pairs per cell, for both pairs
with a Fast DDS writer and a Cyclone DDS reader, with Fast DDS's default heartbeat period and
with `--opt heartbeat=100ms`. Ground truth: the sequence numbers the ping sent; a message counts
lost when its echo has not come within 4 s (past Fast DDS's 3 s heartbeat, which repairs a
fragment lost on the way).

    python3 benchmarks/bench_dds_first_heartbeat.py --rounds 20 --write
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

from benchlib import revision, stamp, write_section  # noqa: E402  (run as a script)

ROOT = Path(__file__).resolve().parents[1]
LINE = re.compile(r"^first-heartbeat (\w+)->(\w+) heartbeat=(\S+) lost (\d+) of (\d+) ?(.*)$")
NAMES = {"CycloneDds": "cyclonedds", "FastDds": "fastdds"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=20, help="fresh pairs per cell (default 20)")
    ap.add_argument("--write", action="store_true", help="write the table into BENCHMARKS.md")
    a = ap.parse_args()
    if a.rounds < 1:
        sys.exit("bench: --rounds must be at least 1")
    cmd = ["cargo", "test", "--release", "--quiet", "-p", "mwperf-transports",
           "--test", "transports", "--", "--ignored", "--nocapture", "first_heartbeat_loss"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "ROUNDS": str(a.rounds)}, timeout=60 * a.rounds + 600)
    cells = [m for m in map(LINE.match, done.stdout.splitlines()) if m]
    if done.returncode != 0 or len(cells) != 4:
        sys.exit(f"bench: the measurement did not run ({' '.join(cmd)}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    rows = []
    for m in cells:
        ping, pong, heartbeat, lost, n, first = m.groups()
        period = "Fast DDS default (3 s)" if heartbeat == "default" else heartbeat
        where = re.search(r"seq (\d+) \((\d+) B\)", first)
        at = f"seq {where[1]} ({int(where[2]) // 1000} kB)" if where else "—"
        writer = "fastdds pong's echo" if pong == "FastDds" else "fastdds ping"
        rows.append(f"| {NAMES[ping]} ping → {NAMES[pong]} pong ({writer} → cyclonedds) | {period} "
                    f"| **{lost} of {n}** | {at} |")
        print(rows[-1], file=sys.stderr)
    text = "\n".join([
        f"Measured {stamp()} at {revision()}, {a.rounds} fresh pairs per cell; each pair: first contact, then 70 "
        "messages cycling 0 B, 1 B, 100 B, 1 kB, 8 kB, 60 kB, 200 kB, one at a time (the interop test's sequence); "
        "reliable keep-last 1000, UDP on 127.0.0.1.",
        "",
        "| pair (the direction that loses) | Fast DDS writer heartbeat period | runs that lost a sample | first lost |",
        "|---|---|---|---|",
        *rows,
        "",
        "```",
        f"python3 benchmarks/bench_dds_first_heartbeat.py --rounds {a.rounds} --write",
        "# runs: ROUNDS=N cargo test --release -p mwperf-transports --test transports -- --ignored --nocapture first_heartbeat_loss",
        "```",
    ])
    print(text)
    if a.write:
        write_section("dds-first-heartbeat", text)


if __name__ == "__main__":
    main()
