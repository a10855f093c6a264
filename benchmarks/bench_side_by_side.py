#!/usr/bin/env python3
"""The side-by-side table: every transport built into the agent × payloads {Struct256, Array1k,
Array64k, PointCloud512k} × rates {100 Hz, 1 kHz, max}, round trip, as `mwperf run default` (the
README's main command) measures it. With --write the suite's own markdown summary replaces the
text between the bench:side-by-side markers in BENCHMARKS.md, with the command and the date.

One suite run measures each point once (1 s after 0.3 s warm-up); it is a comparison of
transports under identical conditions in one run, not a ratio against a reference tool.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import revision, stamp, write_section  # noqa: E402  (run as a script: benchmarks/ is on sys.path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the suite's --quick variant (0.3 s points)")
    ap.add_argument("--write", action="store_true", help="update BENCHMARKS.md between the bench:side-by-side markers")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="mwperf-sbs-") as tmp:
        cmd = [sys.executable, "-m", "mwperf.cli", "run", "default", "--results", tmp] + (["--quick"] if a.quick else [])
        done = subprocess.run(cmd, text=True, capture_output=True, env=os.environ)
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
        summaries = list(Path(tmp).rglob("summary.md"))
        if not summaries:
            sys.exit(f"bench: the suite wrote no summary (exit {done.returncode})")
        summary = summaries[0].read_text()  # "# default", the table, then the analysis
        table = summary[summary.index("| "):].strip()
    rev = revision()
    when = stamp()
    text = "\n".join([
        f"Measured {when} at {rev} (suite exit code {done.returncode}): "
        f"`python3 benchmarks/bench_side_by_side.py{' --quick' if a.quick else ''} --write`, which runs "
        f"`mwperf run default{' --quick' if a.quick else ''}` (what `make run` runs). One run per point; default QoS "
        "(reliable, keep-last 10, volatile) for every transport; sleeping receivers (no --busy-poll).",
        "",
        table,
    ])
    if a.write:
        write_section("side-by-side", text)


if __name__ == "__main__":
    main()
