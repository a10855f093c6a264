#!/usr/bin/env python3
"""A topic inside a multi-topic run against the same topic alone (issue 22: a replayed topic was
reported ~5 ms slow by the single executor's tick wait). For each transport, interleaved
repetitions of: the example recording replayed with both topics (single executor, then multi),
and each topic replayed alone; round trip and one way. Reported per topic: p50 and p99 in each
case and p50(with both, single executor) / p50(alone) — the reference is the same topic alone in
the same repetition. Also `--topics 2` at equal rates (1 kHz Array1k) against `--topics 1`.
With --write the table replaces the text between the bench:replay-topics markers in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from benchlib import med, read_result, revision, stamp, write_section  # noqa: E402  (benchmarks/ on sys.path)

REPO = Path(__file__).resolve().parent.parent
TRANSPORTS = ("ros1", "tcp", "uds", "cyclonedds")  # udp: a 308 KB image is no datagram
TOPICS = ("/camera/image_raw", "/scan")
WINDOW = "0s+5s"  # the recording's first 5 s: 150 images, 200 scans


def run(argv: list[str]) -> dict | None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    done = subprocess.run([sys.executable, "-m", "mwperf.cli", "run", *argv, "--no-save",
                           "--json"], capture_output=True, text=True, env=env, check=False)
    if done.returncode not in (0, 3):
        print(f"  {' '.join(argv)}: exit {done.returncode}: "
              f"{done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return read_result(done.stdout)


def per_topic(result: dict | None) -> dict[str, tuple[int | None, int | None]]:
    """topic name -> (p50, p99) of its response; a one-topic run: its measurement."""
    if result is None or result.get("measurement") is None:
        return {}
    entries = result.get("per_topic") or []
    replayed = (result["config"].get("replay") or {}).get("topics")
    if not entries:
        r = result["measurement"]["response"]
        return {(replayed or ["topic 0"])[0]: (r["p50_ns"], r["p99_ns"])}

    def name(t: dict) -> str:  # the recorded name for a replay, else "topic i"
        return replayed[t["topic"]] if replayed else f"topic {t['topic']}"
    return {name(t): (t["response"]["p50_ns"], t["response"]["p99_ns"]) for t in entries}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--transports", default=",".join(TRANSPORTS))
    parser.add_argument("--modes", default="roundtrip,oneway")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    transports, modes = args.transports.split(","), args.modes.split(",")
    load = os.getloadavg()[0]
    when, rev = stamp(), revision()
    cases = {"both, single": [], "both, multi": ["--executor", "multi"],
             **{f"alone {t}": ["--replay-topics", t] for t in TOPICS}}
    # (transport, mode, case) -> per repetition: topic -> (p50, p99)
    runs: dict[tuple[str, str, str], list[dict]] = {}
    ticked: dict[tuple[str, int], list[dict]] = {}
    for rep in range(args.reps):
        for transport in transports:
            for mode in modes:
                for case, extra in cases.items():
                    print(f"rep {rep + 1}: {transport} {mode} {case}", file=sys.stderr)
                    argv = ["--transport", transport, "--mode", mode, "--replay", "example",
                            "--replay-window", WINDOW, *extra]
                    runs.setdefault((transport, mode, case), []).append(per_topic(run(argv)))
            for n in (1, 2):
                argv = ["--transport", transport, "--rate", "1000", "--payload", "Array1k",
                        "--duration", "3s", "--topics", str(n)]
                print(f"rep {rep + 1}: {transport} --topics {n}", file=sys.stderr)
                ticked.setdefault((transport, n), []).append(per_topic(run(argv)))

    def cell(key: tuple, topic: str, i: int, table=runs) -> float:
        return med(r.get(topic, (None, None))[i] for r in table[key])

    def spread(inside: list[dict], alone: list[dict], topic: str) -> str:
        """The range of the repetitions' own ratios (repetition k inside / repetition k alone)."""
        ratios = [i[topic][0] / a[topic][0] for i, a in zip(inside, alone)
                  if i.get(topic, (None,))[0] and a.get(topic, (None,))[0]]
        return f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "-"

    def us(x: float) -> str:
        return f"{x / 1e3:.0f} µs" if x >= 1e5 else f"{x / 1e3:.1f} µs"

    lines = [f"Measured {when} at {rev}, {args.reps} interleaved repetitions, medians; the example "
             f"recording (`--replay example`: /camera/image_raw 30 Hz ~308 KB, /scan 40 Hz ~4 KB, "
             f"its first 5 s: `--replay-window {WINDOW}`); load average at the start {load:.1f} on {os.cpu_count()} CPUs.", "",
             "| transport | mode | topic | alone p50 / p99 | both, single executor p50 / p99 "
             "| both, multi p50 / p99 | single / alone (p50; range of the repetitions) |", "|---|---|---|---|---|---|---|"]
    for transport in transports:
        for mode in modes:
            for topic in TOPICS:
                alone = (transport, mode, f"alone {topic}")
                single, multi = (transport, mode, "both, single"), (transport, mode, "both, multi")
                a50, s50 = cell(alone, topic, 0), cell(single, topic, 0)
                lines.append(
                    f"| {transport} | {mode} | {topic} | {us(a50)} / {us(cell(alone, topic, 1))} "
                    f"| {us(s50)} / {us(cell(single, topic, 1))} "
                    f"| {us(cell(multi, topic, 0))} / {us(cell(multi, topic, 1))} "
                    f"| {s50 / a50:.2f} ({spread(runs[single], runs[alone], topic)}) |")
    lines += ["", "`--topics 2` at 1 kHz Array1k, round trip, 3 s (both topics share every tick: "
              "topic 1's callback waits for topic 0's), against `--topics 1`:", "",
              "| transport | --topics 1 p50 | --topics 2: topic 0 p50 | topic 1 p50 | "
              "topic 0 / alone | topic 1 / alone |", "|---|---|---|---|---|---|"]
    def tick_spread(transport: str) -> str:
        ratios = [two["topic 1"][0] / next(iter(one.values()))[0]
                  for two, one in zip(ticked[(transport, 2)], ticked[(transport, 1)])
                  if two.get("topic 1", (None,))[0] and one]
        return f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "-"

    for transport in transports:
        one = med(next(iter(r.values()), (None,))[0] for r in ticked[(transport, 1)] if r)
        t0 = med(r.get("topic 0", (None,))[0] for r in ticked[(transport, 2)])
        t1 = med(r.get("topic 1", (None,))[0] for r in ticked[(transport, 2)])
        lines.append(f"| {transport} | {us(one)} | {us(t0)} | {us(t1)} | {t0 / one:.2f} "
                     f"| {t1 / one:.2f} ({tick_spread(transport)}) |")
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section("replay-topics", text)


if __name__ == "__main__":
    main()
