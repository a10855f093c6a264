#!/usr/bin/env python3
"""A segment's medium (issue 5, `medium: shared` vs `switched`): does a shared WiFi cell share
its rate, and what does that do to a control loop beside a camera stream?

(a) Ground truth with iperf3: four hosts a, b, c, d on one segment with `rate=R` (2 Mbit/s).
    Two UDP flows, a -> b and c -> d, each offering 0.8 R of payload at once. Switched: each
    receiver's wire carries its own flow, so each gets its offer (together 1.6 R). Shared: both
    flows serialize on one medium, so together they get R of IP packets, i.e. R x 1000/1028 of
    iperf3's payload (1000 B datagrams + 28 B of IP/UDP headers). Sum of the receivers' goodput
    against that expectation.
(b) The story: an mwperf udp round trip a <-> b at 100 Hz, 64 B, while c -> d sends 0.9 R
    (a camera stream), switched vs shared: RTT p50/p99 and loss.
Medians over --reps interleaved repetitions. Needs root, mwperf-linkem, the agent and iperf3.

    python3 benchmarks/bench_medium.py --reps 3 --seconds 5 --write
"""
from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from benchlib import med, revision, stamp, write_section  # noqa: E402  (run as a script)
from bench_linkem import measure  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from mwperf.emulation.network import Network, emulated_network  # noqa: E402
from mwperf.emulation.topology import Link, Topology, complete_place  # noqa: E402

RATE_BPS = 2_000_000
DATAGRAM = 1000
HEADERS = 28
HOSTS = ("a", "b", "c", "d")


def topology(medium: str) -> Topology:
    return Topology(HOSTS, (Link("lan", HOSTS, f"rate={RATE_BPS // 1000}kbit", segment=True,
                                 shared=medium == "shared"),),
                    complete_place({"ping": "a", "pong": "b"}, HOSTS))


@contextlib.contextmanager
def iperf_flows(net: Network, flows: list[tuple[str, str, float]], seconds: float
                ) -> Iterator[list[subprocess.Popen]]:
    """UDP flows (from, to, offered payload bit/s) for ``seconds``; yields the clients."""
    servers = [subprocess.Popen(["ip", "netns", "exec", net.hosts[dst].netns, "iperf3", "-s",
                                 "-1", "-B", net.addressing.addresses[dst]],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for _, dst, _ in flows]
    time.sleep(0.3)
    clients = [subprocess.Popen(["ip", "netns", "exec", net.hosts[src].netns, "iperf3", "-c",
                                 net.addressing.addresses[dst], "-u", "-b", str(int(offer)),
                                 "-l", str(DATAGRAM), "-t", f"{seconds:g}", "-J"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for src, dst, offer in flows]
    try:
        yield clients
    finally:
        for p in clients + servers:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=seconds + 15)
            if p.poll() is None:
                p.kill()
                p.wait()


def goodput(medium: str, seconds: float) -> float:
    """Sum of the two receivers' goodput (payload bit/s)."""
    flows = [("a", "b", 0.8 * RATE_BPS), ("c", "d", 0.8 * RATE_BPS)]
    with tempfile.TemporaryDirectory() as scratch, \
            emulated_network(topology(medium), None, "userspace", Path(scratch), "bench") as net, \
            iperf_flows(net, flows, seconds) as clients:
        outputs = [c.communicate(timeout=seconds + 15)[0] for c in clients]
    return sum(json.loads(o)["end"]["sum_received"]["bits_per_second"] for o in outputs)


def loop_beside_stream(medium: str, seconds: float) -> dict:
    """The udp round trip a <-> b while c -> d sends 0.9 R."""
    @contextlib.contextmanager
    def network(workdir: Path) -> Iterator[Network]:
        with emulated_network(topology(medium), None, "userspace", workdir, "bench") as net, \
                iperf_flows(net, [("c", "d", 0.9 * RATE_BPS)], seconds + 3):
            time.sleep(0.5)  # the stream first
            yield net
    m, _ = measure(network, transport="udp", rate="100", payload="64",
                   duration=f"{seconds}s", warmup="500ms")
    accounting = m["accounting"]
    return {"p50": m["response"]["p50_ns"], "p99": m["response"]["p99_ns"],
            "loss": accounting["lost"] / accounting["sent"] if accounting["sent"] else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--write", action="store_true", help="replace the bench:medium section")
    args = parser.parse_args()
    media = ("switched", "shared")
    got: dict[str, list[float]] = {m: [] for m in media}
    loops: dict[str, list[dict]] = {m: [] for m in media}
    for rep in range(args.reps):
        for medium in media:
            got[medium].append(goodput(medium, args.seconds))
            loops[medium].append(loop_beside_stream(medium, args.seconds))
            print(f"rep {rep + 1} {medium}: goodput {got[medium][-1] / 1e6:.3f} Mbit/s, loop "
                  f"{loops[medium][-1]}", file=sys.stderr)
    expected = {"switched": 1.6 * RATE_BPS, "shared": RATE_BPS * DATAGRAM / (DATAGRAM + HEADERS)}
    lines = ["```", f"python3 benchmarks/bench_medium.py --reps {args.reps} --seconds "
             f"{args.seconds:g} --write", "```",
             f"(a) Two iperf3 UDP flows a -> b and c -> d, each offering 0.8 x {RATE_BPS / 1e6:g} "
             f"Mbit/s of payload, {args.seconds:g} s, on one segment `rate={RATE_BPS // 1000}kbit`:",
             "", "| medium | goodput of both flows | expected | error |", "|---|---|---|---|"]
    for medium in media:
        g = med(got[medium])
        lines.append(f"| {medium} | {g / 1e6:.3f} Mbit/s | {expected[medium] / 1e6:.3f} Mbit/s "
                     f"({'each flow its offer' if medium == 'switched' else 'the medium rate'}) | "
                     f"{(g - expected[medium]) / expected[medium] * 100:+.1f} % |")
    lines += ["", f"(b) udp round trip a <-> b, 100 Hz, 64 B, while c -> d streams 0.9 x "
              f"{RATE_BPS / 1e6:g} Mbit/s:", "", "| medium | RTT p50 | RTT p99 | loss |",
              "|---|---|---|---|"]
    for medium in media:
        found = loops[medium]
        lines.append(f"| {medium} | {med(r['p50'] for r in found) / 1e6:.3f} ms | "
                     f"{med(r['p99'] for r in found) / 1e6:.3f} ms | "
                     f"{100 * med(r['loss'] for r in found):.2f} % |")
    lines.append(f"\nMeasured {stamp()} at {revision()}; medians of {args.reps} interleaved "
                 f"repetitions.")
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section("medium", text)


if __name__ == "__main__":
    main()
