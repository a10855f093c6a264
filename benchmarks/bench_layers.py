#!/usr/bin/env python3
"""Per-layer latency (issue 27, `mwperf run --layers`): what observing the layers costs, and where
the time goes on every transport.

(a) Overhead: RTT p50 of a round trip at 1 kHz, Array1k, with `--layers` against the same point
    without, interleaved repetitions (with/without alternate which goes first), per transport
    (default UDP and Cyclone DDS, the issue's two). The ratio with/without per repetition;
    its median and spread (goal: median <= 1.05).
(b) Per-layer table: every transport the agent is built with, at 1 kHz, Array1k and
    PointCloud512k, round trip with `--layers`: each layer's p50 and share of the total (the
    result's `layers` section), how many messages could not be split and why, and which
    layers are not observable (shared memory). A point that cannot run here (no broker, a
    message too big for the transport, ...) is a note, not a row.

--write replaces the bench:layers-overhead and bench:layers-table sections of BENCHMARKS.md
(each only when it was measured).

    python3 benchmarks/bench_layers.py --reps 5 --seconds 3 --write
    python3 benchmarks/bench_layers.py --reps 1 --seconds 1 --no-table     # a quick check
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import median

from benchlib import find_agent, read_result, revision, stamp, write_section  # noqa: E402  (benchmarks/ is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
OVERHEAD_TRANSPORTS = "udp,cyclonedds"
PAYLOADS = "Array1k,PointCloud512k"
GOAL = 1.05
LAYERS = ("app_send", "middleware_send", "kernel_network", "middleware_receive", "executor_callback",
          "middleware_transport")
"""the spec's stable layer names, in the order the table shows them"""
SHORT = {"app_send": "app → mw", "middleware_send": "mw send", "kernel_network": "kernel + net",
         "middleware_receive": "mw receive", "executor_callback": "executor + callback",
         "middleware_transport": "mw + transport (not split)"}
"""column headings: the layers' labels (docs/layers.md), short enough for a table"""


def mwperf(agent: Path, transport: str, payload: str, seconds: float, rate: int, layers: bool,
           awake: bool = False) -> dict:
    """One round-trip `mwperf run` (``awake``: with --keep-awake); its result, or {"error": why}
    (the last line of stderr)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python"), "MWPERF_AGENT": str(agent)}
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "result.json"
        cmd = [sys.executable, "-m", "mwperf.cli", "run", "--transport", transport, "--mode", "roundtrip",
               "--rate", str(rate), "--payload", payload, "--duration", f"{seconds:g}s", "--no-save",
               "--json-out", str(out), *(["--layers"] if layers else []),
               *(["--keep-awake"] if awake else [])]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=seconds + 300, check=False)
        except subprocess.TimeoutExpired:
            return {"error": f"no result within {seconds + 300:g} s"}
        if not out.is_file():
            return {"error": f"exit {done.returncode}: {(done.stderr.strip().splitlines() or ['no result'])[-1]}"}
        return read_result(out.read_text())


def rtt_p50(result: dict) -> int | None:
    """The round trip's p50 (ns) of a complete or partial run; None for a failed one."""
    if "error" in result or result.get("status") not in ("complete", "partial"):
        return None
    return ((result.get("measurement") or {}).get("response") or {}).get("p50_ns")


def command() -> str:
    """This benchmark's command line as it was given, for the text it writes."""
    return shlex.join(["python3", "benchmarks/bench_layers.py", *sys.argv[1:]])


def why_failed(result: dict) -> str:
    """One line saying why a run gave no figure."""
    return result.get("error") or f"status {result.get('status')}: {result.get('status_reason')}"


# ---- (a) overhead -------------------------------------------------------------------------------

AWAKE = {"off": (False,), "on": (True,), "both": (False, True)}
"""--keep-awake: the CPU-idle conditions each pair is measured under (on: a spinner at the
lowest priority per CPU keeps it out of halt, issue 41's fair conditions)"""


def condition(transport: str, awake: bool) -> str:
    """A row's key: the transport, and ` (--keep-awake)` when measured so."""
    return transport + (" (--keep-awake)" if awake else "")


def overhead_pairs(agent: Path, transports: list[str], reps: int, seconds: float,
                   awake: tuple[bool, ...] = (False,)) -> dict[str, list[tuple]]:
    """Per transport (and condition), one (p50 without, p50 with, error) per repetition. Within a
    repetition the two runs alternate which goes first, and the transports alternate their
    order, so a drift in the machine's load falls on both sides alike."""
    pairs: dict[str, list[tuple]] = {condition(t, a): [] for t in transports for a in awake}
    for i in range(reps):
        for t, a in [(t, a) for t in (transports if i % 2 == 0 else transports[::-1])
                     for a in (awake if i % 2 == 0 else awake[::-1])]:
            got: dict[bool, dict] = {}
            for layers in ((False, True) if i % 2 == 0 else (True, False)):
                got[layers] = mwperf(agent, t, "Array1k", seconds, 1000, layers, a)
            without, with_ = rtt_p50(got[False]), rtt_p50(got[True])
            error = None if without and with_ else "; ".join(
                f"{'with' if k else 'without'} --layers: {why_failed(r)}" for k, r in got.items() if not rtt_p50(r))
            pairs[condition(t, a)].append((without, with_, error))
            print(f"{condition(t, a)} rep {i + 1}/{reps}: without {without} ns, with {with_} ns{f' ({error})' if error else ''}",
                  file=sys.stderr)
    return pairs


def overhead_row(transport: str, pairs: list[tuple]) -> tuple[str | None, list[str]]:
    """The table row of one transport (None when no pair has both figures) and its notes."""
    good = [(w, lw) for w, lw, e in pairs if e is None]
    notes = [f"{transport}: {e}" for e in dict.fromkeys(e for _, _, e in pairs if e)]
    if not good:
        return None, notes
    ratios = [lw / w for w, lw in good]
    r = median(ratios)
    verdict = "ok" if r <= GOAL else "over"
    return (f"| {transport} | {median(w for w, _ in good) / 1e3:.1f} µs | {median(lw for _, lw in good) / 1e3:.1f} µs | "
            f"**{r:.3f}** ({verdict}) | {min(ratios):.3f}–{max(ratios):.3f} | {len(good)} |"), notes


def overhead_text(pairs: dict[str, list[tuple]], reps: int, seconds: float) -> str:
    rows, notes = [], []
    for t, p in pairs.items():
        row, n = overhead_row(t, p)
        notes += n
        if row:
            rows.append(row)
    return "\n".join([
        f"Measured {stamp()} at {revision()}: `{command()}`; round trip at 1 kHz, Array1k, {seconds:g} s after 1 s warm-up, "
        f"{reps} repetitions, each a run without and one with `--layers` (which goes first alternates); "
        f"load average {os.getloadavg()[0]:.2f} at the end. Ratio = p50 with / without of one repetition; "
        f"the median of the ratios (goal ≤ {GOAL}) and their spread.", "",
        "| transport | RTT p50 without | RTT p50 with `--layers` | ratio (median) | spread | pairs |",
        "|---|---|---|---|---|---|", *rows,
        *([""] + [f"- {n}" for n in notes] if notes else [])])


# ---- (b) per-layer table ------------------------------------------------------------------------

def built_transports(agent: Path) -> list[str]:
    """The transports the agent was built with, in its (side-by-side) order."""
    out = subprocess.run([str(agent), "transports", "--json"], capture_output=True, text=True, check=True).stdout
    return [d["name"] for d in json.loads(out) if d.get("built", True)]


def layers_of(result: dict) -> tuple[dict | None, str | None]:
    """The result's `layers` section when it holds a split, else None and why not."""
    if "error" in result or result.get("status") not in ("complete", "partial"):
        return None, why_failed(result)
    section = result.get("layers")
    if not section:
        return None, "the result has no layers section"
    if section.get("method") == "none":
        return None, f"layers not observed: {section.get('why_none')}"
    if not section.get("messages"):
        return None, f"no measured message to split (status {result.get('status')}: {result.get('status_reason')})"
    if not section.get("split"):
        return None, f"no message could be split ({unsplit_text(section)})"
    return section, None


def unsplit_text(section: dict) -> str:
    """`12 of 10000 (no_receive_syscall 10, events_dropped 2)`, or `0` when all were split."""
    messages, split = section.get("messages") or 0, section.get("split") or 0
    reasons = ", ".join(f"{k} {v}" for k, v in (section.get("unsplit") or {}).items() if v)
    return f"{messages - split} of {messages}" + (f" ({reasons})" if reasons else "") if messages != split else "0"


def duration(ns: float) -> str:
    """`850 ns`, `12.3 µs`, `154.7 ms`: three significant-ish digits at any scale (a table holds
    both a 1 µs callback and a 150 ms PointCloud512k queue)."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            v = ns / scale
            return f"{v:.1f} {unit}" if v < 100 else f"{v:.0f} {unit}"
    return f"{ns:.0f} ns"


def layer_cell(layer: dict | None) -> str:
    """`12.3 µs (41 %)`; `n/o` for a layer that cannot be seen; `-` for one the result lacks."""
    if layer is None:
        return "-"
    if not layer.get("observable", True) or layer.get("p50_ns") is None:
        return "n/o"
    share = layer.get("share")
    return duration(layer["p50_ns"]) + (f" ({share * 100:.0f} %)" if share is not None else "")


def not_observable(section: dict) -> list[str]:
    """`middleware_send, kernel_network: <why>`: the hidden layers, those with the same reason
    (a shared-memory transport hides three at once) on one line."""
    by_note: dict[str, list[str]] = {}
    for layer in section.get("layers") or []:
        if not layer.get("observable", True):
            by_note.setdefault(layer.get("note") or "not observable", []).append(layer["name"])
    return [f"{', '.join(names)}: {note}" for note, names in by_note.items()]


def table_row(transport: str, payload: str, section: dict, columns: list[str]) -> str:
    by_name = {layer["name"]: layer for layer in section.get("layers") or []}
    total = (section.get("total") or {}).get("p50_ns")
    return f"| {transport} | {payload} | {duration(total) if total is not None else '-'} | " + \
        " | ".join(layer_cell(by_name.get(c)) for c in columns) + f" | {unsplit_text(section)} |"


def columns_of(sections: list[dict]) -> list[str]:
    """The five named layers, then any combined one some point has (`middleware_transport`, or
    `a+b` where the moment between a and b was not seen), each after the first layer it covers,
    as the result orders them (python/mwperf/layers.py)."""
    present = dict.fromkeys(layer["name"] for s in sections for layer in s.get("layers") or [])
    names = list(LAYERS[:5]) + [n for n in present if n not in LAYERS[:5]]

    def position(name: str) -> tuple[int, int]:
        first = "middleware_send" if name == "middleware_transport" else name.split("+")[0]
        size = 3 if name == "middleware_transport" else 1 + name.count("+")
        return (LAYERS.index(first) if first in LAYERS else len(LAYERS), size)
    return sorted(names, key=position)


def heading(name: str) -> str:
    """A column's heading: the short label, or those of a combined layer's parts."""
    return SHORT.get(name) or " + ".join(SHORT.get(n, n) for n in name.split("+")) + " (not split)"


def layer_table(points: list[tuple[str, str, dict]], failed: list[str], seconds: float) -> str:
    """The BENCHMARKS.md text of (b): one row per (transport, payload) with a split."""
    sections = [s for _, _, s in points]
    columns = columns_of(sections)
    notes = list(failed)
    for t, p, s in points:
        hidden = not_observable(s)
        if hidden:
            notes.append(f"{t} {p}: not observable: " + "; ".join(hidden))
        notes += [f"{t} {p}: {n}" for n in s.get("notes") or []]
    return "\n".join([
        f"Measured {stamp()} at {revision()}: `{command()}`; "
        f"round trip at 1 kHz with `--layers`, one run of {seconds:g} s per point, load average "
        f"{os.getloadavg()[0]:.2f} at the end. Per layer: p50 over "
        "the split messages, summed over both directions, and (in brackets) the layer's share of the "
        "mean round trip (means add up, p50s do not: a few late sends under load can give a layer "
        "with a small p50 a large share); n/o = not observable (see the notes); a+b (not split) = "
        "the moment between a and b was not seen; unsplit = messages without every boundary.",
        "", "| transport | payload | RTT p50 (split) | " + " | ".join(heading(c) for c in columns) + " | unsplit |",
        "|---" * (len(columns) + 4) + "|",
        *(table_row(t, p, s, columns) for t, p, s in points),
        *([""] + [f"- {n}" for n in dict.fromkeys(notes)] if notes else [])])


def measure_table(agent: Path, transports: list[str], payloads: list[str], seconds: float) -> tuple[list, list]:
    """Every (transport, payload) point once; the sections with a split, and the failures' notes."""
    points, failed = [], []
    for t in transports:
        for p in payloads:
            section, why = layers_of(mwperf(agent, t, p, seconds, 1000, True))
            print(f"{t} {p}: {why or 'split ' + str(section['split'])}", file=sys.stderr)
            if section:
                points.append((t, p, section))
            else:
                failed.append(f"{t} {p}: {why}")
    return points, failed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5, help="overhead: interleaved repetitions (default 5)")
    ap.add_argument("--seconds", type=float, default=3, help="measured seconds per run (default 3)")
    ap.add_argument("--transports", default=OVERHEAD_TRANSPORTS, help=f"overhead: transports (default {OVERHEAD_TRANSPORTS})")
    ap.add_argument("--table-transports", help="table: transports (default: every one the agent is built with)")
    ap.add_argument("--payloads", default=PAYLOADS, help=f"table: payloads (default {PAYLOADS})")
    ap.add_argument("--keep-awake", choices=tuple(AWAKE), default="off",
                    help="overhead: measure each pair with --keep-awake, without, or both")
    ap.add_argument("--no-overhead", action="store_true", help="skip (a)")
    ap.add_argument("--no-table", action="store_true", help="skip (b)")
    ap.add_argument("--agent", help="the mwperf-agent (default: $MWPERF_AGENT, else the release build)")
    ap.add_argument("--write", action="store_true", help="update BENCHMARKS.md's bench:layers-* sections")
    a = ap.parse_args()
    agent = find_agent(a.agent, "bench_layers")
    if not a.no_overhead:
        text = overhead_text(overhead_pairs(agent, a.transports.split(","), a.reps, a.seconds,
                                            AWAKE[a.keep_awake]), a.reps, a.seconds)
        print(text)
        if a.write:
            write_section("layers-overhead", text)
    if not a.no_table:
        transports = a.table_transports.split(",") if a.table_transports else built_transports(agent)
        text = layer_table(*measure_table(agent, transports, a.payloads.split(","), a.seconds), a.seconds)
        print(text)
        if a.write:
            write_section("layers-table", text)


if __name__ == "__main__":
    main()
