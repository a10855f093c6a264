#!/usr/bin/env python3
"""Graphs (issue 24), four measurements, each written between its markers in BENCHMARKS.md:

- overhead: a two-node graph's round trip (node ping publishes /ping at 1 kHz, 64 B; node pong
  echoes it on /pong as a chain stage; the chain's end-to-end age) against mwperf's ping/pong at
  the same rate and size and against sockperf ping-pong with the same datagram, UDP loopback,
  interleaved repetitions: the graph engine's cost over the point engine and over a reference.
- mont-blanc: iRobot's Mont Blanc on every transport a graph runs on here, per-edge p50/p99,
  late and too late (iRobot's rule), lost, CPU and memory of all nodes, beside iRobot's published
  RPi3 targets as a reference point.
- mobile-robot: the mobile-robot graph over the wifi-80211n link with and without the camera
  (interleaved): what the camera costs the IMU, the lidar and the chain.
- scale: 100 nodes with 10 subscriptions each (1,000 edges) at 1 Hz: the time until every node
  is ready and to stop, CPU and memory per node; and a node's CPU against injected work (a busy
  loop of 2 ms per message at 100 Hz: 20 % of a CPU by construction).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from bench import sockperf_rtt  # noqa: E402  (benchmarks/ on sys.path)
from benchlib import CpuIdleHeld, med, read_result, revision, stamp, write_section  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(REPO / "python")}
MONT_BLANC_TRANSPORTS: dict[str, tuple[str, ...]] = {
    "udp": ("udp",), "uds": ("uds",), "tcp": ("tcp",), "iceoryx2": ("iceoryx2",), "cyclonedds": ("cyclonedds",),
    "fastdds": ("fastdds",), "zenoh (peer)": ("zenoh",),
    "zenoh (client, router)": ("zenoh", "--opt", "mode=client"), "mqtt": ("mqtt",),
    "ros1": ("ros1",), "foxglove (a server per node)": ("foxglove",)}
"""row label -> the --transport argument (and its --opt)"""
IROBOT_RPI3_MONT_BLANC = {"cpu_percent": 20, "rss_mib": 20, "late_percent": 1.9,
                          "too_late_percent": 0.1, "lost_percent": 0.0}
"""irobot_benchmark/performance_target/mont_blanc_rpi3.json: one process holding all 20 nodes,
CPU over the RPi3's 4 cores"""

PAIR = """
name: ping-pong-graph
nodes:
  - name: pinger
    publishers: [{topic: /ping, rate: 1000, payload: 64}]
    subscribers: [{topic: /pong}]
  - name: ponger
    subscribers: [{topic: /ping, publish: /pong}]
chains:
  round_trip: [/ping, /pong]
"""

WORK = """
name: injected-work
nodes:
  - name: source
    publishers: [{topic: /work, rate: 100, payload: 64}]
  - name: worker
    subscribers: [{topic: /work, busy_loop: 2ms}]
"""


REFUSED: dict[tuple[str, ...], str] = {}
"""the arguments of a run mwperf refused (exit 2) -> its one-line reason"""


def mwperf(*argv: str, timeout: float = 600) -> dict | None:
    done = subprocess.run([sys.executable, "-m", "mwperf.cli", "run", *argv, "--no-save",
                           "--json"], capture_output=True, text=True, env=ENV, check=False,
                          timeout=timeout)
    if done.returncode not in (0, 3):
        last = done.stderr.strip().splitlines()[-1:]
        print(f"  {' '.join(argv)}: exit {done.returncode}: {last}", file=sys.stderr)
        if done.returncode == 2 and last:
            REFUSED[argv] = last[0].removeprefix("mwperf: error: ")
        return None
    return read_result(done.stdout)


def graph_file(folder: Path, name: str, text: str) -> str:
    path = folder / f"{name}.yaml"
    path.write_text(textwrap.dedent(text))
    return str(path)


def us(ns: float | None) -> str:
    return "-" if ns is None or ns != ns else f"{ns / 1000:.1f} µs"  # ns != ns: NaN, none


def ms(ns: float | None) -> str:
    return "-" if ns is None or ns != ns else f"{ns / 1e6:.2f} ms"


def spread(values: list[float]) -> str:
    return f"{min(values):.3f}–{max(values):.3f}" if values else "-"


def overhead(folder: Path, reps: int, seconds: int) -> str:
    """Both ways: CPUs free to idle (each tool pays its wake-ups), and held out of idle states
    (/dev/cpu_dma_latency 0 for every tool alike: the engines' own costs)."""
    parts = []
    for held in (False, True):
        with CpuIdleHeld(held):
            parts.append(_overhead(folder, reps, seconds, held))
    return "\n\n".join(parts)


def _overhead(folder: Path, reps: int, seconds: int, held: bool) -> str:
    pair = graph_file(folder, "pair", PAIR)
    graph, point, sock = [], [], []
    for _ in range(reps):
        g = mwperf("--graph", pair, "--transport", "udp", "--duration", f"{seconds}s",
                   "--warmup", "1s")
        p = mwperf("--transport", "udp", "--rate", "1000", "--payload", "Array64",
                   "--duration", f"{seconds}s", "--warmup", "1s")
        s = sockperf_rtt("udp", 1000, 64 + 56, seconds, False)
        if g and g["chains"][0]["end_to_end"]:
            graph.append(g["chains"][0]["end_to_end"]["p50_ns"])
        if p and p["measurement"]:
            point.append(p["measurement"]["response"]["p50_ns"])
        if s["p50_ns"]:
            sock.append(s["p50_ns"])
    pairs_point = [g / p for g, p in zip(graph, point)]
    pairs_sock = [g / s for g, s in zip(graph, sock)]
    return "\n".join([
        f"{stamp()}, {revision()}, {reps} interleaved repetitions of {seconds} s, UDP loopback, "
        "1 kHz, 64 B payload (120 B datagram), CPUs "
        + ("held out of idle states:" if held else "free to idle:"), "",
        "| what | p50 (median) | graph / it (median, spread) |", "|---|---|---|",
        f"| two-node graph (chain age) | {us(med(graph))} | |",
        f"| mwperf ping/pong | {us(med(point))} | {med(pairs_point):.3f} "
        f"({spread(pairs_point)}) |",
        f"| sockperf ping-pong | {us(med(sock))} | {med(pairs_sock):.3f} ({spread(pairs_sock)}) |",
    ])


def mont_blanc(reps: int, seconds: int, transports: dict[str, tuple[str, ...]]) -> str:
    rows: dict[str, list[dict]] = {t: [] for t in transports}
    for _ in range(reps):
        for t, transport in transports.items():
            r = mwperf("--graph", "mont_blanc", "--transport", *transport, "--duration",
                       f"{seconds}s", "--warmup", "2s", "--discovery-timeout", "30s")
            if r is not None:
                rows[t].append(r)
    lines = [f"{stamp()}, {revision()}, {reps} repetition(s) of {seconds} s per transport "
             "(interleaved), this machine's loopback; per-edge figures are medians over the 35 "
             "edges, worst = the edge with the highest p99; late/too late by iRobot's rule "
             "(min(20 % of the period, 5 ms) / min(100 %, 50 ms)); CPU and memory summed over "
             "the 20 node processes (CPU in % of one core).", "",
             "| transport | edge p50 | edge p99 | worst edge p99 | late % | too late % | lost % | "
             "CPU % (all nodes) | RSS (all nodes) | all matched after |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for t, results in rows.items():
        if not results:
            why = next((w for a, w in REFUSED.items() if a[3:3 + len(transports[t])]
                        == transports[t]), None)
            lines.append(f"| {t} | {'refused: ' + why if why else 'failed'} | | | | | | | | |")
            continue
        edge_p50 = med([med([e["latency"]["p50_ns"] for e in r["edges"] if e["latency"]])
                        for r in results])
        edge_p99 = med([med([e["latency"]["p99_ns"] for e in r["edges"] if e["latency"]])
                        for r in results])
        worst = med([max(e["latency"]["p99_ns"] for e in r["edges"] if e["latency"])
                     for r in results])

        def share(key: str, r: dict) -> float:
            received = sum(e["received"] or 0 for e in r["edges"])
            return 100 * sum(e[key] or 0 for e in r["edges"]) / max(received, 1)

        def lost(r: dict) -> float:
            sent = sum(e["sent"] or 0 for e in r["edges"])
            return 100 * sum(e["lost"] or 0 for e in r["edges"]) / max(sent, 1)
        cpu = med([sum(n.get("cpu_percent") or 0 for n in r["nodes"]) for r in results])
        rss = med([sum(n.get("max_rss_kib") or 0 for n in r["nodes"]) / 1024 for r in results])
        disc = med([r["run"]["discovery_ns"] for r in results])
        lines.append(f"| {t} | {us(edge_p50)} | {us(edge_p99)} | {us(worst)} | "
                     f"{med([share('late', r) for r in results]):.2f} | "
                     f"{med([share('too_late', r) for r in results]):.2f} | "
                     f"{med([lost(r) for r in results]):.2f} | {cpu:.1f} | {rss:.0f} MiB | "
                     f"{ms(disc)} |")
    lines.append("| rustdds | refused on loopback: 20 nodes are 20 participants, RustDDS discovers 13 "
                 "there (no multicast on lo) | | | | | | | | |")
    target = IROBOT_RPI3_MONT_BLANC
    lines.append(f"| iRobot's RPi3 target (ROS 2, one process) | | | | {target['late_percent']} "
                 f"| {target['too_late_percent']} | {target['lost_percent']} | "
                 f"{target['cpu_percent']} (of 4 cores) | {target['rss_mib']} MiB | |")
    return "\n".join(lines)


def mobile_robot(reps: int, seconds: int) -> str:
    runs: dict[str, list[dict]] = {"with the camera": [], "without the camera": []}
    for _ in range(reps):
        for label, extra in (("with the camera", ()), ("without the camera",
                                                       ("--without", "camera_driver"))):
            r = mwperf("--graph", "mobile-robot", "--transport", "cyclonedds", "--link",
                       "wifi-80211n", "--duration", f"{seconds}s", "--warmup", "2s", *extra)
            if r is not None:
                runs[label].append(r)

    def edge(r: dict, topic: str) -> dict:
        return next(e for e in r["edges"] if e["topic"] == topic)
    lines = [f"{stamp()}, {revision()}, cyclonedds, nodes on hosts a (robot) and b (computer) "
             f"joined by the wifi-80211n preset, {reps} interleaved repetitions of {seconds} s "
             "each way; medians over the repetitions.", "",
             "| case | /imu p50 | /imu p99 | /imu too late | /scan p50 | /scan p99 | /scan lost | "
             "chain scan_to_wheels p50 | p99 | /camera/image_raw p50 | camera lost |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for label, results in runs.items():
        if not results:
            lines.append(f"| {label} | failed | | | | | | | | | |")
            continue

        def m(f, results: list[dict] = results) -> float | None:
            values = [f(r) for r in results]
            values = [v for v in values if v is not None]
            return statistics.median(values) if values else None
        chain = [r["chains"][0]["end_to_end"] for r in results if r["chains"]
                 and r["chains"][0]["end_to_end"]]
        camera = [e for r in results for e in r["edges"] if e["topic"] == "/camera/image_raw"]
        lines.append(
            f"| {label} | {us(m(lambda r: edge(r, '/imu')['latency']['p50_ns']))} | "
            f"{us(m(lambda r: edge(r, '/imu')['latency']['p99_ns']))} | "
            f"{m(lambda r: edge(r, '/imu')['too_late'])} | "
            f"{ms(m(lambda r: (edge(r, '/scan')['latency'] or {}).get('p50_ns')))} | "
            f"{ms(m(lambda r: (edge(r, '/scan')['latency'] or {}).get('p99_ns')))} | "
            f"{m(lambda r: edge(r, '/scan')['lost'])} | "
            f"{ms(med([c['p50_ns'] for c in chain]) if chain else None)} | "
            f"{ms(med([c['p99_ns'] for c in chain]) if chain else None)} | "
            f"{ms(med([(e['latency'] or {}).get('p50_ns') for e in camera]) if camera else None)}"
            f" | {med([e['lost'] for e in camera]) if camera else '-'} |")
    return "\n".join(lines)


def scale(folder: Path, nodes: int, fanin: int, seconds: int) -> str:
    body = ["name: scale", "nodes:"]
    for i in range(nodes):
        subs = ", ".join(f"{{topic: /t{(i + j) % nodes}}}" for j in range(1, fanin + 1))
        body += [f"  - name: n{i}", f"    publishers: [{{topic: /t{i}, rate: 1, payload: 64}}]",
                 f"    subscribers: [{subs}]"]
    path = folder / "scale.yaml"
    path.write_text("\n".join(body) + "\n")
    started = time.monotonic()
    r = mwperf("--graph", str(path), "--transport", "udp", "--duration", f"{seconds}s",
               "--warmup", "1s")
    wall = time.monotonic() - started
    work = mwperf("--graph", graph_file(folder, "work", WORK), "--transport", "udp",
                  "--duration", "10s", "--warmup", "1s")
    lines = [f"{stamp()}, {revision()}, UDP loopback, {nodes} nodes × {fanin} subscriptions "
             f"= {nodes * fanin} edges at 1 Hz, {seconds} s (+1 s warm-up), one run:", ""]
    if r is None:
        lines.append("failed")
    else:
        n = r["nodes"]
        sent = sum(e["sent"] or 0 for e in r["edges"])
        lost = sum(e["lost"] or 0 for e in r["edges"])
        lines += [
            "| figure | value |", "|---|---|",
            f"| status | {r['status']} |",
            f"| every node ready after | {r['run']['ready_s']:.2f} s |",
            f"| all stopped, after their planned end | {r['run']['stop_s']:.2f} s |",
            f"| whole mwperf run (wall, incl. Python start) | {wall:.1f} s |",
            f"| edges: messages sent / lost | {sent} / {lost} |",
            f"| CPU per node (median, max) | {statistics.median(x['cpu_percent'] for x in n):.2f} "
            f"%, {max(x['cpu_percent'] for x in n):.2f} % of one core |",
            f"| peak RSS per node (median, max) | "
            f"{statistics.median(x['max_rss_kib'] for x in n) / 1024:.1f} MiB, "
            f"{max(x['max_rss_kib'] for x in n) / 1024:.1f} MiB |",
        ]
    if work is not None:
        worker = next(x for x in work["nodes"] if x["name"] == "worker")
        source = next(x for x in work["nodes"] if x["name"] == "source")
        # by construction: 100 Hz x 2 ms over the 11 s of warm-up and measurement = 2.2 s
        lines += ["", f"Injected work as ground truth for the CPU figure: a worker node spinning "
                  f"2 ms per message at 100 Hz for 11 s must use 2.2 s of CPU; it reported "
                  f"{worker['cpu_s']:.2f} s (its publisher node, which only sends: "
                  f"{source['cpu_s']:.2f} s)."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="overhead,mont-blanc,mobile-robot,scale")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    only = args.only.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sections = {
            "graph-overhead": lambda: overhead(folder, args.reps, args.seconds),
            "graph-mont-blanc": lambda: mont_blanc(args.reps, args.seconds,
                                                   MONT_BLANC_TRANSPORTS),
            "graph-mobile-robot": lambda: mobile_robot(args.reps, args.seconds),
            "graph-scale": lambda: scale(folder, 100, 10, args.seconds),
        }
        for name, make in sections.items():
            if name.removeprefix("graph-") not in only:
                continue
            text = make()
            print(f"== {name}\n{text}\n")
            if args.write:
                write_section(name, text)


if __name__ == "__main__":
    main()
