#!/usr/bin/env python3
"""One way across two clocks (issue 12): --clock-sync against injected ground truth.

Emulated hosts (root) whose agents run in a time namespace with a known CLOCK_MONOTONIC offset
and a known drift (mwperf's test-only --test-clock); the result's measurement.clock_sync holds
the estimate and test_truth the injected values. Prints one JSON line per run.

    python3 benchmarks/bench_clocksync.py --reps 3
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import measurement_of, read_result  # (run as a script: benchmarks/ is on sys.path)

CASES = {
    "symmetric": ["--duration", "12s", "--link", "delay=5ms",
                  "--test-clock", "b=1000,30;a=0,-10"],
    "asymmetric": ["--duration", "4s", "--link", "up:delay=1ms,down:delay=9ms",
                   "--test-clock", "b=500"],
    "loopback": ["--duration", "4s"],
}


def one(case: str, out: Path) -> dict:
    subprocess.run([sys.executable, "-m", "mwperf.cli", "run", "--transport", "udp", "--mode",
                    "oneway", "--payload", "64", "--rate", "200", *CASES[case], "--clock-sync",
                    "--no-save", "--json-out", str(out)], capture_output=True, check=False)
    m = measurement_of(read_result(out.read_text()))
    cs = m["clock_sync"]
    truth = cs.get("test_truth") or {"offset_ns": 0, "drift_ppm": 0.0}
    return {"case": case, "true_offset_ns": truth["offset_ns"], "offset_error_us":
            (cs["offset_ns"] - truth["offset_ns"]) / 1e3, "true_drift_ppm": truth["drift_ppm"],
            "drift_ppm": cs["drift_ppm"], "bound_us": cs["error_bound_ns"] / 1e3,
            "min_rtt_us": cs["min_rtt_ns"] / 1e3, "residual_us": cs["fit_residual_ns"] / 1e3,
            "within_bound": abs(cs["offset_ns"] - truth["offset_ns"]) <= cs["error_bound_ns"],
            "p50_us": m["service"]["p50_ns"] / 1e3, "raw_p50_us": cs["raw_p50_ns"] / 1e3}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            for _ in range(args.reps):
                print(json.dumps(one(case, Path(tmp) / "r.json")), flush=True)


if __name__ == "__main__":
    main()
