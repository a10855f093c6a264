"""What securing the middleware costs its throughput (issue 42): `mwperf run --mode throughput`
plain and secured, side by side in interleaved repetitions, 1 KiB and 64 KiB, reliable: the
messages per second delivered, the CPU each side spends per message, and the loss; each secured
figure as a ratio to plain of the same repetition's transport and size.

    python3 benchmarks/bench_secure_throughput.py --reps 3 --seconds 3 [--write]

Checked independently: every point's delivered count is the subscriber's own count of the
messages the publisher counted sending (the result's accounting: received + lost + undelivered
= sent, lost named; a reliable stream cut off with a backlog is no figure), and a secured
point's loss is reported next to its rate, so a mode that "delivers faster" by losing is seen
as such."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_throughput import from_result
from benchlib import ROOT, med, read_result, revision, spread, stamp, write_section

STREAMS = (("cyclonedds", "plain", ()), ("cyclonedds", "encrypt", ()),
           ("fastdds", "plain", ()), ("fastdds", "encrypt", ()),
           ("rustdds", "plain", ()), ("rustdds", "encrypt", ()),
           ("zenoh", "plain", ()), ("zenoh", "tls", ()), ("zenoh", "tls", ("--opt", "link=quic")),
           ("mqtt", "plain", ()), ("mqtt", "tls", ()),
           ("foxglove", "plain", ()), ("foxglove", "tls", ()))
"""(transport, --secure, more flags): each transport plain and with its strongest protection
on one machine (DDS encrypt; TLS; zenoh's TLS link and QUIC)"""
PAYLOADS = (1024, 65536)
WARMUP_S = 0.5


def label(mode: str, more: tuple[str, ...]) -> str:
    """The mode as the report names it (security/modes.py's mode_label)."""
    sys.path.insert(0, str(ROOT / "python"))
    from mwperf.security.modes import mode_label
    return mode_label(mode, [o for o in more if o != "--opt"])


def point(transport: str, mode: str, more: tuple[str, ...], payload: int,
          seconds: float) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "result.json"
        secure = [] if mode == "plain" else ["--secure", mode]
        try:
            done = subprocess.run([sys.executable, "-m", "mwperf.cli", "run", "--mode",
                                   "throughput", "--transport", transport, "--reliability",
                                   "reliable", "--payload", str(payload), "--duration",
                                   f"{seconds:g}s", "--warmup", f"{WARMUP_S:g}s", *secure, *more,
                                   "--no-save", "--json-out", str(out)],
                                  capture_output=True, text=True, env=env,
                                  timeout=seconds + 300, check=False)
        except subprocess.TimeoutExpired:
            return {"error": f"no result within {seconds + 300:g} s"}
        if not out.exists():
            return {"error": f"exit {done.returncode}: "
                             f"{(done.stderr.strip().splitlines() or [''])[-1]}"}
        result = read_result(out.read_text())
    acc = (result.get("measurement") or {}).get("accounting") or {}
    held = acc.get("undelivered", 0)
    if result.get("status") != "failed" and acc and (
            acc["received"] + acc["lost"] + held != acc["sent"]):
        sys.exit(f"bench_secure_throughput: {transport} {mode} {payload}: received "
                 f"{acc['received']} + lost {acc['lost']} + undelivered {held} != sent "
                 f"{acc['sent']}")
    if held:  # not a steady rate: the stream was cut off with a backlog (merge.py)
        return {"error": f"{held} of {acc['sent']} undelivered when cut off"}
    figures = from_result(result)
    if "error" in figures:
        return figures
    figures["warnings"] = sorted({w["code"] for w in result.get("warnings") or []})
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3)
    parser.add_argument("--transports", default=",".join(dict.fromkeys(t for t, _, _ in STREAMS)),
                        help="comma-separated, of those in STREAMS (default: all)")
    parser.add_argument("--write", action="store_true", help="write BENCHMARKS.md's section")
    args = parser.parse_args()
    chosen = tuple(s for s in STREAMS if s[0] in args.transports.split(","))
    runs: dict[tuple[str, str, int], list[dict]] = {}
    load = os.getloadavg()
    for rep in range(args.reps):
        order = chosen if rep % 2 == 0 else tuple(reversed(chosen))
        for payload in PAYLOADS:
            for transport, mode, more in order:
                key = (transport, label(mode, more), payload)
                runs.setdefault(key, []).append(point(transport, mode, more, payload,
                                                      args.seconds))
        print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr)
    load_end = os.getloadavg()
    lines = [f"Measured {stamp()} at {revision()} (`python3 benchmarks/bench_secure_throughput.py "
             f"--reps {args.reps} --seconds {args.seconds:g}`), reliable, medians of {args.reps} "
             f"interleaved repetitions (min-max); load average {load[0]:.2f} at the start, "
             f"{load_end[0]:.2f} at the end (2 CPUs, shared):", "",
             "| transport | payload | --secure | delivered msg/s | ratio to plain | pub CPU µs/msg "
             "| sub CPU µs/msg | CPU ratio (pub+sub) | loss % | warnings |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for payload in PAYLOADS:
        for transport, mode, more in chosen:
            key = (transport, label(mode, more), payload)
            ok = [r for r in runs[key] if "error" not in r]
            errors = [r["error"] for r in runs[key] if "error" in r]
            if not ok:
                lines.append(f"| {transport} | {payload} B | {key[1]} | — ({errors[0][:80]}) "
                             "| | | | | | |")
                continue
            base = [r for r in runs[(transport, "plain", payload)] if "error" not in r]
            rate = [r["msgs_per_s"] for r in ok]
            pub = [r["per_msg_us"]["pub"] for r in ok]
            sub = [r["per_msg_us"]["sub"] for r in ok]
            cpu = med(p + s for p, s in zip(pub, sub) if p is not None and s is not None)
            base_rate = med(r["msgs_per_s"] for r in base) if base else float("nan")
            base_cpu = med(r["per_msg_us"]["pub"] + r["per_msg_us"]["sub"] for r in base
                           if r["per_msg_us"]["pub"] is not None
                           and r["per_msg_us"]["sub"] is not None) if base else float("nan")
            codes = sorted({c for r in ok for c in r["warnings"]})
            lines.append(
                f"| {transport} | {payload} B | {key[1]} | {med(rate):,.0f} ({spread(rate)}) | "
                f"{med(rate) / base_rate:.2f} | {med(pub):,.1f} | {med(sub):,.1f} | "
                f"{cpu / base_cpu:.2f} | {med(r['loss_pct'] or 0 for r in ok):.2f} | "
                f"{', '.join(codes) or '—'}"
                + (f" ({len(errors)} of {args.reps} failed: {errors[0][:60]})" if errors else "")
                + " |")
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section("security-throughput", text)


if __name__ == "__main__":
    main()
