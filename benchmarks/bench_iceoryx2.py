#!/usr/bin/env python3
"""iceoryx2 transport benchmark: the shared-memory floor of mwperf.

Runs, --reps times each (default 5), with a 64-byte payload and --busy-poll on both sides:
  - ping/pong round trip at rate 0 (closed loop, one message in flight) and at 1 kHz,
  - one-way pub → sub at rate 0 (as fast as the pub can send).
Prints the medians over the repetitions of RTT p50/p99 and of msgs/s. Target: RTT p50 ≤ 2 µs.
With --write the table replaces the text between the bench:iceoryx2 markers in BENCHMARKS.md.

    python3 benchmarks/bench_iceoryx2.py --reps 5 --seconds 5 --write

The agent is $CARGO_TARGET_DIR/release/mwperf-agent, else target/release/mwperf-agent (--agent).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import measurement_of, med, revision, stamp, stop, write_section  # noqa: E402  (run as a script: benchmarks/ is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
PAYLOAD = 64
DOMAIN = f"mwperfbench{os.getpid()}"
"""an iceoryx2 domain of this run's own (as mwperf gives each run): its files are removed at the
end, iceoryx2's persistent node counter in /dev/shm included"""


def default_agent() -> Path:
    target = os.environ.get("CARGO_TARGET_DIR")
    return Path(target) / "release" / "mwperf-agent" if target else ROOT / "target" / "release" / "mwperf-agent"


def start_server(agent: Path, role: str, json_out: str | None = None) -> tuple[subprocess.Popen, str]:
    """Start a pong/sub on an automatic base name; returns it and the address from READY."""
    cmd = [str(agent), role, "--transport", "iceoryx2", "--opt", f"domain={DOMAIN}", "--listen", "auto",
           "--busy-poll", "--quiet"]
    if json_out:
        cmd += ["--json", json_out]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    line = (p.stdout.readline() or "").split()
    if len(line) < 3 or line[0] != "READY":
        p.kill()
        sys.exit(f"bench: {role} did not start: {' '.join(cmd)}")
    return p, line[2]



def rtt(agent: Path, rate: int, seconds: float) -> dict:
    """One ping/pong run; returns the ping's response statistics (ns)."""
    pong, addr = start_server(agent, "pong")
    try:
        with tempfile.TemporaryDirectory() as d:
            out = f"{d}/ping.json"
            subprocess.run([str(agent), "ping", "--transport", "iceoryx2", "--opt", f"domain={DOMAIN}", "--connect", addr, "--rate", str(rate),
                            "--payload", str(PAYLOAD), "--duration", f"{seconds}s", "--warmup", "1s", "--busy-poll",
                            "--quiet", "--json", out], check=False)
            m = measurement_of(json.load(open(out))) or {}
    finally:
        stop(pong)
    r = m.get("response") or {}
    return {"p50": r.get("p50_ns"), "p99": r.get("p99_ns"), "lost": (m.get("accounting") or {}).get("lost")}


def one_way(agent: Path, seconds: float) -> dict:
    """One pub (rate 0) → sub run; returns sent and received msgs/s and the loss."""
    with tempfile.TemporaryDirectory() as d:
        sub, addr = start_server(agent, "sub", f"{d}/sub.json")
        try:
            subprocess.run([str(agent), "pub", "--transport", "iceoryx2", "--opt", f"domain={DOMAIN}", "--connect", addr, "--rate", "0",
                            "--payload", str(PAYLOAD), "--duration", f"{seconds}s", "--warmup", "500ms", "--busy-poll",
                            "--quiet", "--json", f"{d}/pub.json"], check=False)
            sub.wait(timeout=30)
        finally:
            if sub.poll() is None:
                stop(sub)
        sent = json.load(open(f"{d}/pub.json")).get("sent") or 0
        m = measurement_of(json.load(open(f"{d}/sub.json"))) or {}
    recv = (m.get("accounting") or {}).get("received") or 0
    return {"sent": sent / seconds, "recv": (m.get("throughput") or {}).get("msgs_per_s"),
            "loss": 100.0 * max(0, sent - recv) / max(sent, 1)}


def main() -> None:
    try:
        measure_all()
    finally:
        for leftover in Path("/dev/shm").glob(f"{DOMAIN}_*"):
            leftover.unlink(missing_ok=True)


def measure_all() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--agent", type=Path, default=default_agent())
    ap.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    a = ap.parse_args()
    if not a.agent.exists():
        sys.exit(f"bench: {a.agent} not found; build first: cargo build --release -p mwperf-agent")
    load_before = os.getloadavg()[0]
    rows = []
    for rate in (0, 1000):
        runs = [rtt(a.agent, rate, a.seconds) for _ in range(a.reps)]
        p50, p99 = med([r["p50"] for r in runs]), med([r["p99"] for r in runs])
        lost = sum(r["lost"] or 0 for r in runs)
        spread = f"{min(r['p50'] for r in runs if r['p50']) / 1e3:.2f}–{max(r['p50'] for r in runs if r['p50']) / 1e3:.2f}"
        verdict = "met" if p50 <= 2000 else "**missed**"
        rows.append(f"| RTT, rate {rate or 'max'} | **{p50 / 1e3:.2f} µs** ({spread}) | {p99 / 1e3:.2f} µs | {lost} lost | target p50 ≤ 2 µs: {verdict} |")
        print(rows[-1], file=sys.stderr)
    ow = [one_way(a.agent, a.seconds) for _ in range(a.reps)]
    ow_row = f"| pub → sub, rate max | {med([o['sent'] for o in ow]):,.0f} msgs/s | {med([o['recv'] for o in ow]):,.0f} msgs/s | {med([o['loss'] for o in ow]):.2f} % |"
    print(ow_row, file=sys.stderr)
    when = stamp()
    rev = revision()
    text = "\n".join([
        f"Measured {when} at {rev}: `python3 benchmarks/bench_iceoryx2.py --reps {a.reps} --seconds {a.seconds:g}`; "
        f"{PAYLOAD}-byte payload ({PAYLOAD + 56}-byte messages), `--busy-poll` on both sides, default QoS "
        f"(reliable, keep-last 10, volatile); medians of {a.reps} runs (range of the p50s in brackets). "
        f"Host load average {load_before:.1f} before / {os.getloadavg()[0]:.1f} after on {os.cpu_count()} CPUs: "
        "busy-polling peers need a core each, so figures taken under load measure the scheduler, not iceoryx2.", "",
        "| round trip | p50 | p99 | lost | |", "|---|---|---|---|---|", *rows, "",
        "| one way | sent | received | loss |", "|---|---|---|---|", ow_row])
    print(text)
    if a.write:
        write_section("iceoryx2", text)


if __name__ == "__main__":
    main()
