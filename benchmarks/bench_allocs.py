#!/usr/bin/env python3
"""Heap allocations per message (issue 13, `mwperf run --count-allocs`): the ground truth, every
transport's steady-state allocations per message, and what counting costs.

1. Ground truth: a udp ping/pong pair of agents with the counter preloaded, the ping run with the
   test-only `--test-allocs-per-msg 0` and `3`: the ping's allocs/msg must differ by exactly 3.
2. Per transport: `mwperf run --transport T --count-allocs` (round trip, 1 kHz, Struct256,
   --duration S after 0.3 s warm-up): allocs/msg and bytes/msg of the ping and the pong (whole
   processes, C libraries included), their setup allocations and peak live heap.
3. Overhead: udp at 1 kHz, counting on and off interleaved (on, off, on, ...), medians of RTT p50
   over --reps each (goal: on/off <= 1.05).

    python3 benchmarks/bench_allocs.py --reps 7 --seconds 2 --write
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import med, read_result, revision, stamp, write_section  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target") / "release"
AGENT, LIBRARY = TARGET / "mwperf-agent", TARGET / "libmwperf_alloc.so"
TRANSPORTS = ("udp", "tcp", "uds", "cyclonedds", "zenoh", "mqtt", "ros1", "iceoryx2", "rustdds")


def run(tmp: Path, *args: str) -> dict:
    out = tmp / "r.json"
    done = subprocess.run([sys.executable, "-m", "mwperf", "run", "--rate", "1000", "--payload",
                           "Struct256", "--warmup", "0.3s", "--json-out", str(out), "--no-save", *args],
                          capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "MWPERF_AGENT": str(AGENT),
                               "PYTHONPATH": str(ROOT / "python")})  # this checkout's mwperf
    if done.returncode != 0:
        sys.exit(f"bench_allocs: mwperf run {' '.join(args)} failed: {done.stderr[-500:]}")
    return read_result(out.read_text())


def ground_truth(tmp: Path, n: int, seconds: float) -> float:
    env = {**os.environ, "LD_PRELOAD": str(LIBRARY)}
    common = ["--transport", "udp", "--count-allocs", "--quiet"]
    pong = subprocess.Popen([str(AGENT), "pong", *common, "--listen", "127.0.0.1:0",
                             "--idle-timeout", "1s"], stdout=subprocess.PIPE, text=True, env=env)
    addr = pong.stdout.readline().split()[2]
    subprocess.run([str(AGENT), "ping", *common, "--connect", addr, "--rate", "1000",
                    "--duration", f"{seconds}s", "--payload", "Struct256", "--json",
                    str(tmp / "ping.json"), "--test-allocs-per-msg", str(n)], env=env, check=True)
    pong.wait(timeout=30)
    return json.loads((tmp / "ping.json").read_text())["allocations"]["allocs_per_msg"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--write", action="store_true", help="replace the section in BENCHMARKS.md")
    a = ap.parse_args()
    secs = f"{a.seconds}s"
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        base, three = ground_truth(tmp, 0, a.seconds), ground_truth(tmp, 3, a.seconds)
        lines = [f"Measured {stamp()} at {revision()}: `python3 benchmarks/bench_allocs.py --reps {a.reps} "
                 f"--seconds {a.seconds} --write`.", "",
                 f"**Ground truth** (udp ping, `--test-allocs-per-msg N`): N = 0 counted {base:.3f}/msg, "
                 f"N = 3 counted {three:.3f}/msg: difference {three - base:.3f} (exactly 3 expected).", "",
                 f"**Per transport** (`mwperf run --transport T --count-allocs --rate 1000 --payload Struct256 "
                 f"--duration {secs} --warmup 0.3s`; steady state = the measured messages; setup = until "
                 "the endpoint is open and first contact made):", "",
                 "| transport | ping allocs/msg | ping B/msg | pong allocs/msg | pong B/msg | setup allocs ping / pong | peak live heap ping / pong |",
                 "|---|---|---|---|---|---|---|"]
        for t in TRANSPORTS:
            r = run(tmp, "--transport", t, "--duration", secs, "--count-allocs")
            al = {ag["role"]: ag["allocations"] for ag in r["agents"]}
            p, q = al["ping"], al["pong"]
            lines.append(f"| {t} | {p['allocs_per_msg']:.3f} | {p['bytes_per_msg']:.0f} | {q['allocs_per_msg']:.3f} | "
                         f"{q['bytes_per_msg']:.0f} | {p['setup']['count']} / {q['setup']['count']} | "
                         f"{p['peak_live_bytes'] / 1024:.0f} / {q['peak_live_bytes'] / 1024:.0f} KiB |")
        lines += ["", f"**Overhead** (1 kHz, Struct256, {a.reps} interleaved repeats of {secs} each, "
                  "counting on, off, on, ...; medians of RTT p50; goal on/off <= 1.05; sleeping "
                  "agents wake from idle, so their p50 moves by several µs between runs whatever "
                  "is counted):", "",
                  "| transport | condition | RTT p50 on | RTT p50 off | on/off | runs on | runs off |",
                  "|---|---|---|---|---|---|---|"]
        # (--busy-poll needs two idle cores: on a shared 2-core machine both spinning agents are
        # descheduled for milliseconds, which measures the neighbours, not the counter)
        for t, cond in (("udp", ()), ("cyclonedds", ())):
            p50 = {True: [], False: []}
            for _ in range(a.reps):
                for on in (True, False):
                    r = run(tmp, "--transport", t, "--duration", secs, *cond, *(["--count-allocs"] * on))
                    p50[on].append(r["measurement"]["response"]["p50_ns"])
            on, off = med(p50[True]), med(p50[False])
            lines.append(f"| {t} | {' '.join(cond) or 'sleeping'} | {on / 1e3:.1f} µs | {off / 1e3:.1f} µs | "
                         f"{on / off:.3f} | " + ", ".join(f"{x / 1e3:.1f}" for x in p50[True]) + " | "
                         + ", ".join(f"{x / 1e3:.1f}" for x in p50[False]) + " |")
    text = "\n".join(lines)
    print(text)
    if a.write:
        write_section("allocs", text)


if __name__ == "__main__":
    main()
