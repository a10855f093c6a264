#!/usr/bin/env python3
"""Emulated links (issue 5): the userspace emulator's own cost, and its accuracy against what it
was told to inject. Needs root and the built mwperf-linkem and mwperf-agent.

(a) cost at zero impairment: udp round-trip p50 (64 B, 1 kHz) and iperf3 TCP throughput through
    mwperf-linkem vs a plain veth pair between the same kind of namespaces;
(b) one-way delay D in {1, 10, 100} ms each way: RTT p50 increase over the zero-impairment link
    vs 2D (target: within 2 % or 50 us);
(c) loss p in {1, 10, 60} % on udp one-way (udp is best-effort): measured loss inside the
    binomial 99 % interval of the messages sent;
(d) rate 115200 bit/s with 8N1 framing: one-way udp throughput on the wire (IP packet bytes x 10
    bits) vs 115200 bit/s (target: within 5 %).
Every figure is the median of --reps repetitions (default 3), interleaved.

    python3 benchmarks/bench_linkem.py --reps 3 --seconds 5 --write
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from benchlib import measurement_of, revision, stamp, write_section  # noqa: E402  (run as a script: benchmarks/ is on sys.path)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from mwperf.agent import find_agent  # noqa: E402
from mwperf.config import MEASURING_ROLE, ROLES, build_point  # noqa: E402
from mwperf.emulation.hosts import Port, address_port, create_host  # noqa: E402
from mwperf.emulation.links import parse_link  # noqa: E402
from mwperf.emulation.netem import create_veth  # noqa: E402
from mwperf.emulation.network import Network, emulated_network  # noqa: E402
from mwperf.emulation.topology import plan_addresses, two_hosts  # noqa: E402
from mwperf.leases import Lease  # noqa: E402
from mwperf.procs import AgentSet  # noqa: E402
from mwperf.commandline import role_argv, sender_timeout_s  # noqa: E402

Z99 = 2.5758
IP_UDP_HEADERS = 28


@contextlib.contextmanager
def plain_veth(workdir: Path) -> Iterator[Network]:
    """Hosts a and b on a veth pair, nothing in between: the baseline."""
    with Lease.take("bench veth") as lease:
        topology = two_hosts()
        plan = plan_addresses(topology, (10, 0), lease.prefix)
        hosts = {name: create_host(lease, name) for name in topology.hosts}
        (wire,) = plan.wires
        a, b = (Port(hosts[e.node], e.device, e.address, e.prefix_len)
                for e in (wire.near, wire.far))
        create_veth(a, b, lease)
        address_port(a, 1500)
        address_port(b, 1500)
        yield Network(topology, hosts, plan, {"a<->b": parse_link("delay=0")}, "veth")


def linkem(spec: str) -> Callable[[Path], contextlib.AbstractContextManager[Network]]:
    return lambda workdir: emulated_network(two_hosts(), spec, "userspace", workdir, "bench")


def measure(net_of: Callable[[Path], contextlib.AbstractContextManager[Network]],
            **options: str) -> tuple[dict, dict | None]:
    """One point with the agents on hosts b (server) and a (sender): the measuring agent's
    measurement and the emulator's report."""
    agent = find_agent()
    cfg = build_point(options, find_agent)
    server_role, sender_role = ROLES[cfg.mode]
    tag = secrets.randbits(32)
    with tempfile.TemporaryDirectory(prefix="mwperf-bench-") as scratch:
        workdir = Path(scratch)
        with net_of(workdir) as net:
            with AgentSet(workdir) as agents:
                server = agents.spawn(server_role, role_argv(
                    agent, server_role, cfg, workdir, tag, f"{net.address_of(server_role)}:0"),
                    net.netns_of(server_role))
                address = server.wait_ready(cfg.transport, 10)
                sender = agents.spawn(sender_role, role_argv(
                    agent, sender_role, cfg, workdir, tag, address), net.netns_of(sender_role))
                sender.wait(sender_timeout_s(cfg))
                if cfg.mode == "oneway":
                    server.wait(5)  # the sub ends after the end-of-stream marker (or is stopped)
        report = json.loads((workdir / f"{MEASURING_ROLE[cfg.mode]}.json").read_text())
    return measurement_of(report), net.reports[0] if net.reports else None


def rtt(net_of, seconds: float, rate: str = "1000") -> tuple[float, dict | None]:
    """udp round-trip p50 (64 B) and the emulator's report."""
    m, report = measure(net_of, transport="udp", rate=rate, payload="64",
                        duration=f"{seconds}s", warmup="500ms")
    return m["response"]["p50_ns"], report


def rtt_p50(net_of, seconds: float, rate: str = "1000") -> float:
    return rtt(net_of, seconds, rate)[0]


def iperf3(net_of, seconds: float) -> float:
    """iperf3 TCP throughput a -> b in bit/s."""
    with tempfile.TemporaryDirectory() as scratch, net_of(Path(scratch)) as net:
        server = subprocess.Popen(["ip", "netns", "exec", net.hosts["b"].netns, "iperf3", "-s",
                                   "-1", "-B", net.address_of("pong")], stdout=subprocess.DEVNULL)
        try:
            time.sleep(0.3)
            done = subprocess.run(["ip", "netns", "exec", net.hosts["a"].netns, "iperf3", "-c",
                                   net.address_of("pong"), "-t", str(seconds), "-J"], capture_output=True,
                                  text=True, check=True)
        finally:
            server.kill()
            server.wait()
    return json.loads(done.stdout)["end"]["sum_received"]["bits_per_second"]


def fmt_us(ns: float) -> str:
    return f"{ns / 1000:.1f} µs" if ns < 1e6 else f"{ns / 1e6:.3f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--write", action="store_true", help="replace the bench:linkem section")
    args = parser.parse_args()
    reps, secs = args.reps, args.seconds
    lines = []
    say = lambda text: (print(text, flush=True), lines.append(text))  # noqa: E731

    zero = linkem("delay=0")
    base, emu = [], []
    for _ in range(reps):
        base.append(rtt_p50(plain_veth, secs))
        emu.append(rtt_p50(zero, secs))
    tput_base = [iperf3(plain_veth, secs) for _ in range(reps)]
    tput_emu = [iperf3(zero, secs) for _ in range(reps)]
    b, e = statistics.median(base), statistics.median(emu)
    say("**(a) Cost at zero impairment** (udp round trip, 64 B payload, 1 kHz; iperf3 TCP a → b)\n")
    say("| path | RTT p50 | added by mwperf-linkem | iperf3 TCP throughput |")
    say("|---|---|---|---|")
    say(f"| plain veth | {fmt_us(b)} | — | {statistics.median(tput_base) / 1e9:.2f} Gbit/s |")
    say(f"| mwperf-linkem (`--link delay=0`) | {fmt_us(e)} | {fmt_us(e - b)} | "
        f"{statistics.median(tput_emu) / 1e9:.2f} Gbit/s |")

    say("\n**(b) Injected delay** (udp round trip, 64 B, 10 Hz; increase over `--link delay=0` "
        "measured in the same repetition)\n")
    say("| D each way | expected RTT increase 2D | measured increase | error | within ±2 % or ±50 µs "
        "| emulator: releases > 50 µs late / all, worst |")
    say("|---|---|---|---|---|---|")
    for d_ms in (1, 10, 100):
        increases, late, released, worst = [], 0, 0, 0
        for _ in range(reps):
            ref = rtt_p50(zero, secs, rate="10")
            p50, report = rtt(linkem(f"delay={d_ms}ms"), secs, rate="10")
            increases.append(p50 - ref)
            for direction in (report["up"], report["down"]):
                late += direction["release_late_ns"]["over_50us"]
                released += direction["forwarded"]
                worst = max(worst, direction["release_late_ns"]["max"])
        inc, want = statistics.median(increases), 2 * d_ms * 1e6
        ok = abs(inc - want) <= max(0.02 * want, 50_000)
        say(f"| {d_ms} ms | {fmt_us(want)} | {fmt_us(inc)} | {fmt_us(inc - want)} "
            f"({100 * (inc - want) / want:+.2f} %) | {'yes' if ok else '**no**'} | "
            f"{late} / {released}, {fmt_us(worst)} |")

    say("\n**(c) Injected loss** (udp one way, 64 B at 1 kHz; loss = lost / sent of the measured "
        "messages; the 99 % interval is the binomial's normal approximation for that n)\n")
    say("| p | sent (median) | measured loss (each rep) | 99 % interval | inside | emulator's own loss count |")
    say("|---|---|---|---|---|---|")
    for p in (1, 10, 60):
        fractions, sents, own = [], [], []
        for _ in range(reps):
            m, report = measure(linkem(f"up:loss={p}%"), transport="udp", mode="oneway",
                                rate="1000", payload="64", duration=f"{secs}s", warmup="500ms")
            sent, lost = m["accounting"]["sent"], m["accounting"]["lost"]
            fractions.append(lost / sent)
            sents.append(sent)
            up = report["up"]
            own.append(up["dropped"]["loss"] / up["received"])
        n, q = statistics.median(sents), p / 100
        half = Z99 * math.sqrt(q * (1 - q) / n)
        inside = all(abs(f - q) <= half for f in fractions)
        say(f"| {p} % | {n:.0f} | {', '.join(f'{100 * f:.2f} %' for f in fractions)} | "
            f"{100 * (q - half):.2f}–{100 * (q + half):.2f} % | {'yes' if inside else '**no**'} | "
            f"{', '.join(f'{100 * f:.2f} %' for f in own)} |")

    say("\n**(d) Rate limit** 115200 bit/s with 8N1 framing (10 bits per byte), udp one way, "
        "100-byte payload offered at 200 Hz (above capacity); throughput on the wire = received "
        "msgs/s x (message + 28 bytes IP/UDP) x 10 bits\n")
    say("| expected | measured (each rep) | error (median) | within ±5 % |")
    say("|---|---|---|---|")
    wires = []
    for _ in range(reps):
        m, _ = measure(linkem("rate=115200bit,overhead=8n1,queue=4KiB"), transport="udp",
                       mode="oneway", rate="200", payload="100", duration=f"{2 * secs}s",
                       warmup="1s")
        per_msg = m["message_bytes"] + IP_UDP_HEADERS
        wires.append(m["throughput"]["msgs_per_s"] * per_msg * 10)
    err = statistics.median(wires) / 115200 - 1
    say(f"| 115200 bit/s | {', '.join(f'{w:.0f}' for w in wires)} bit/s | {100 * err:+.2f} % | "
        f"{'yes' if abs(err) <= 0.05 else '**no**'} |")

    if args.write:
        rev = revision()
        when = stamp()
        with open("/proc/loadavg") as f:
            load = f.read().split()[0]
        head = (f"Measured {when} at {rev}, {reps} repetitions of {secs:g} s, medians, load "
                f"average {load} at the end (2 shared cores).\n\n```\n"
                f"python3 benchmarks/bench_linkem.py --reps {reps} --seconds {secs:g} --write\n```\n")
        write_section("linkem", head + "\n".join(lines))


if __name__ == "__main__":
    main()
