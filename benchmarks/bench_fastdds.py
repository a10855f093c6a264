#!/usr/bin/env python3
"""Fast DDS through mwperf against a minimal C++ ping/pong on the same library, in the same run,
then Fast DDS beside Cyclone DDS and iceoryx2 (and the cyclonedds <-> fastdds interop pairs).

Part 1, the reference: benchmarks/fastdds_ref/pingpong.cpp (plain Fast DDS 2.x DDS API, no mwperf
code; built here with g++ against Debian's libfastrtps) and mwperf-agent ping/pong
--transport fastdds, interleaved (reference, mwperf, reference, ...), both with reliable
keep-last 1, synchronous publishing, UDPv4 on 127.0.0.1 with unicast discovery, shared memory
on and off, the same 64-byte message (mwperf: 56-byte header + 8). Printed: medians over the
repetitions of RTT p50/p99 and the ratio mwperf p50 / reference p50 (goal <= 1.10) with its
spread over the interleaved pairs.

Part 2, side by side: mwperf RTT p50/p99 and answered fraction for Struct256, Array1k, Array64k,
PointCloud512k at 1 kHz and closed loop over fastdds (shm on), fastdds (shm off), cyclonedds,
iceoryx2, and cyclonedds ping -> fastdds pong and the reverse (interop: UDP on the wire).
Data-sharing is not measured: Fast DDS shares data only for bounded types and mwperf's message
is a ROS 2 uint8[] (unbounded), which the transport refuses with that reason.

    python3 benchmarks/bench_fastdds.py --reps 5 --seconds 3 --write
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import CpuIdleHeld, find_agent, measurement_of, med, revision, stamp, stop, write_section  # noqa: E402  (run as a script)

ROOT = Path(__file__).resolve().parents[1]
HEADER = 56
REF_SRC = ROOT / "benchmarks" / "fastdds_ref" / "pingpong.cpp"
PAYLOADS = {"Struct256": 256, "Array1k": 1024, "Array64k": 65536, "PointCloud512k": 524288}


def build_reference(out: Path) -> Path:
    binary = out / "fastdds-pingpong"
    cmd = ["g++", "-std=c++17", "-O2", "-o", str(binary), str(REF_SRC), "-lfastrtps", "-lfastcdr"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench_fastdds: building the reference failed ({' '.join(cmd)}):\n{done.stderr[-2000:]}")
    return binary


def reference_rtt(binary: Path, domain: int, shm: bool, size: int, rate: int, seconds: float) -> tuple[float, float]:
    pong = subprocess.Popen([str(binary), "pong", str(domain), str(int(shm))], stdout=subprocess.PIPE, text=True)
    try:
        if pong.stdout.readline().strip() != "READY":
            sys.exit("bench_fastdds: the reference pong did not start")
        out = subprocess.run([str(binary), "ping", str(domain), str(int(shm)), str(size), str(rate),
                              str(seconds), "1"], capture_output=True, text=True, timeout=seconds + 60).stdout.split()
    finally:
        stop(pong)
    # "count N p50_ns X p99_ns Y"
    fields = dict(zip(out[::2], out[1::2]))
    if int(fields.get("count", 0)) == 0:
        sys.exit(f"bench_fastdds: the reference measured nothing: {' '.join(out)}")
    return float(fields["p50_ns"]), float(fields["p99_ns"])


def mwperf_rtt(agent: Path, pong_transport: str, ping_transport: str, listen: str, opts: list[str], qos: list[str],
               payload: int, rate: int, seconds: float) -> tuple[float, float, float] | None:
    """(RTT p50 ns, p99 ns, answered fraction), or None when the point could not run. `opts` go
    to the fastdds sides only, `qos` to both."""
    pong = subprocess.Popen([str(agent), "pong", "--transport", pong_transport, "--listen", listen, "--quiet", *qos,
                             *(opts if pong_transport == "fastdds" else [])],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = pong.stdout.readline().split()
        if not line or line[0] != "READY":
            return None
        with tempfile.TemporaryDirectory() as d:
            out = f"{d}/ping.json"
            subprocess.run([str(agent), "ping", "--transport", ping_transport, "--connect", line[2], "--rate", str(rate),
                            "--payload", str(payload), "--duration", f"{seconds}s", "--warmup", "1s", "--quiet",
                            "--json", out, *qos, *(opts if ping_transport == "fastdds" else [])],
                           check=False, timeout=seconds + 60, stderr=subprocess.DEVNULL)
            try:
                m = measurement_of(json.load(open(out)))
            except (OSError, ValueError, KeyError, TypeError):
                return None
    finally:
        stop(pong)
    acc = m["accounting"]
    if not acc.get("received"):
        return None
    # service time = receive - actual send, what the C++ reference measures (its clock starts at
    # its write); "response" (from the intended send time) adds the sender's wake-up lateness
    return m["service"]["p50_ns"], m["service"]["p99_ns"], acc["received"] / max(acc["sent"], 1)


def us(ns: float) -> str:
    return "—" if ns != ns else (f"{ns / 1e3:.1f} µs" if ns < 1e6 else f"{ns / 1e6:.2f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--domain", type=int, default=96)
    ap.add_argument("--agent")
    ap.add_argument("--skip-matrix", action="store_true", help="part 1 only")
    ap.add_argument("--prevent-cpu-idle", action="store_true",
                    help="hold /dev/cpu_dma_latency at 0 for the whole run (both tools alike): no idle-state exits")
    ap.add_argument("--section", default="fastdds", help="the BENCHMARKS.md section --write updates")
    ap.add_argument("--write", action="store_true", help="update BENCHMARKS.md between the bench:fastdds markers")
    a = ap.parse_args()
    agent = find_agent(a.agent, "bench_fastdds")
    CpuIdleHeld(a.prevent_cpu_idle).__enter__()  # held until this process exits
    idle = ("CPUs held out of idle states (--prevent-cpu-idle)" if a.prevent_cpu_idle
            else "CPUs free to idle (the machine's default)")
    with tempfile.TemporaryDirectory() as d:
        ref = build_reference(Path(d))
        rows = []
        for shm in (True, False):
            opts = ["--opt", f"shm={'on' if shm else 'off'}"]
            for rate in (0, 1000):
                r, m = [], []
                for i in range(a.reps):
                    r.append(reference_rtt(ref, a.domain, shm, 64, rate, a.seconds))
                    got = mwperf_rtt(agent, "fastdds", "fastdds", f"{a.domain}/auto", opts, ["--history", "keep-last:1"], 64 - HEADER,
                                     rate, a.seconds)
                    m.append(got)
                    print(f"  shm {'on' if shm else 'off'} rate {rate or 'max'} rep {i + 1}: reference p50 {r[-1][0] / 1e3:.1f} µs, "
                          f"mwperf {got[0] / 1e3 if got else float('nan'):.1f} µs", file=sys.stderr)
                pairs = sorted(x[0] / y[0] for x, y in zip(m, r) if x)
                mp50, rp50 = med(x[0] for x in m if x), med(x[0] for x in r)
                rows.append(f"| {'shared memory' if shm else 'UDP only'} | {'1000 Hz' if rate else 'closed loop'} | {us(mp50)} | {us(rp50)} "
                            f"| **{mp50 / rp50:.3f}** | {pairs[0]:.2f}–{pairs[-1]:.2f} | {us(med(x[1] for x in m if x))} / {us(med(x[1] for x in r))} |")
                print(rows[-1], file=sys.stderr)
    matrix = []
    if not a.skip_matrix:
        configs = [("fastdds, shm on", "fastdds", "fastdds", ["--opt", "shm=on"]),
                   ("fastdds, shm off (UDP)", "fastdds", "fastdds", ["--opt", "shm=off"]),
                   ("cyclonedds", "cyclonedds", "cyclonedds", []),
                   ("iceoryx2", "iceoryx2", "iceoryx2", []),
                   ("cyclonedds ping → fastdds pong", "fastdds", "cyclonedds", []),
                   ("fastdds ping → cyclonedds pong", "cyclonedds", "fastdds", [])]
        for name, pong_t, ping_t, opts in configs:
            cells = []
            for payload, size in PAYLOADS.items():
                for rate in (1000, 0):
                    listen = "auto" if pong_t == "iceoryx2" else f"{a.domain}/auto"
                    got = mwperf_rtt(agent, pong_t, ping_t, listen, opts, [], size, rate, max(2.0, a.seconds - 1))
                    cells.append("—" if got is None else f"{us(got[0])} / {us(got[1])}" + ("" if rate == 0 or got[2] > 0.99 else f" ({100 * got[2]:.0f} %)"))
                    print(f"  {name} {payload} {rate or 'max'}: {cells[-1]}", file=sys.stderr)
            matrix.append(f"| {name} | " + " | ".join(cells) + " |")
    head = " | ".join(f"{p} {r}" for p in PAYLOADS for r in ("1 kHz", "max"))
    text = "\n".join([
        f"Measured {stamp()} at {revision()}, {a.reps} interleaved repetitions of {a.seconds:g} s after 1 s warm-up, medians; "
        f"reliable keep-last 1, synchronous publishing, 127.0.0.1 with unicast discovery; {idle}.",
        "",
        "| Fast DDS RTT, 64-byte message | transport | mwperf p50 (service time) | C++ reference p50 | ratio (goal ≤ 1.10) | ratio per pair, min–max | p99 mwperf / reference |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        *([f"RTT p50 / p99 by mwperf, {max(2.0, a.seconds - 1):g} s per cell, one run each (a percentage: the share answered "
           "where not all were; reliable keep-last 10 by default, so large messages at 1 kHz queue):",
           "",
           f"| pair | {head} |",
           "|---|" + "---|" * (2 * len(PAYLOADS)),
           *matrix, ""] if matrix else []),
        "Data-sharing (Fast DDS's zero-copy) is not in the table: it needs a bounded type, mwperf's message is a ROS 2",
        "`uint8[]` (unbounded), and `--opt data-sharing=on` is refused saying so.",
        "",
        "```",
        f"python3 benchmarks/bench_fastdds.py --reps {a.reps} --seconds {a.seconds:g}{' --skip-matrix' if a.skip_matrix else ''} --write",
        "# reference: g++ -std=c++17 -O2 benchmarks/fastdds_ref/pingpong.cpp -lfastrtps -lfastcdr; pingpong pong D SHM & pingpong ping D SHM 64 0|1000 S 1",
        "# mwperf: mwperf-agent pong --transport fastdds --listen D/auto --opt shm=on|off --history keep-last:1 & "
        "mwperf-agent ping --transport fastdds --connect <READY addr> --rate 0|1000 --payload 8 --warmup 1s --history keep-last:1 --opt shm=on|off",
        "```",
    ])
    print(text)
    if a.write:
        write_section(a.section, text)


if __name__ == "__main__":
    main()
