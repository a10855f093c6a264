#!/usr/bin/env python3
"""mwperf data-plane benchmarks against references measured in the same run.

Every figure is the median over --reps interleaved repetitions (mwperf, reference, mwperf, ...),
so slow drifts of this shared machine hit both sides alike. Writes a markdown table to stdout and,
with --write, into BENCHMARKS.md between the 'bench:begin' / 'bench:end' markers.

    python3 benchmarks/bench.py --reps 5 --seconds 5 --write
"""
from __future__ import annotations

import os

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import measurement_of, med, revision, stamp  # noqa: E402  (run as a script: benchmarks/ is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
AGENT = Path(os.environ.get("MWPERF_AGENT") or Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target") / "release" / "mwperf-agent")
HEADER = 56  # mwperf header bytes; sockperf gets the same datagram size


def start_server(role: str, transport: str, busy: bool, extra: list[str] = ()) -> tuple[subprocess.Popen, str]:
    cmd = [str(AGENT), role, "--transport", transport, "--listen", "127.0.0.1:0", "--quiet", *extra]
    if busy:
        cmd.append("--busy-poll")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline().split()
    assert line and line[0] == "READY", f"{role} did not start"
    return p, line[2]


def mwperf_rtt(transport: str, rate: int, payload: int, seconds: float, busy: bool, extra: tuple[str, ...] = ()) -> dict:
    pong, addr = start_server("pong", transport, busy)
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [str(AGENT), "ping", "--transport", transport, "--connect", addr, "--rate", str(rate), "--payload", str(payload),
               "--duration", f"{seconds}s", "--warmup", "500ms", "--quiet", "--json", out.name, *extra]
        if busy:
            cmd.append("--busy-poll")
        subprocess.run(cmd, check=False)
        pong.terminate()
        pong.wait()
        return measurement_of(json.load(open(out.name)))


SOCKPERF_PCT = re.compile(r"percentile (\d+\.\d+) =\s+([\d.]+)")


def sockperf_rtt(transport: str, rate: int, size: int, seconds: float, busy: bool) -> dict:
    port = "11811"
    common = ["-i", "127.0.0.1", "-p", port] + (["--tcp"] if transport == "tcp" else [])
    if busy:
        common += ["--nonblocked", "--timeout", "0"]
    srv = subprocess.Popen(["sockperf", "server", *common], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.4)
    mps = ["--mps", str(rate)] if rate else []
    out = subprocess.run(["sockperf", "ping-pong", *common, "-m", str(size), "-t", str(int(seconds)), "--full-rtt", *mps],
                         capture_output=True, text=True).stdout
    srv.terminate()
    srv.wait()
    pct = {float(p): float(v) * 1000 for p, v in SOCKPERF_PCT.findall(out)}
    return {"p50_ns": pct.get(50.0), "p99_ns": pct.get(99.0)}


# (label, mwperf --busy-poll?, extra mwperf flags, sockperf busy?) per rate. sockperf paces a fixed
# rate by spinning on the clock in user space (measured: 2.3 s user CPU in a 5 s run at 1000 msg/s)
# and blocks for the reply; the matching mwperf condition keeps the sender spinning between sends
# (--spin-margin = the period).
CONDITIONS = {
    0: [("blocking (both)", False, (), False), ("busy-poll (both)", True, (), True)],
    1000: [("sender spins between sends (both)", False, ("--spin-margin", "1ms"), False), ("busy-poll (both)", True, (), True)],
}


def rtt_rows(reps: int, seconds: float) -> list[str]:
    rows = []
    for transport in ("udp", "tcp"):
        for rate, conditions in CONDITIONS.items():
            for cond, busy, extra, sp_busy in conditions:
                mw, sp = [], []
                for _ in range(reps):
                    m = mwperf_rtt(transport, rate, 64 - HEADER, seconds, busy, extra)
                    mw.append((m["response"]["p50_ns"], m["response"]["p99_ns"]))
                    s = sockperf_rtt(transport, rate, 64, seconds, sp_busy)
                    sp.append((s["p50_ns"], s["p99_ns"]))
                m50, m99 = med([a for a, _ in mw]), med([b for _, b in mw])
                s50, s99 = med([a for a, _ in sp]), med([b for _, b in sp])
                rows.append(f"| {transport} RTT 64 B, rate {rate or 'max'} | {cond} | {m50/1e3:.2f} µs | {s50/1e3:.2f} µs | **{m50/s50:.3f}** | {m99/1e3:.1f} / {s99/1e3:.1f} µs |")
                print(rows[-1], file=sys.stderr)
    return rows


def schedule_rows(reps: int, seconds: float) -> list[str]:
    rows = []
    for rate in (1000, 10000):
        period = f"{1_000_000 // rate}us"
        for cond, busy, extra in (("sleep, spin last 100 µs (default)", False, ()), ("spin whole period", False, ("--spin-margin", period)), ("busy-poll", True, ())):
            p50, p99, mx, rtt = [], [], [], []
            for _ in range(reps):
                m = mwperf_rtt("udp", rate, 64, seconds, busy, extra)
                lat = m["schedule"]["lateness"]
                p50.append(lat["p50_ns"])
                p99.append(lat["p99_ns"])
                mx.append(lat["max_ns"])
                rtt.append(m["response"]["p50_ns"])
            rows.append(f"| {rate} Hz | {cond} | {med(p50)/1e3:.2f} µs | **{med(p99)/1e3:.2f} µs** | {med(mx)/1e3:.0f} µs | {med(rtt)/1e3:.1f} µs |")
            print(rows[-1], file=sys.stderr)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    a = ap.parse_args()
    if not AGENT.exists():
        sys.exit("bench: build first: cargo build --release")
    when = stamp()
    rev = revision()
    out = [f"Measured {when} at {rev}, {a.reps} interleaved repetitions of {a.seconds:g} s, medians.", "",
           "| what | condition | mwperf p50 | sockperf p50 | ratio | p99 mwperf / sockperf |", "|---|---|---|---|---|---|",
           *rtt_rows(a.reps, a.seconds), "",
           "Scheduler accuracy (ping over UDP, lateness = actual − intended send time):", "",
           "| rate | waiting | lateness p50 | lateness p99 | max | RTT p50 |", "|---|---|---|---|---|---|",
           *schedule_rows(a.reps, a.seconds), ""]
    out += max_rate_section(a.reps, a.seconds)
    text = "\n".join(out)
    print(text)
    if a.write:
        bm = ROOT / "BENCHMARKS.md"
        doc = bm.read_text()
        doc = re.sub(r"(<!-- bench:begin -->\n).*?(<!-- bench:end -->)", lambda m: m.group(1) + text + "\n" + m.group(2), doc, flags=re.S)
        bm.write_text(doc)


def max_rate_section(reps: int, seconds: float) -> list[str]:
    """UDP one-way at rate 0: what the pub sent and the sub received, loss included."""
    sent_rates, recv_rates, losses = [], [], []
    for _ in range(reps):
        with tempfile.TemporaryDirectory() as d:
            sub, addr = start_server("sub", "udp", False, ["--json", f"{d}/sub.json"])
            subprocess.run([str(AGENT), "pub", "--transport", "udp", "--connect", addr, "--rate", "0", "--payload", "64",
                            "--duration", f"{seconds}s", "--warmup", "200ms", "--quiet", "--json", f"{d}/pub.json"], check=False)
            sub.wait(timeout=10)
            sent = json.load(open(f"{d}/pub.json"))["sent"]
            m = measurement_of(json.load(open(f"{d}/sub.json")))
            recv = m["accounting"]["received"]
            sent_rates.append(sent / seconds)
            recv_rates.append(m["throughput"]["msgs_per_s"])
            losses.append(100.0 * max(0, sent - recv) / max(sent, 1))
    return ["Maximum one-way rate (UDP, 64 B payload = 120 B datagrams, pub rate 0 → sub):", "",
            "| sent | received | loss |", "|---|---|---|",
            f"| {med(sent_rates):,.0f} msgs/s | {med(recv_rates):,.0f} msgs/s | {med(losses):.2f} % |"]


if __name__ == "__main__":
    main()
