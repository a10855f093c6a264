#!/usr/bin/env python3
"""Scenario hosts (issue 5): seed 000's three-host ROS 1 set-up, measured back against what the
links inject. rosmaster on host `master`, the sender (ping) on `sender`, the echo on `echoer`
(mwperf's pong, and topic_tools relay); `sender<->echoer` carries a one-way delay D in {0, 10 ms},
`master<->echoer` none. The RTT increase over D = 0 must be 2D: registration with the master
crosses the links too, but the messages go sender <-> echoer directly (TCPROS). Every figure is
the median of --reps interleaved repetitions. Needs root, mwperf-linkem, the agent, rosmaster
and topic-tools.

    python3 benchmarks/bench_hosts.py --reps 5 --seconds 3 --write
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from benchlib import as_read, revision, stamp, write_section  # noqa: E402  (run as a script)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from mwperf.agent import find_agent  # noqa: E402
from mwperf.config import build_point  # noqa: E402
from mwperf.emulation.topology import Link, Topology, complete_place  # noqa: E402
from mwperf.runner import run_point  # noqa: E402

HOSTS = ("master", "sender", "echoer")
TOPOLOGY = Topology(HOSTS, (Link("sender<->echoer", ("sender", "echoer"), None),
                            Link("master<->echoer", ("master", "echoer"), "delay=0")),
                    complete_place({"rosmaster": "master", "ping": "sender", "pong": "echoer"},
                                   HOSTS))
DELAYS_MS = (0, 10)


def rtt_p50_ns(pong: str, delay_ms: int, seconds: float) -> float:
    """One point: ros1 round trip at 100 Hz, 64 B, across the three hosts."""
    agent = find_agent()
    cfg = build_point({"transport": "ros1", "pong": pong, "rate": "100", "payload": "64",
                       "duration": f"{seconds}s", "warmup": "500ms", "link": f"delay={delay_ms}ms",
                       "topology": TOPOLOGY.to_dict()}, lambda: agent)
    with tempfile.TemporaryDirectory(prefix="mwperf-bench-") as scratch:
        result = as_read(run_point(cfg, agent, Path(scratch)).result)
    accounting = result["measurement"]["accounting"]
    assert accounting["received"] == accounting["sent"], accounting
    return result["measurement"]["response"]["p50_ns"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3)
    parser.add_argument("--write", action="store_true", help="replace the bench:hosts section")
    args = parser.parse_args()
    p50: dict[tuple[str, int], list[float]] = {}
    for _ in range(args.reps):
        for pong in ("agent", "relay"):
            for delay in DELAYS_MS:
                p50.setdefault((pong, delay), []).append(rtt_p50_ns(pong, delay, args.seconds))
    load = os.getloadavg()[0]
    lines = [f"Measured {stamp()} at {revision()}, {args.reps} interleaved repetitions of "
             f"{args.seconds:g} s, medians; load average {load:.2f} at the end (2 shared cores).",
             "", "```", f"python3 benchmarks/bench_hosts.py --reps {args.reps} --seconds "
             f"{args.seconds:g} --write", "```",
             "| echo on `echoer` | RTT p50, D = 0 | RTT p50, D = 10 ms | increase | expected 2D "
             "| error |", "|---|---|---|---|---|---|"]
    for pong in ("agent", "relay"):
        base = statistics.median(p50[(pong, 0)])
        delayed = statistics.median(p50[(pong, 10)])
        increase = statistics.median(d - b for b, d in zip(p50[(pong, 0)], p50[(pong, 10)]))
        name = "mwperf pong" if pong == "agent" else "topic_tools relay"
        lines.append(f"| {name} | {base / 1e6:.3f} ms | {delayed / 1e6:.3f} ms | "
                     f"{increase / 1e6:.3f} ms | 20.000 ms | "
                     f"{100 * (increase - 2e7) / 2e7:+.2f} % |")
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section("hosts", text)


if __name__ == "__main__":
    main()
