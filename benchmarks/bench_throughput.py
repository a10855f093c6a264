#!/usr/bin/env python3
"""Throughput (issue 26): mwperf's `--mode throughput` against each middleware's own tool, in the
same run, interleaved (reference, mwperf, mwperf, reference, ...), medians and spread.

For each transport, delivery and size: delivered messages/s and bytes/s (mwperf: its whole
messages, 56-byte header + payload; each reference sends messages of that same size), loss, and
the CPU each side spends per delivered message. Ratios mwperf / reference (goal: msgs/s and
bytes/s >= 0.95, CPU per message <= 1.10), with the spread over the interleaved pairs.

References (benchmarks/throughput_refs.py):
  udp         iperf3 -u -b 0 -l SIZE, sockperf tp (UDP)       best-effort
  tcp         iperf3 -l SIZE, sockperf tp --tcp               reliable
  uds         iperf3 TCP on loopback (the socket ceiling)     reliable
  cyclonedds  ddsperf pub size SIZE / ddsperf sub             reliable keep-all, best-effort
  zenoh       z_pub_thr / z_sub_thr (zenoh 1.10.2)            Block, Drop
  fastdds     benchmarks/fastdds_ref/throughput.cpp           reliable keep-all, best-effort
  iceoryx2    iox2_thr (iceoryx2 0.10.0)                      keep-last 10, reliable and overflow

Build the references first (`make refs`), the agent with them (same CARGO_TARGET_DIR).

    python3 benchmarks/bench_throughput.py --reps 5 --seconds 5 --write
    python3 benchmarks/bench_throughput.py --reps 1 --seconds 1 --sizes 64,1MiB   # a quick check
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import throughput_refs as refs  # noqa: E402  (run as a script: benchmarks/ is on sys.path)
from benchlib import find_agent, med, read_result, revision, stamp, write_section  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from mwperf.sizes import format_bytes, parse_size  # noqa: E402

HEADER = 56  # mwperf's header bytes: a reference message is HEADER + payload bytes
SIZES = "64,1KiB,64KiB,1MiB,4MiB"
WARMUP = 1.0

Ref = Callable[[int, float, str], dict]
# transport -> deliveries it has -> the references to compare with (name, runner)
REFERENCES: dict[str, dict[str, list[tuple[str, Ref]]]] = {
    "udp": {"best-effort": [("iperf3 UDP", lambda n, s, d: refs.iperf3(n, s, "udp")),
                            ("sockperf UDP", lambda n, s, d: refs.sockperf(n, s, "udp"))]},
    "tcp": {"reliable": [("iperf3 TCP", lambda n, s, d: refs.iperf3(n, s, "tcp")),
                         ("sockperf TCP", lambda n, s, d: refs.sockperf(n, s, "tcp"))]},
    "uds": {"reliable": [("iperf3 TCP (ceiling)", lambda n, s, d: refs.iperf3(n, s, "tcp"))]},
    "cyclonedds": {d: [("ddsperf", lambda n, s, d: refs.ddsperf(n, s, d, WARMUP))] for d in ("reliable", "best-effort")},
    "zenoh": {d: [("z_pub_thr/z_sub_thr", lambda n, s, d: refs.zenoh(n, s, d, WARMUP))] for d in ("reliable", "best-effort")},
    "fastdds": {d: [("fastdds_ref", lambda n, s, d: refs.fastdds(n, s, d, WARMUP))] for d in ("reliable", "best-effort")},
    "iceoryx2": {d: [("iox2_thr", lambda n, s, d: refs.iceoryx2(n, s, d, WARMUP))] for d in ("reliable", "best-effort")},
}
# mwperf run more ways than one beside the same references, interleaved (label -> options):
# iceoryx2's subscriber reading each sample in shared memory (loans, the default) or copying it
# out (issue 41: the copy-vs-zero-copy column); and polling its queue as iox2_thr's subscriber
# does (--busy-poll: it never blocks in a listener, so the publisher never notifies one: the
# same waiting on both sides)
VARIANTS: dict[str, list[tuple[str, list[str]]]] = {
    "iceoryx2": [("mwperf", []), ("mwperf loans=off", ["--opt", "loans=off"]),
                 ("mwperf busy-poll", ["--busy-poll"])]}
# what mwperf is given besides the defaults, so that both sides have the same QoS
MWPERF_EXTRA = {"iceoryx2": ["--history", "keep-last:10"],
                # ddsperf always batches writes (dds_write_set_batch(true) in its main)
                "cyclonedds": ["--opt", "batch=true"]}


def mwperf(agent: Path, transport: str, delivery: str, payload: int, seconds: float,
           extra: list[str]) -> dict:
    """One `mwperf run --mode throughput`; the measurement's figures in the references' form,
    or {"error": why}."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python"), "MWPERF_AGENT": str(agent)}
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "result.json"
        cmd = [sys.executable, "-m", "mwperf.cli", "run", "--mode", "throughput", "--transport", transport,
               "--reliability", delivery, "--payload", str(payload), "--duration", f"{seconds:g}s",
               "--warmup", f"{WARMUP:g}s", *MWPERF_EXTRA.get(transport, []), *extra, "--no-save", "--json-out",
               str(out)]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=seconds + 300, check=False)
        except subprocess.TimeoutExpired:
            return {"error": f"no result within {seconds + 300:g} s"}
        if not out.exists():
            return {"error": f"exit {done.returncode}: {(done.stderr.strip().splitlines() or [''])[-1]}"}
        return from_result(read_result(out.read_text()))


def from_result(r: dict) -> dict:
    """mwperf's run result (schema result.v2, throughput mode) as the references' dict."""
    m = r.get("measurement") or {}
    t = m.get("throughput") or {}
    if r.get("status") not in ("complete", "partial") or not t.get("msgs_per_s"):
        return {"error": f"status {r.get('status')}: {r.get('status_reason')}"}
    cpu = t.get("cpu") or {}
    seconds = t["duration_s"]

    def side(name: str) -> float | None:
        c = cpu.get(name) or {}
        return c.get("cpu_s")
    return {"tool": "mwperf", "delivery": t.get("delivery"), "seconds": seconds,
            "msgs_per_s": t["msgs_per_s"], "bytes_per_s": t["message_bytes_per_s"],
            "payload_bytes_per_s": t.get("payload_bytes_per_s"), "sent_per_s": t.get("sent_per_s"),
            "loss_pct": t.get("loss_pct"), "cpu_s": {"pub": side("pub"), "sub": side("sub")},
            "per_msg_us": {k: (cpu.get(k) or {}).get("per_msg_us") for k in ("pub", "sub")},
            "blocked_s": (t.get("sender") or {}).get("blocked_s")}


def per_msg_us(run: dict, side: str) -> float | None:
    """CPU µs of one side per message: the publisher's per message it sent (accepted by the
    middleware; per delivered one where the tool does not say what it sent), the subscriber's
    per message delivered. mwperf: as it reports them (the same definitions)."""
    given = (run.get("per_msg_us") or {}).get(side)
    if given is not None:
        return given
    cpu = run["cpu_s"].get(side)
    rate = (run.get("sent_per_s") or run["msgs_per_s"]) if side == "pub" else run["msgs_per_s"]
    return cpu * 1e6 / (rate * run["seconds"]) if cpu is not None and rate > 0 else None


def reference(name: str, fn: Ref, size: int, seconds: float, delivery: str) -> dict:
    try:
        return fn(size, seconds, delivery)
    except refs.Unsupported as e:
        return {"unsupported": str(e)}
    except refs.RefError as e:
        return {"error": str(e)}


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def spread(xs: list[float]) -> str:
    return f"{min(xs):.2f}–{max(xs):.2f}" if xs else "-"


def compare(mw: list[dict], ref: list[dict]) -> dict:
    """Medians of each side's good runs, and of the per-pair ratios (pair i = rep i)."""
    good = [(m, r) for m, r in zip(mw, ref) if "error" not in m and "msgs_per_s" in r]
    cpu = [(ratio(sum_us(m), sum_us(r))) for m, r in good]
    return {
        "pairs": len(good),
        "mw_msgs": med(m.get("msgs_per_s") for m in mw if "error" not in m),
        "ref_msgs": med(r.get("msgs_per_s") for r in ref if "msgs_per_s" in r),
        "mw_bytes": med(m.get("bytes_per_s") for m in mw if "error" not in m),
        "ref_bytes": med(r.get("bytes_per_s") for r in ref if "msgs_per_s" in r),
        "mw_loss": med(m.get("loss_pct") for m in mw if "error" not in m),
        "ref_loss": med(r.get("loss_pct") for r in ref if "msgs_per_s" in r),
        "mw_cpu": {s: med(per_msg_us(m, s) for m in mw if "error" not in m) for s in ("pub", "sub")},
        "ref_cpu": {s: med(per_msg_us(r, s) for r in ref if "msgs_per_s" in r) for s in ("pub", "sub")},
        "msgs_ratios": [x for x in (ratio(m["msgs_per_s"], r["msgs_per_s"]) for m, r in good) if x is not None],
        "bytes_ratios": [x for x in (ratio(m["bytes_per_s"], r["bytes_per_s"]) for m, r in good) if x is not None],
        "cpu_ratios": [x for x in cpu if x is not None],
    }


def sum_us(run: dict) -> float | None:
    """CPU µs per delivered message, both sides."""
    p, s = per_msg_us(run, "pub"), per_msg_us(run, "sub")
    return p + s if p is not None and s is not None else None


def fmt(x: float | None, digits: int = 3) -> str:
    return "-" if x is None or x != x else f"{x:.{digits}g}"


def rate(x: float | None) -> str:
    if x is None or x != x:
        return "-"
    return f"{x / 1e6:.3g} M" if x >= 1e6 else f"{x / 1e3:.3g} k" if x >= 1e3 else f"{x:.3g}"


def row(transport: str, delivery: str, size: int, name: str, c: dict) -> str:
    mr = med(c["msgs_ratios"]) if c["msgs_ratios"] else None
    cr = med(c["cpu_ratios"]) if c["cpu_ratios"] else None
    return (f"| {transport} | {delivery} | {format_bytes(size)} | {name} | {rate(c['mw_msgs'])} / {rate(c['ref_msgs'])} | "
            f"{fmt(c['mw_bytes'] / 1e6)} / {fmt(c['ref_bytes'] / 1e6)} | "
            f"**{fmt(mr)}** ({spread(c['msgs_ratios'])}) | {fmt(c['mw_loss'], 2)} / {fmt(c['ref_loss'], 2)} | "
            f"{fmt(c['mw_cpu']['pub'])} + {fmt(c['mw_cpu']['sub'])} / {fmt(c['ref_cpu']['pub'])} + {fmt(c['ref_cpu']['sub'])} | "
            f"**{fmt(cr)}** ({spread(c['cpu_ratios'])}) |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5, help="interleaved repetitions per point (default 5)")
    ap.add_argument("--seconds", type=float, default=5, help="measured seconds per run (default 5)")
    ap.add_argument("--sizes", default=SIZES, help=f"payload sizes, comma-separated (default {SIZES})")
    ap.add_argument("--transports", default=",".join(REFERENCES), help="transports to measure (default: all with a reference)")
    ap.add_argument("--deliveries", default="reliable,best-effort", help="deliveries to measure (default both; a socket is measured in its own whatever this says)")
    ap.add_argument("--agent", help="the mwperf-agent to measure (default: $MWPERF_AGENT, else the release build)")
    ap.add_argument("--write", action="store_true", help="update BENCHMARKS.md between the bench:throughput markers")
    a = ap.parse_args()
    sizes = [parse_size(s) for s in a.sizes.split(",")]
    transports = a.transports.split(",")
    unknown = [t for t in transports if t not in REFERENCES]
    if unknown:
        sys.exit(f"bench_throughput: no reference for {', '.join(unknown)} (have: {', '.join(REFERENCES)})")
    agent = find_agent(a.agent, "bench_throughput")

    rows, notes = [], []
    for transport in transports:
        for delivery, references in REFERENCES[transport].items():
            if delivery not in a.deliveries.split(",") and len(REFERENCES[transport]) > 1:
                continue  # a socket has one delivery: measured in it whatever --deliveries says
            for payload in sizes:
                size = HEADER + payload
                variants = VARIANTS.get(transport, [("mwperf", [])])
                mw: dict[str, list[dict]] = {label: [] for label, _ in variants}
                ref: dict[str, list[dict]] = {name: [] for name, _ in references}
                for i in range(a.reps):
                    steps = [(label, None, extra) for label, extra in variants] + \
                        [(name, fn, []) for name, fn in references]
                    for name, fn, extra in (steps if i % 2 else steps[::-1]):
                        r = mwperf(agent, transport, delivery, payload, a.seconds, extra) if fn is None else \
                            reference(name, fn, size, a.seconds, delivery)
                        (mw[name] if fn is None else ref[name]).append(r)
                        say = r.get("error") or r.get("unsupported") or \
                            f"{rate(r['msgs_per_s'])}msg/s {r['bytes_per_s'] / 1e6:.1f} MB/s loss {fmt(r.get('loss_pct'), 2)} % " \
                            f"CPU/msg {fmt(per_msg_us(r, 'pub'))}+{fmt(per_msg_us(r, 'sub'))} µs"
                        print(f"{transport} {delivery} {format_bytes(payload)} rep {i + 1}/{a.reps} {name}: {say}",
                              file=sys.stderr)
                point = f"{transport} {delivery} {format_bytes(payload)}"
                for label, runs in mw.items():
                    notes.extend(f"{point}: {label}: {e}" for e in sorted({r["error"] for r in runs if "error" in r}))
                for name, _ in references:
                    good = [r for r in ref[name] if "msgs_per_s" in r]
                    why = sorted({r.get("unsupported") or r.get("error") for r in ref[name] if r not in good})
                    notes.extend(f"{point}: {name}: {w}" for w in why)
                    for label, runs in mw.items():
                        shown = transport if label == "mwperf" else f"{transport} ({label.removeprefix('mwperf ')})"
                        if good:
                            rows.append(row(shown, delivery, payload, name, compare(runs, ref[name])))
                        elif any("error" not in r for r in runs):
                            alone = med(r["msgs_per_s"] for r in runs if "error" not in r)
                            notes.append(f"{point}: {label} alone (no {name} figure): {rate(alone)}msg/s")

    text = "\n".join([
        f"Measured {stamp()} at {revision()}: {a.reps} interleaved repetitions of {a.seconds:g} s after "
        f"{WARMUP:g} s warm-up, medians (`python3 benchmarks/bench_throughput.py`). Size = mwperf's payload; "
        f"both sides send messages of {HEADER} B + that. Delivered msgs/s and MB/s (1e6 B of whole messages), "
        "mwperf / reference; the ratio of msgs/s per interleaved pair, median (spread); loss %; CPU µs per "
        "message, pub (per message sent) + sub (per message delivered); the ratio of that CPU (goal: msgs/s >= 0.95, CPU <= 1.10).",
        "",
        "| transport | delivery | size | reference | msgs/s | MB/s | msgs/s ratio | loss % | CPU µs/msg | CPU ratio |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        *([""] + [f"- {n}" for n in dict.fromkeys(notes)] if notes else []),
    ])
    print(text)
    if a.write:
        write_section("throughput", text)


if __name__ == "__main__":
    main()
