"""What DDS-Security costs Cyclone DDS, Fast DDS and RustDDS (issue 42): the round trip of 256 B at 100 Hz plain
and under `--secure auth`, `sign` and `encrypt` (p50, p99), and the time to the first match and the first
echo (the result's discovery figures: the handshake), in interleaved repetitions; and once per
repetition Cyclone's own ddsperf ping/pong secured with encrypt, with a PKI made the same way
(python/mwperf/security/), as the independent check of the secured p50.

    python3 benchmarks/bench_secure.py --reps 3 --seconds 10 [--write]

mwperf's p50/p99 are its headline response (receive - intended send); the ddsperf check compares
its service time (receive - actual send), which is what ddsperf's clock sees, with 2 x ddsperf's
50% (ddsperf prints half the round trip; message size 312 B = mwperf's 56-byte header + 256)."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_cyclonedds import DDSPERF_LINE
from benchlib import ROOT, med, read_result, revision, spread, stamp, write_section

sys.path.insert(0, str(ROOT / "python"))
from mwperf.security.cyclonedds import merged_config  # noqa: E402
from mwperf.security.files import make_run_pki  # noqa: E402
from mwperf.transports.cyclonedds import loopback_config  # noqa: E402

MODES = ("plain", "auth", "sign", "encrypt")
TRANSPORTS = ("cyclonedds", "fastdds", "rustdds")
HEADER = 56
CRASHES: list[str] = []
"""points whose measurement completed but whose status did not (an agent killed by a signal)"""


def mwperf(transport: str, mode: str, seconds: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    done = subprocess.run([sys.executable, "-m", "mwperf.cli", "run", "--transport", transport,
                           "--rate", "100", "--payload", "256", "--duration", f"{seconds}s",
                           "--no-save", "--json", *([] if mode == "plain" else ["--secure", mode])],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    result = read_result(done.stdout) if done.stdout.strip() else None
    if result is None or result["measurement"] is None:
        sys.exit(f"bench_secure: {transport} {mode}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
    if result["status"] != "complete":  # e.g. an agent's crash after its report: said, counted
        print(f"bench_secure: {transport} {mode}: {result['status']}: {result['status_reason']}",
              file=sys.stderr)
        CRASHES.append(f"{transport} {mode}: {result['status_reason']}")
    m, found = result["measurement"], result["discovery"]
    acc = m["accounting"]
    pong = next(a for a in result["agents"] if a["role"] == "pong")["counters"]
    if not pong["echoed"] >= acc["received"] + acc["warmup_received"]:  # the peer's own count
        sys.exit(f"bench_secure: {transport} {mode}: the pong echoed {pong['echoed']}, the ping "
                 f"received {acc['received']} + {acc['warmup_received']} in warm-up")
    return {"lost": acc["lost"], "pong_received": pong["received"],
            "sent": acc["sent"] + acc["warmup_sent"],"p50_us": m["response"]["p50_ns"] / 1e3, "p99_us": m["response"]["p99_ns"] / 1e3,
            "service_p50_us": m["service"]["p50_ns"] / 1e3,
            "matched_ms": found["matched_ns"] / 1e6,
            "first_echo_ms": (found["first_reply_ns"] or 0) / 1e6}


def ddsperf_secured(domain: int, seconds: int) -> float:
    """2 x the median of ddsperf's per-second 50% lines (first dropped), ping and pong each
    with its own identity of an encrypt PKI; µs."""
    with tempfile.TemporaryDirectory(prefix="bench-secure-") as folder:
        ids = make_run_pki(Path(folder) / "pki", "encrypt", ("ping", "pong"))
        env = {role: dict(os.environ, CYCLONEDDS_URI=merged_config(loopback_config(), ids[role]))
               for role in ids}
        pong = subprocess.Popen(["ddsperf", "-i", str(domain), "-D", str(seconds + 10), "pong"],
                                env=env["pong"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            out = subprocess.run(["ddsperf", "-i", str(domain), "-D", str(seconds + 1), "-Q",
                                  "minmatch:1", "-Q", "initwait:10", "ping", "100Hz", "size",
                                  str(256 + HEADER)], env=env["ping"], capture_output=True,
                                 text=True, timeout=seconds + 60).stdout
        finally:
            pong.terminate()
            pong.wait(10)
    lines = DDSPERF_LINE.findall(out)[1:]
    if not lines:
        sys.exit(f"bench_secure: no ddsperf figures; its output was:\n{out}")
    return 2 * statistics.median(float(p50) for _, p50, _, _ in lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--domain", type=int, default=45, help="ddsperf's DDS domain")
    parser.add_argument("--write", action="store_true", help="write BENCHMARKS.md's section")
    args = parser.parse_args()
    figures: dict[tuple[str, str, str], list[float]] = {}
    load = os.getloadavg()
    for rep in range(args.reps):
        order = MODES if rep % 2 == 0 else tuple(reversed(MODES))
        for transport in TRANSPORTS:
            for mode in order:
                for key, value in mwperf(transport, mode, args.seconds).items():
                    figures.setdefault((transport, mode, key), []).append(value)
        figures.setdefault(("ddsperf", "encrypt", "p50_us"), []).append(
            ddsperf_secured(args.domain, args.seconds))
        print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr)
    load_end = os.getloadavg()
    lines = [f"Measured {stamp()} at {revision()} (`python3 benchmarks/bench_secure.py --reps "
             f"{args.reps} --seconds {args.seconds}`), round trip 256 B @ 100 Hz, "
             f"medians of {args.reps} interleaved repetitions (min-max); load average "
             f"{load[0]:.2f} at the start, {load_end[0]:.2f} at the end (2 CPUs, shared):", "",
             "| transport | --secure | p50 µs | p99 µs | p50 ratio to plain | matched ms | "
             "first echo ms | lost (all reps) | pings sent / pong received (all reps) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for transport, mode in ((t, m) for t in TRANSPORTS for m in MODES):
        plain = med(figures[(transport, "plain", "p50_us")])
        p50, p99 = figures[(transport, mode, "p50_us")], figures[(transport, mode, "p99_us")]
        matched = figures[(transport, mode, "matched_ms")]
        echo = figures[(transport, mode, "first_echo_ms")]
        lines.append(f"| {transport} | {mode} | {med(p50):,.1f} ({spread(p50)}) | {med(p99):,.1f} "
                     f"({spread(p99)}) | {med(p50) / plain:.2f} | {med(matched):,.0f} "
                     f"({spread(matched)}) | {med(echo):,.0f} ({spread(echo)}) | "
                     f"{sum(figures[(transport, mode, 'lost')]):.0f} | "
                     f"{sum(figures[(transport, mode, 'sent')]):.0f} / "
                     f"{sum(figures[(transport, mode, 'pong_received')]):.0f} |")
    ours = figures[("cyclonedds", "encrypt", "service_p50_us")]
    theirs = figures[("ddsperf", "encrypt", "p50_us")]
    lines += ["", f"Check: ddsperf ping/pong secured with encrypt (each its own identity of a PKI "
              f"made by python/mwperf/security/), 312 B @ 100 Hz, 2 x its 50%: "
              f"{med(theirs):,.1f} µs ({spread(theirs)}); mwperf cyclonedds encrypt's service-time "
              f"p50 "
              f"{med(ours):,.1f} µs ({spread(ours)}), ratio {med(ours) / med(theirs):.2f}."]
    lines.append(f"Points not complete: {len(CRASHES)} of "
                 f"{args.reps * len(MODES) * len(TRANSPORTS)}"
                 + (f" ({'; '.join(CRASHES)})" if CRASHES else "") + ".")
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section("security", text)


if __name__ == "__main__":
    main()
