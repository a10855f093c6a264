"""What the build profile costs the agent: the release profile of `make build` (no cross-crate
LTO since issue 37: one profile for the agent, the tests and clippy) against an agent built with
thin LTO (the profile before), measured in the same run, interleaved: udp throughput (64 B
payload, as fast as it goes, delivered messages/s) and the udp round trip at 1 kHz (p50, p99).

    cargo build --release                                        # the agent measured
    # the reference: the same commit with `lto = "thin"` in [profile.release], its
    # target/release/mwperf-agent copied aside, e.g. to /tmp/mwperf-agent-thinlto
    python3 benchmarks/bench_build_profile.py --reference /tmp/mwperf-agent-thinlto \
        --reps 5 [--write]

Medians of interleaved repetitions with their spread (min-max); ratios are this build's figure
over the reference's (throughput: > 1 is faster; latency: < 1 is faster). Checked against: the
reference binary in the same run (same machine, same conditions, alternating order)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from benchlib import (ROOT, measurement_of, med, read_result, revision, spread, stamp,
                      write_section)

sys.path.insert(0, str(ROOT / "python"))
from mwperf.agent import built_agent  # noqa: E402

CASES = {
    "throughput": ["--transport", "udp", "--mode", "throughput", "--payload", "64",
                   "--duration", "3s"],
    "roundtrip": ["--transport", "udp", "--rate", "1000", "--payload", "Array64", "--duration",
                  "3s"],
}


def measure(agent: Path, case: str) -> dict[str, float]:
    env = {**os.environ, "MWPERF_AGENT": str(agent), "PYTHONPATH": str(ROOT / "python")}
    done = subprocess.run([sys.executable, "-m", "mwperf.cli", "run", *CASES[case], "--no-save",
                           "--json"], capture_output=True, text=True, env=env, timeout=120,
                          check=False)
    if done.returncode != 0:
        sys.exit(f"bench_build_profile: {agent} {case}: exit {done.returncode}: "
                 f"{done.stderr.strip()[-300:]}")
    m = measurement_of(read_result(done.stdout))
    if case == "throughput":
        return {"msgs_per_s": m["throughput"]["msgs_per_s"]}
    stats = m["response"]
    return {"p50_us": stats["p50_ns"] / 1e3, "p99_us": stats["p99_ns"] / 1e3}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", required=True, type=Path,
                        help="the agent built with the other profile (thin LTO)")
    parser.add_argument("--agent", type=Path, default=built_agent(),
                        help="the agent measured (default: this checkout's release build)")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="write BENCHMARKS.md's section")
    args = parser.parse_args()
    for path in (args.agent, args.reference):
        if not os.access(path, os.X_OK):
            sys.exit(f"bench_build_profile: {path}: no executable agent there")
    figures: dict[tuple[str, str], list[float]] = {}
    for rep in range(args.reps):
        order = [("this", args.agent), ("reference", args.reference)]
        for who, agent in order if rep % 2 == 0 else order[::-1]:
            for case in CASES:
                for key, value in measure(agent, case).items():
                    figures.setdefault((who, key), []).append(value)
        print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr)
    lines = [f"Measured {stamp()} at {revision()} (`python3 benchmarks/bench_build_profile.py "
             f"--reference <thin-LTO agent> --reps {args.reps}`), medians of {args.reps} "
             "interleaved repetitions (min-max):", "",
             "| figure | release, no LTO (this) | thin LTO (reference) | ratio |",
             "|---|---|---|---|"]
    for key, label in (("msgs_per_s", "udp throughput, 64 B, msgs/s"),
                       ("p50_us", "udp round trip 1 kHz p50, µs"),
                       ("p99_us", "udp round trip 1 kHz p99, µs")):
        this, ref = figures[("this", key)], figures[("reference", key)]
        lines.append(f"| {label} | {med(this):,.1f} ({spread(this)}) | {med(ref):,.1f} "
                     f"({spread(ref)}) | {med(this) / med(ref):.3f} |")
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section("build-profile", text)


if __name__ == "__main__":
    main()
