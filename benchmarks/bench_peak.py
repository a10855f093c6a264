#!/usr/bin/env python3
"""The peak-rate search against the same stream at fixed rates (BENCHMARKS.md, "Peak-rate
search"): does the peak the search reports agree with the curve a user would walk by hand?

    python3 benchmarks/bench_peak.py [--walks 3] [--reps 3] [-- MWPERF RUN FLAGS...]

1. ``mwperf run FLAGS --peak-search --peak-repeat WALKS`` (default flags: udp with the pong's
   callback spinning 4 ms, so no rate above 250 Hz can be kept: injected ground truth);
2. the same stream at 0.8, 0.9, 1.0, 1.1 and 1.2 x the peak found, REPS rounds interleaved
   (every rate once per round), each point judged by the search's own verdict (mwperf.peak);
3. prints the table: per rate how many rounds passed, the p99 and loss medians, and the
   injected capacity when the default flags were used.

The curve agrees when the rates at or below the peak pass in most rounds and those 10 % or more
above fail in most rounds. Each point is saved under /tmp/bench-peak/.
"""

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from benchlib import read_result  # (run as a script: benchmarks/ is on sys.path)

DEFAULT = ["--transport", "udp", "--busy-loop", "4ms", "--duration", "2s", "--warmup",
           "300ms", "--peak-range", "20..2000"]
CAPACITY_HZ = 250.0
"""what the default flags allow at most: one 4 ms callback after another"""
FACTORS = (0.8, 0.9, 1.0, 1.1, 1.2)
RESULTS = Path("/tmp/bench-peak")


def mwperf(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mwperf", "run", *args], capture_output=True,
                          text=True, check=False)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--walks", type=int, default=3)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("flags", nargs="*")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
    from mwperf.peak.verdict import point_trial

    flags = args.flags or DEFAULT
    done = mwperf(*flags, "--peak-search", "--peak-repeat", str(args.walks),
                  "--results", str(RESULTS))
    print(done.stdout)
    peak_file = sorted(RESULTS.glob("*-peak-*/peak.json"))[-1]
    peak = json.loads(peak_file.read_text())["peak"]
    if peak is None:
        print("no peak found: nothing to compare", file=sys.stderr)
        return 1
    fixed = [f for f in flags if f not in ("--peak-range",) and not f.count("..")]
    rows: dict[float, list] = {f: [] for f in FACTORS}
    for _ in range(args.reps):  # interleaved: every rate once per round
        for factor in FACTORS:
            rate = f"{peak * factor:.6g}"
            run = mwperf(*fixed, "--rate", rate, "--json", "--no-save")
            result = read_result(run.stdout)
            rows[factor].append(point_trial(float(rate), result, 1.0, None))
    print(f"peak found: {peak:.4g} Hz ({args.walks} walks)"
          + (f"; injected capacity {CAPACITY_HZ:g} Hz" if not args.flags else ""))
    print("| rate | x peak | passed | p99 median | loss median |")
    print("|---|---|---|---|---|")
    for factor, trials in rows.items():
        p99 = statistics.median(t.figures.get("p99_ns") or 0 for t in trials) / 1e6
        loss = statistics.median(t.figures.get("loss_percent") or 0 for t in trials)
        print(f"| {peak * factor:.4g} Hz | {factor:g} | {sum(t.passed for t in trials)}/"
              f"{len(trials)} | {p99:.2f} ms | {loss:.2f} % |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
