#!/usr/bin/env python3
"""mwperf over Cyclone DDS against Cyclone's own ddsperf, measured in the same run.

Interleaved repetitions (ddsperf, mwperf, ddsperf, ...) of a ping/pong pair in separate processes
on loopback, both in one DDS domain with the same Cyclone configuration (mwperf's loopback config,
handed to ddsperf through CYCLONEDDS_URI), reliable keep-last 1 (ddsperf's ping/pong QoS), waitset
wake-ups on both sides, the same message size (ddsperf `size 64` = its 64-byte KS sample; mwperf
`--payload 8` = 56-byte header + 8 bytes). ddsperf prints HALF the round trip: its figures are
doubled here. Prints medians over the repetitions and the ratio
mwperf RTT p50 / (2 x ddsperf 50%) (target <= 1.10), the spread of that ratio over the interleaved
pairs, and what one round trip costs each tool: CPU time (user + system, ping + pong) and context
switches per round trip, from the kernel's counters of each process (wait4: the process's own,
all its threads). Those two do not move with the machine's load the way latency does, so they
tell whether a latency gap is work the tool does or the scheduler's timing.
Standalone: python3 only, no extra packages.

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
from typing import NamedTuple

from benchlib import CpuIdleHeld, find_agent, measurement_of, med, revision, stamp, write_section  # noqa: E402  (run as a script: benchmarks/ is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
HEADER = 56  # mwperf header bytes

sys.path.insert(0, str(ROOT / "python"))
from mwperf.transports.cyclonedds import loopback_config  # noqa: E402  (the agents' own)

DDSPERF_LINE = re.compile(r"size (\d+) mean [\d.]+us min [\d.]+us 50% ([\d.]+)us 90% [\d.]+us 99% ([\d.]+)us max [\d.]+us cnt (\d+)")


class Run(NamedTuple):
    """One tool's ping/pong run: RTT p50/p99 (ns), answered fraction at a fixed rate, and per
    round trip the CPU (µs, ping + pong) and context switches (voluntary + involuntary, both)."""
    p50: float
    p99: float
    answered: float | None
    cpu_us: float
    switches: float


def finish(proc: subprocess.Popen, terminate: bool) -> os.struct_rusage:
    """Stop (optionally) and reap `proc`; its own resource usage (all its threads, not this
    script's: wait4 of that pid)."""
    if terminate:
        proc.terminate()
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0  # reaped here: keep Popen from waiting again
    return usage


def per_rt(ping: os.struct_rusage, pong: os.struct_rusage, round_trips: int) -> tuple[float, float]:
    """(CPU µs, context switches) per round trip of ping and pong together."""
    n = max(round_trips, 1)
    cpu = sum(u.ru_utime + u.ru_stime for u in (ping, pong))
    switches = sum(u.ru_nvcsw + u.ru_nivcsw for u in (ping, pong))
    return cpu * 1e6 / n, switches / n


def ddsperf_rtt(domain: int, seconds: float, size: int, rate: int) -> Run:
    """Medians of ddsperf's per-second lines after the first, doubled; answered = pongs counted /
    (rate x seconds counted); the costs over all the round trips its lines counted."""
    env = dict(os.environ, CYCLONEDDS_URI=loopback_config())
    dur = str(int(seconds) + 1)
    pong = subprocess.Popen(["ddsperf", "-i", str(domain), "-D", str(int(seconds) + 10), "pong", "waitset"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ping_args = ["ping"] + ([f"{rate}Hz"] if rate else []) + ["size", str(size), "waitset"]
        ping = subprocess.Popen(["ddsperf", "-i", str(domain), "-D", dur, "-Q", "minmatch:1", "-Q", "initwait:10", *ping_args],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        out = ping.stdout.read()
        ping_usage = finish(ping, terminate=False)
    finally:
        pong_usage = finish(pong, terminate=True)
    all_lines = DDSPERF_LINE.findall(out)
    lines = all_lines[1:]  # the first second holds discovery and warm-up
    if not lines:
        sys.exit(f"bench_cyclonedds: no ddsperf figures; its output was:\n{out}")
    half50 = statistics.median(float(p50) for _, p50, _, _ in lines)
    half99 = statistics.median(float(p99) for _, _, p99, _ in lines)
    answered = sum(int(cnt) for *_, cnt in lines) / (rate * len(lines)) if rate else None
    cpu, switches = per_rt(ping_usage, pong_usage, sum(int(cnt) for *_, cnt in all_lines))
    return Run(2 * half50 * 1e3, 2 * half99 * 1e3, answered, cpu, switches)


def mwperf_rtt(agent: Path, domain: int, seconds: float, size: int, rate: int, extra: list[str]) -> Run:
    qos = ["--history", "keep-last:1"]
    pong = subprocess.Popen([str(agent), "pong", "--transport", "cyclonedds", "--listen", f"{domain}/auto", "--quiet", *qos],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = pong.stdout.readline().split()
        if not line or line[0] != "READY":
            sys.exit("bench_cyclonedds: mwperf-agent pong did not start")
        with tempfile.TemporaryDirectory() as d:
            out = f"{d}/ping.json"
            ping = subprocess.Popen([str(agent), "ping", "--transport", "cyclonedds", "--connect", line[2], "--rate", str(rate),
                                     "--payload", str(size - HEADER), "--duration", f"{seconds}s", "--warmup", "1s", "--quiet",
                                     "--json", out, *qos, *extra])
            ping_usage = finish(ping, terminate=False)
            m = measurement_of(json.load(open(out)))
    finally:
        pong_usage = finish(pong, terminate=True)
    acc = m["accounting"]
    answered = acc["received"] / max(acc["sent"], 1) if rate else None
    cpu, switches = per_rt(ping_usage, pong_usage, acc["received"] + acc.get("warmup_received", 0))
    # service time = receive - actual send, what ddsperf measures; mwperf's headline "response"
    # is receive - *intended* send, which at a fixed rate adds the sender's wake-up lateness
    # (docs/results.md), a cost ddsperf's clock does not see
    return Run(m["service"]["p50_ns"], m["service"]["p99_ns"], answered, cpu, switches)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=4)
    ap.add_argument("--size", type=int, default=64, help="message bytes (ddsperf size; mwperf header + payload)")
    ap.add_argument("--domain", type=int, default=97, help="DDS domain for both tools (keep other DDS runs out)")
    ap.add_argument("--agent", help="mwperf-agent binary (default: $MWPERF_AGENT or target/release)")
    ap.add_argument("--rates", default="0,1000", help="comma-separated ping rates in Hz (0 = closed loop)")
    ap.add_argument("--ping-arg", action="append", default=[], metavar="ARG",
                    help="an extra mwperf-agent ping argument (repeat), e.g. --ping-arg=--spin-margin=0")
    ap.add_argument("--prevent-cpu-idle", action="store_true",
                    help="hold /dev/cpu_dma_latency at 0 for the whole run (both tools alike): no idle-state exits")
    ap.add_argument("--section", default="cyclonedds", help="the BENCHMARKS.md section --write updates")
    ap.add_argument("--write", action="store_true", help="update BENCHMARKS.md between the bench:cyclonedds markers")
    a = ap.parse_args()
    agent = find_agent(a.agent, "bench_cyclonedds")
    CpuIdleHeld(a.prevent_cpu_idle).__enter__()  # held until this process exits
    idle = ("CPUs held out of idle states (--prevent-cpu-idle)" if a.prevent_cpu_idle
            else "CPUs free to idle (the machine's default)")
    rows = []
    rates = [int(r) for r in a.rates.split(",")]
    for rate, label in ((r, f"{r} Hz" if r else "closed loop (rate max)") for r in rates):
        mw: list[Run] = []
        dp: list[Run] = []
        for i in range(a.reps):
            dp.append(ddsperf_rtt(a.domain, a.seconds, a.size, rate))
            mw.append(mwperf_rtt(agent, a.domain, a.seconds, a.size, rate, a.ping_arg))
            print(f"  {label} rep {i + 1}: RTT p50 ddsperf {dp[-1].p50 / 1e3:.2f} µs, mwperf {mw[-1].p50 / 1e3:.2f} µs; "
                  f"CPU/RT {dp[-1].cpu_us:.1f} / {mw[-1].cpu_us:.1f} µs; switches/RT {dp[-1].switches:.2f} / {mw[-1].switches:.2f}",
                  file=sys.stderr)
        m50, m99 = med(x.p50 for x in mw), med(x.p99 for x in mw)
        d50, d99 = med(x.p50 for x in dp), med(x.p99 for x in dp)
        pairs = sorted(m.p50 / d.p50 for m, d in zip(mw, dp))
        answered = f"{100 * med(x.answered for x in mw):.1f} / {100 * med(x.answered for x in dp):.1f} %" if rate else "closed loop"
        rows.append(f"| {label} | {m50 / 1e3:.2f} µs | {d50 / 1e3:.2f} µs | **{m50 / d50:.3f}** | {pairs[0]:.2f}–{pairs[-1]:.2f} "
                    f"| {m99 / 1e3:.1f} / {d99 / 1e3:.1f} µs | {answered} "
                    f"| {med(x.cpu_us for x in mw):.1f} / {med(x.cpu_us for x in dp):.1f} µs "
                    f"| {med(x.switches for x in mw):.2f} / {med(x.switches for x in dp):.2f} |")
        print(rows[-1], file=sys.stderr)
    when = stamp()
    rev = revision()
    text = "\n".join([
        f"Measured {when} at {rev}, {a.reps} interleaved repetitions of {a.seconds:g} s, medians; "
        f"{a.size}-byte messages, reliable keep-last 1, waitset on both sides, loopback config of the transport; {idle}.",
        "",
        "| RTT, Cyclone DDS | mwperf p50 (service time) | ddsperf p50 (2 × its 50%) | ratio (target ≤ 1.10) | ratio per pair, min–max "
        "| p99 mwperf / ddsperf | answered mwperf / ddsperf | CPU per round trip mwperf / ddsperf | context switches per round trip |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "ddsperf prints percentiles per second: its p50/p99 here are the medians of those lines (first second",
        "dropped), doubled; mwperf's are over the whole measurement, so its p99 keeps outliers ddsperf's smooths.",
        "At a fixed rate, keep-last 1 drops a message whenever the next one arrives before the receiver took it",
        "(a sender catching up after being descheduled sends two back to back; measured: no loss with keep-last 10),",
        "for both tools alike; \"answered\" shows how often. CPU and context switches per round trip: ping and",
        "pong together, user + system time and voluntary + involuntary switches from each process's own kernel",
        "counters (wait4), over all its round trips including warm-up; they change little with the machine's load.",
        "mwperf's figure is its service time (receive - actual send), which is what ddsperf's clock measures; at",
        "a fixed rate mwperf's headline response time also counts the sender's lateness against its schedule.",
        "",
        "```",
        f"python3 benchmarks/bench_cyclonedds.py --reps {a.reps} --seconds {a.seconds:g} --size {a.size} --write",
        f"# ddsperf side: CYCLONEDDS_URI='<loopback config>' ddsperf -i {a.domain} pong waitset & "
        f"ddsperf -i {a.domain} -D {int(a.seconds) + 1} -Q minmatch:1 -Q initwait:10 ping [1000Hz] size {a.size} waitset",
        f"# mwperf side: mwperf-agent pong --transport cyclonedds --listen {a.domain}/auto --history keep-last:1 & "
        f"mwperf-agent ping --transport cyclonedds --connect <READY addr> --rate 0|1000 --payload {a.size - HEADER} "
        f"--history keep-last:1 --duration {a.seconds:g}s --warmup 1s{''.join(' ' + x for x in a.ping_arg)}",
        "```",
    ])
    print(text)
    if a.write:
        write_section(a.section, text)


if __name__ == "__main__":
    main()
