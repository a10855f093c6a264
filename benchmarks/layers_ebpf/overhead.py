#!/usr/bin/env python3
"""What observing sendto/recvfrom costs a loopback UDP ping-pong (issue 27's eBPF study).

Configurations, interleaved per repetition (the order rotates), each under the same three
sockperf workloads of 1 KiB datagrams on 127.0.0.1:
  pp1k  `sockperf ping-pong --mps 1000`  (half round trip p50 and mean, µs)
  ppmax `sockperf ping-pong --mps max`   (back to back: every call's cost is on the path)
  tp    `sockperf throughput`            (sender calls/s: the send side's per-call cost)
and the configurations:
  none        nothing attached
  tp0         scan_tp.bt with N=0: the tracepoints fire, nothing is read
  tpN         scan_tp.bt N: syscall tracepoints, the first N bytes scanned for "MWPF"
  upN         scan_uprobe.bt N: the same on glibc uprobes
  preload     LD_PRELOAD=libmwperf_layers.so on both sockperf processes (if --preload given;
              sockperf's payload has no mwperf header, so this is the no-header path)
Needs root, bpftrace, sockperf and tracefs at /sys/kernel/tracing. Medians [min..max].

    python3 benchmarks/layers_ebpf/overhead.py --reps 5 --seconds 3 [--preload PATH]
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from statistics import median

HERE = Path(__file__).resolve().parent
LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
PORT = 11400


def tracer(config: str) -> list[str] | None:
    """The bpftrace command of a configuration (None: nothing to attach)."""
    m = re.fullmatch(r"(tp|up)(\d+)", config)
    if not m:
        return None
    if m[1] == "tp":
        return ["bpftrace", str(HERE / "scan_tp.bt"), m[2], "0"]
    return ["bpftrace", str(HERE / "scan_uprobe.bt"), m[2], "0", LIBC]


def attach(cmd: list[str]) -> subprocess.Popen:
    """Start bpftrace and return once its probes are attached."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert p.stdout
    for line in p.stdout:
        if line.startswith("Attaching"):
            time.sleep(0.2)
            return p
    sys.exit(f"overhead: {' '.join(cmd)} did not attach (exit {p.wait()})")


def detach(p: subprocess.Popen) -> None:
    p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def sockperf(args: list[str], env: dict, port: int) -> str:
    server = subprocess.Popen(["sockperf", "sr", "-i", "127.0.0.1", "-p", str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    try:
        return subprocess.run(["sockperf", *args, "-i", "127.0.0.1", "-p", str(port), "-m", "1024"],
                              env=env, capture_output=True, text=True, timeout=120, check=False).stdout
    finally:
        server.terminate()
        server.wait()


def workloads(env: dict, seconds: float, port: int) -> dict[str, float]:
    """The three workloads' figures under whatever is attached now."""
    t = f"{seconds:g}"
    out: dict[str, float] = {}
    for name, args in (("pp1k", ["pp", "-t", t, "--mps", "1000"]), ("ppmax", ["pp", "-t", t, "--mps", "max"])):
        text = sockperf(args, env, port)
        out[f"{name}_p50"] = float(re.search(r"percentile 50\.000 =\s*([\d.]+)", text)[1])
        out[f"{name}_avg"] = float(re.search(r"avg-latency=([\d.]+)", text)[1])
    text = sockperf(["tp", "-t", t], env, port)
    out["tp_ns_per_call"] = 1e9 / float(re.search(r"Message Rate is (\d+)", text)[1])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--configs", default="none,tp0,tp128,tp512,up128,up512")
    ap.add_argument("--preload", help="libmwperf_layers.so: adds the configuration 'preload'")
    a = ap.parse_args()
    configs = a.configs.split(",") + (["preload"] if a.preload else [])
    runs: dict[str, list[dict[str, float]]] = {c: [] for c in configs}
    port = PORT
    for rep in range(a.reps):
        order = configs[rep % len(configs):] + configs[:rep % len(configs)]
        for c in order:
            env = dict(os.environ)
            if c == "preload":
                env["LD_PRELOAD"] = a.preload
            cmd = tracer(c)
            p = attach(cmd) if cmd else None
            try:
                port += 1
                r = workloads(env, a.seconds, port)
            finally:
                if p:
                    detach(p)
            r["load1"] = os.getloadavg()[0]
            runs[c].append(r)
            print(f"rep {rep + 1} {c}: " + " ".join(f"{k}={v:.3f}" for k, v in r.items()), file=sys.stderr)
    keys = ["pp1k_p50", "pp1k_avg", "ppmax_p50", "ppmax_avg", "tp_ns_per_call", "load1"]
    print("| config | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    for c in configs:
        cells = []
        for k in keys:
            v = [r[k] for r in runs[c]]
            cells.append(f"{median(v):.2f} [{min(v):.2f}..{max(v):.2f}]")
        print(f"| {c} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
