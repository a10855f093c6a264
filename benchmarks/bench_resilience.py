#!/usr/bin/env python3
"""Resilience metrics (issue 5) against ground truth: a scheduled outage of L seconds at a fixed
rate R loses R x L messages on a best-effort transport (every message sent while the link is
down); a reliable one retransmits them (lost 0) and shows a recovery time instead. Needs root
and the built mwperf-linkem and mwperf-agent (MWPERF_AGENT / MWPERF_LINKEM).

Each case runs `mwperf run ... --link outage=1500ms+L` --reps times (interleaved); the table gives
every repetition's lost count, the median, the median recovery and the session states.

    python3 benchmarks/bench_resilience.py --reps 5 --write
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import med, read_result, revision, stamp, write_section

ROOT = Path(__file__).resolve().parents[1]
RATE = 1000
OUTAGE_S = 1.0
CASES = (
    ("udp", "roundtrip", ()),
    ("udp", "oneway", ()),
    ("zenoh", "roundtrip", ("--reliability", "best-effort")),
    ("tcp", "roundtrip", ()),
)


def measure(transport: str, mode: str, extra: tuple[str, ...]) -> dict:
    """One run; its resilience.outage section plus the status."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        argv = [sys.executable, "-m", "mwperf", "run", "--transport", transport, "--mode", mode,
                "--rate", str(RATE), "--duration", "4s", "--warmup", "500ms", "--payload", "64",
                "--link", f"outage=1500ms+{OUTAGE_S:g}s", *extra, "--json-out", str(out),
                "--no-save"]
        env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
        subprocess.run(argv, env=env, capture_output=True, text=True, timeout=180, check=False)
        result = read_result(out.read_text())
    outage = (result.get("resilience") or {}).get("outage") or {}
    return {**outage, "status": result["status"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args()
    runs: dict[tuple, list[dict]] = {case: [] for case in CASES}
    for _ in range(args.reps):
        for case in CASES:
            runs[case].append(measure(*case))
    expected = RATE * OUTAGE_S
    lines = [
        (f"Measured {stamp()} at {revision()}, {args.reps} repetitions (interleaved), medians, "
         f"load average {os.getloadavg()[0]:.2f} at the end (2 shared cores)."),
        "", "```", f"python3 benchmarks/bench_resilience.py --reps {args.reps} --write", "```",
        (f"Round trip or one way at {RATE} Hz, 64 B, `--link outage=1500ms+{OUTAGE_S:g}s`; "
         f"ground truth for best-effort: lost = rate x outage = {expected:.0f}."), "",
        ("| transport | mode | sent in window (median) | lost (each rep) | lost (median) | "
         "lost / (rate x outage) | recovery (median) | session |"),
        "|---|---|---|---|---|---|---|---|"]
    for (transport, mode, extra), rs in runs.items():
        lost = [r.get("lost") for r in rs]
        sessions = sorted({str(r.get("session")) for r in rs})
        name = transport + (" " + " ".join(extra) if extra else "")
        recovery = med(r.get("recovery_ns") for r in rs)
        lines.append(
            f"| {name} | {mode} | {med(r.get('sent') for r in rs):.0f} | "
            f"{', '.join(str(x) for x in lost)} | {med(lost):.0f} | "
            f"{med(lost) / expected:.3f} | {recovery / 1e6:.1f} ms | {', '.join(sessions)} |")
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section("resilience", text)


if __name__ == "__main__":
    main()
