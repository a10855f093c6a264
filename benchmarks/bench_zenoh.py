#!/usr/bin/env python3
"""mwperf's zenoh transport against zenoh's own round-trip tools (z_ping / z_pong, 1.10.2).

Both sides: peer mode over TCP on 127.0.0.1, multicast scouting off, express on, congestion
control Block, one message in flight (closed loop), the same message size (z_ping's payload =
mwperf's 56-byte header + --payload). Repetitions are interleaved (reference, mwperf, mwperf,
reference, ...) so drifts of this shared machine hit both alike; figures are medians over them.
Criterion: mwperf RTT p50 / z_ping RTT p50 <= 1.10.

Build first (same CARGO_TARGET_DIR for both, so the reference reuses the agent's crates):
    cargo build --release -p mwperf-agent
    cargo build --release --manifest-path benchmarks/zenoh-ref/Cargo.toml
    python3 benchmarks/bench_zenoh.py --reps 5 --write
"""
from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import measurement_of, med, revision, stamp, stop, write_section  # noqa: E402  (run as a script: benchmarks/ is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release"
HEADER = 56  # mwperf header bytes
SUMMARY = re.compile(r"^summary: size=(\d+) n=(\d+) p50_ns=(\d+) p99_ns=(\d+)", re.M)
RTT_US = re.compile(r"rtt=(\d+)µs")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    """Whether something listens on 127.0.0.1:port (read from /proc: no probe connection)."""
    want = f"0100007F:{port:04X}"
    try:
        lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return False
    return any(f.split()[1] == want and f.split()[3] == "0A" for f in lines)



def ref_rtt(bins: Path, size: int, samples: int, warmup: float) -> tuple[float, float]:
    """z_pong + z_ping; returns (p50_ns, p99_ns)."""
    port = free_port()
    ep = f"tcp/127.0.0.1:{port}"
    pong = subprocess.Popen([str(bins / "z_pong"), "-m", "peer", "-l", ep, "--no-multicast-scouting"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 10
        while not listening(port):
            if pong.poll() is not None or time.monotonic() > end:
                sys.exit(f"bench: z_pong did not listen on {ep}")
            time.sleep(0.02)
        out = subprocess.run([str(bins / "z_ping"), "-m", "peer", "-e", ep, "--no-multicast-scouting",
                              "-w", str(warmup), "-n", str(samples), str(size)],
                             capture_output=True, text=True, timeout=120 + warmup).stdout
    finally:
        stop(pong)
    m = SUMMARY.search(out)
    if m:
        return float(m.group(3)), float(m.group(4))
    us = sorted(int(x) for x in RTT_US.findall(out))  # upstream output only: whole µs
    if not us:
        sys.exit("bench: z_ping printed no samples")
    return us[len(us) // 2] * 1e3, us[int(0.99 * (len(us) - 1))] * 1e3


def mwperf_rtt(agent: Path, size: int, samples: int, warmup: float) -> tuple[float, float]:
    """mwperf pong + ping over zenoh (peer mode, defaults); returns (p50_ns, p99_ns)."""
    pong = subprocess.Popen([str(agent), "pong", "--transport", "zenoh", "--listen", "tcp/127.0.0.1:0", "--quiet"],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = pong.stdout.readline().split()
        if len(line) < 3 or line[0] != "READY":
            sys.exit("bench: mwperf pong did not start")
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            subprocess.run([str(agent), "ping", "--transport", "zenoh", "--connect", line[2], "--rate", "0",
                            "--payload", str(size - HEADER), "--count", str(samples), "--warmup", f"{warmup}s",
                            "--quiet", "--json", out.name], check=False, timeout=120 + warmup)
            r = json.load(open(out.name))
    finally:
        stop(pong)
    if r.get("status") != "complete":
        print(f"bench: mwperf ping status {r.get('status')}: {r.get('status_reason')}", file=sys.stderr)
    resp = measurement_of(r)["response"]
    return float(resp["p50_ns"]), float(resp["p99_ns"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5, help="interleaved repetitions per tool (default 5)")
    ap.add_argument("--size", type=int, default=64, help="message bytes on both sides (default 64; >= 56)")
    ap.add_argument("--samples", type=int, default=20000, help="measured round trips per run (default 20000)")
    ap.add_argument("--warmup", type=float, default=1.0, help="warm-up seconds per run (default 1)")
    ap.add_argument("--bin-dir", type=Path, default=TARGET, help=f"where mwperf-agent, z_ping, z_pong are (default {TARGET})")
    ap.add_argument("--write", action="store_true", help="update BENCHMARKS.md between the bench:zenoh markers")
    a = ap.parse_args()
    if a.size < HEADER:
        sys.exit(f"bench: --size must be >= {HEADER} (the mwperf header)")
    agent = a.bin_dir / "mwperf-agent"
    for b in (agent, a.bin_dir / "z_ping", a.bin_dir / "z_pong"):
        if not b.exists():
            sys.exit(f"bench: {b} missing; build first (see --help)")

    ref, mw = [], []
    for i in range(a.reps):
        order = [("ref", ref), ("mwperf", mw)] if i % 2 == 0 else [("mwperf", mw), ("ref", ref)]
        for name, acc in order:
            r = ref_rtt(a.bin_dir, a.size, a.samples, a.warmup) if name == "ref" else mwperf_rtt(agent, a.size, a.samples, a.warmup)
            acc.append(r)
            print(f"rep {i + 1}/{a.reps} {name:6} p50 {r[0] / 1e3:7.2f} µs  p99 {r[1] / 1e3:7.2f} µs", file=sys.stderr)

    r50, r99 = med(x for x, _ in ref), med(y for _, y in ref)
    m50, m99 = med(x for x, _ in mw), med(y for _, y in mw)
    ratio = m50 / r50
    def runs(xs: list) -> str:
        return ", ".join(f"{x / 1e3:.1f}" for x, _ in xs)

    when = stamp()
    rev = revision()
    text = "\n".join([
        f"Measured {when} at {rev}: {a.reps} interleaved repetitions, {a.samples} round trips each after {a.warmup:g} s warm-up, "
        f"{a.size}-byte messages, peer mode over TCP on 127.0.0.1, medians (`python3 benchmarks/bench_zenoh.py`).",
        "",
        "| tool | RTT p50 | RTT p99 | p50 of each run (µs) |",
        "|---|---|---|---|",
        f"| z_ping / z_pong (zenoh 1.10.2) | {r50 / 1e3:.2f} µs | {r99 / 1e3:.1f} µs | {runs(ref)} |",
        f"| mwperf ping / pong `--transport zenoh --rate 0` | {m50 / 1e3:.2f} µs | {m99 / 1e3:.1f} µs | {runs(mw)} |",
        "",
        f"Ratio mwperf / z_ping RTT p50: **{ratio:.3f}** (target <= 1.10: {'met' if ratio <= 1.10 else 'missed'}).",
    ])
    print(text)
    if a.write:
        write_section("zenoh", text)


if __name__ == "__main__":
    main()
