#!/usr/bin/env python3
"""mwperf over Cyclone DDS against Cyclone's own ddsperf, measured in the same run.

Interleaved repetitions (ddsperf, mwperf, ddsperf, ...) of a ping/pong pair in separate processes
on loopback, both in one DDS domain with the same Cyclone configuration (mwperf's loopback config,
handed to ddsperf through CYCLONEDDS_URI), reliable keep-last 1 (ddsperf's ping/pong QoS), waitset
wake-ups on both sides, the same message size (ddsperf `size 64` = its 64-byte KS sample; mwperf
`--payload 8` = 56-byte header + 8 bytes). ddsperf prints HALF the round trip: its figures are
doubled here. Prints medians over the repetitions and the ratio
mwperf RTT p50 / (2 x ddsperf 50%) (target <= 1.10). Standalone: python3 only, no extra packages.

    python3 benchmarks/bench_cyclonedds.py --reps 5 --seconds 4 --write
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import med, revision, stamp, write_section  # noqa: E402  (run as a script: benchmarks/ is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
HEADER = 56  # mwperf header bytes

sys.path.insert(0, str(ROOT / "python"))
from mwperf.transports.cyclonedds import LOOPBACK_CONFIG  # noqa: E402  (the agents' own)

DDSPERF_LINE = re.compile(r"size (\d+) mean [\d.]+us min [\d.]+us 50% ([\d.]+)us 90% [\d.]+us 99% ([\d.]+)us max [\d.]+us cnt (\d+)")


def find_agent(given: str | None) -> Path:
    for p in ([given] if given else []) + [os.environ.get("MWPERF_AGENT"),
                                           os.path.join(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"), "release", "mwperf-agent")]:
        if p and Path(p).is_file():
            return Path(p)
    sys.exit("bench_cyclonedds: build the agent first (cargo build --release) or pass --agent PATH")


def ddsperf_rtt(domain: int, seconds: float, size: int, rate: int) -> tuple[float, float, float | None]:
    """(RTT p50 ns, RTT p99 ns, answered fraction at a fixed rate): medians of ddsperf's per-second
    lines after the first, doubled; answered = pongs counted / (rate x seconds counted)."""
    env = dict(os.environ, CYCLONEDDS_URI=LOOPBACK_CONFIG)
    dur = str(int(seconds) + 1)
    pong = subprocess.Popen(["ddsperf", "-i", str(domain), "-D", str(int(seconds) + 10), "pong", "waitset"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ping = ["ping"] + ([f"{rate}Hz"] if rate else []) + ["size", str(size), "waitset"]
        out = subprocess.run(["ddsperf", "-i", str(domain), "-D", dur, "-Q", "minmatch:1", "-Q", "initwait:10", *ping],
                             env=env, capture_output=True, text=True, timeout=seconds + 30).stdout
    finally:
        pong.terminate()
        pong.wait()
    lines = DDSPERF_LINE.findall(out)[1:]  # the first second holds discovery and warm-up
    if not lines:
        sys.exit(f"bench_cyclonedds: no ddsperf figures; its output was:\n{out}")
    half50 = statistics.median(float(p50) for _, p50, _, _ in lines)
    half99 = statistics.median(float(p99) for _, _, p99, _ in lines)
    answered = sum(int(cnt) for *_, cnt in lines) / (rate * len(lines)) if rate else None
    return 2 * half50 * 1e3, 2 * half99 * 1e3, answered


def mwperf_rtt(agent: Path, domain: int, seconds: float, size: int, rate: int) -> tuple[float, float, float | None]:
    qos = ["--history", "keep-last:1"]
    pong = subprocess.Popen([str(agent), "pong", "--transport", "cyclonedds", "--listen", f"{domain}/auto", "--quiet", *qos],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = pong.stdout.readline().split()
        if not line or line[0] != "READY":
            sys.exit("bench_cyclonedds: mwperf-agent pong did not start")
        with tempfile.TemporaryDirectory() as d:
            out = f"{d}/ping.json"
            subprocess.run([str(agent), "ping", "--transport", "cyclonedds", "--connect", line[2], "--rate", str(rate),
                            "--payload", str(size - HEADER), "--duration", f"{seconds}s", "--warmup", "1s", "--quiet",
                            "--json", out, *qos], check=False, timeout=seconds + 60)
            m = json.load(open(out))["measurement"]
    finally:
        pong.terminate()
        pong.wait()
    acc = m["accounting"]
    answered = acc["received"] / max(acc["sent"], 1) if rate else None
    return m["response"]["p50_ns"], m["response"]["p99_ns"], answered


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=4)
    ap.add_argument("--size", type=int, default=64, help="message bytes (ddsperf size; mwperf header + payload)")
    ap.add_argument("--domain", type=int, default=97, help="DDS domain for both tools (keep other DDS runs out)")
    ap.add_argument("--agent", help="mwperf-agent binary (default: $MWPERF_AGENT or target/release)")
    ap.add_argument("--write", action="store_true", help="update BENCHMARKS.md between the bench:cyclonedds markers")
    a = ap.parse_args()
    agent = find_agent(a.agent)
    rows = []
    for rate, label in ((0, "closed loop (rate max)"), (1000, "1000 Hz")):
        mw, dp = [], []
        for i in range(a.reps):
            dp.append(ddsperf_rtt(a.domain, a.seconds, a.size, rate))
            mw.append(mwperf_rtt(agent, a.domain, a.seconds, a.size, rate))
            print(f"  {label} rep {i + 1}: ddsperf RTT p50 {dp[-1][0] / 1e3:.2f} µs, mwperf {mw[-1][0] / 1e3:.2f} µs", file=sys.stderr)
        m50, m99 = med([x[0] for x in mw]), med([x[1] for x in mw])
        d50, d99 = med([x[0] for x in dp]), med([x[1] for x in dp])
        answered = f"{100 * med([x[2] for x in mw]):.1f} / {100 * med([x[2] for x in dp]):.1f} %" if rate else "closed loop"
        rows.append(f"| {label} | {m50 / 1e3:.2f} µs | {d50 / 1e3:.2f} µs | **{m50 / d50:.3f}** | {m99 / 1e3:.1f} / {d99 / 1e3:.1f} µs | {answered} |")
        print(rows[-1], file=sys.stderr)
    when = stamp()
    rev = revision()
    text = "\n".join([
        f"Measured {when} at {rev}, {a.reps} interleaved repetitions of {a.seconds:g} s, medians; "
        f"{a.size}-byte messages, reliable keep-last 1, waitset on both sides, loopback config of the transport.",
        "",
        "| RTT, Cyclone DDS | mwperf p50 | ddsperf p50 (2 × its 50%) | ratio (target ≤ 1.10) | p99 mwperf / ddsperf | answered mwperf / ddsperf |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        "ddsperf prints percentiles per second: its p50/p99 here are the medians of those lines (first second",
        "dropped), doubled; mwperf's are over the whole measurement, so its p99 keeps outliers ddsperf's smooths.",
        "At a fixed rate, keep-last 1 drops a message whenever the next one arrives before the receiver took it",
        "(a sender catching up after being descheduled sends two back to back; measured: no loss with keep-last 10),",
        "for both tools alike; \"answered\" shows how often.",
        "",
        "```",
        f"python3 benchmarks/bench_cyclonedds.py --reps {a.reps} --seconds {a.seconds:g} --size {a.size} --write",
        f"# ddsperf side: CYCLONEDDS_URI='<loopback config>' ddsperf -i {a.domain} pong waitset & "
        f"ddsperf -i {a.domain} -D {int(a.seconds) + 1} -Q minmatch:1 -Q initwait:10 ping [1000Hz] size {a.size} waitset",
        f"# mwperf side: mwperf-agent pong --transport cyclonedds --listen {a.domain}/auto --history keep-last:1 & "
        f"mwperf-agent ping --transport cyclonedds --connect <READY addr> --rate 0|1000 --payload {a.size - HEADER} "
        f"--history keep-last:1 --duration {a.seconds:g}s --warmup 1s",
        "```",
    ])
    print(text)
    if a.write:
        write_section("cyclonedds", text)


if __name__ == "__main__":
    main()
