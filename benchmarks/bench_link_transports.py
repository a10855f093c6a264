#!/usr/bin/env python3
"""Every networked transport across one emulated link (issue 5 and 3): the RTT increase a link
with one-way delay D adds must be 2D whatever the middleware — its discovery, daemons and
threads must not change what the link injects. Each transport runs a round trip at 100 Hz,
64 B, through `--link delay=0` and `--link delay=10ms` (userspace emulator); the figure is the
median over --reps interleaved repetitions of each p50. The brokers/routers/masters run on the
pong's host, as with `--link` alone. Needs root, mwperf-linkem, the agent and the daemons.

    python3 benchmarks/bench_link_transports.py --reps 3 --seconds 3 --write
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from benchlib import as_read, med, revision, stamp, write_section  # noqa: E402  (run as a script)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from mwperf.agent import find_agent  # noqa: E402
from mwperf.config import build_point  # noqa: E402
from mwperf.runner import run_point  # noqa: E402

TRANSPORTS = ("udp", "tcp", "cyclonedds", "rustdds", "zenoh", "mqtt", "ros1")
DELAY_MS = 10


def rtt_p50_ns(transport: str, delay_ms: int, seconds: float) -> float | None:
    """One point's RTT p50, None when it did not complete with every message echoed."""
    agent = find_agent()
    cfg = build_point({"transport": transport, "rate": "100", "payload": "64",
                       "duration": f"{seconds}s", "warmup": "500ms",
                       "link": f"delay={delay_ms}ms", "link_backend": "userspace"},
                      lambda: agent)
    with tempfile.TemporaryDirectory(prefix="mwperf-bench-") as scratch:
        result = as_read(run_point(cfg, agent, Path(scratch)).result)
    accounting = result["measurement"]["accounting"]
    if result["status"] != "complete" or accounting["received"] != accounting["sent"]:
        print(f"  {transport} D={delay_ms} ms: {result['status']} {result.get('status_reason')}"
              f" {accounting}", file=sys.stderr)
        return None
    return result["measurement"]["response"]["p50_ns"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3)
    parser.add_argument("--transports", default=",".join(TRANSPORTS))
    parser.add_argument("--write", action="store_true",
                        help="replace the bench:link-transports section")
    args = parser.parse_args()
    transports = args.transports.split(",")
    p50: dict[tuple[str, int], list[float | None]] = {}
    for rep in range(args.reps):
        for transport in transports:
            for delay in (0, DELAY_MS):
                value = rtt_p50_ns(transport, delay, args.seconds)
                p50.setdefault((transport, delay), []).append(value)
                shown = "failed" if value is None else f"{value / 1e6:.3f} ms"
                print(f"rep {rep + 1}: {transport} D={delay} ms p50 {shown}", file=sys.stderr)
    expected = 2 * DELAY_MS
    lines = ["```", "python3 benchmarks/bench_link_transports.py "
             f"--reps {args.reps} --seconds {args.seconds:g} --write", "```",
             f"| transport | RTT p50, D = 0 | RTT p50, D = {DELAY_MS} ms | increase | "
             f"expected 2D | error | runs |", "|---|---|---|---|---|---|---|"]
    for transport in transports:
        base, delayed = med(p50[(transport, 0)]), med(p50[(transport, DELAY_MS)])
        runs = sum(v is not None for v in p50[(transport, DELAY_MS)])
        increase = (delayed - base) / 1e6
        lines.append(f"| {transport} | {base / 1e6:.3f} ms | {delayed / 1e6:.3f} ms | "
                     f"{increase:.3f} ms | {expected:.3f} ms | "
                     f"{(increase - expected) / expected * 100:+.2f} % | {runs}/{args.reps} |")
    lines.append(f"\nMeasured {stamp()} at {revision()}; medians of {args.reps} interleaved "
                 f"repetitions of {args.seconds:g} s at 100 Hz, 64 B, userspace emulator.")
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section("link-transports", text)


if __name__ == "__main__":
    main()
