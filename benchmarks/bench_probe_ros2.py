"""The ROS 2 probe's cost while it listens to 1 MB at 30 Hz + 100 B at 1 kHz (issue 28).

Real peers (tests/ros2peers/): two python ``cyclonedds`` ROS 2 publishers on loopback in a DDS
domain of their own, rt/camera/image_raw/compressed (sensor_msgs/CompressedImage, 1,000,000 bytes
serialized, 30 Hz, reliable) and rt/fast (std_msgs/String, 100 bytes, 1 kHz, best-effort), both
on absolute deadlines, their send times kept as the ground truth. REPEATS times, interleaved:

  probe      `mwperf probe --ros2 --domain D --interface lo --duration DURATION --json`: its CPU
             (the agent's, wait4, as the probe reports it: probe_cpu_s / probe_cpu_percent over
             the window), its max RSS (probe_max_rss_bytes), and the rates it measured against
             the publishers' own over its window (count - 1 over first..last send inside it);
  reference  two python cyclonedds best-effort readers of the same topics (publisher.py --role
             sub: what a Python subscriber such as `ros2 topic hz` costs), their CPU over a
             DURATION window after the same 3 s of discovery, from /proc/PID/stat, and their
             peak RSS (VmHWM).

Printed: one line per repeat, then the medians and the spread (min..max) of each.
Usage: python3 benchmarks/bench_probe_ros2.py [DURATION_S] [REPEATS]
Needs the agent (MWPERF_AGENT or `make build`) with probe-ros2, and python cyclonedds.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "python")]
# the probe runs as `python -m mwperf` in a child: this checkout's, installed or not
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (str(ROOT / "python"), os.environ.get("PYTHONPATH")) if p)
from ros2peers import peers  # noqa: E402
from ros2peers.peers import PythonPeer  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
TOPICS = {"rt/camera/image_raw/compressed": ("/camera/image_raw/compressed", "compressed",
                                             1_000_000, 30),
          "rt/fast": ("/fast", "string", 100, 1000)}
DISCOVERY_S = 3.0  # the probe's default discovery time; the reference waits as long


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def hwm_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def spread(values: list[float], fmt: str = "{:.2f}") -> str:
    return (f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}.."
            f"{fmt.format(max(values))})")


def probe_once(dom: int, duration: float) -> dict:
    done = peers.probe(dom, "--no-save", duration=f"{duration:g}s", timeout=duration + 120)
    if done.returncode != 0:
        raise SystemExit(f"mwperf probe --ros2 failed ({done.returncode}): {done.stderr.strip()}")
    return json.loads(done.stdout)


def reference_once(dom: int, duration: float) -> dict:
    subs = {dds: PythonPeer(dom, "--role", "sub", "--topic", dds, "--type", kind)
            for dds, (_, kind, _, _) in TOPICS.items()}
    try:
        time.sleep(DISCOVERY_S)
        before = {dds: cpu_s(s.proc.pid) for dds, s in subs.items()}
        t0 = time.monotonic()
        time.sleep(duration)
        cpu = sum(cpu_s(s.proc.pid) - before[dds] for dds, s in subs.items())
        wall = time.monotonic() - t0
        rss = sum(hwm_bytes(s.proc.pid) for s in subs.values())
    finally:
        got = {dds: s.summary()["received"] for dds, s in subs.items()}
    return {"cpu_percent": 100 * cpu / wall, "rss_bytes": rss, "received": got}


def main() -> None:
    duration = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    why = peers.probe_ros2_missing(Path(os.environ.get("MWPERF_AGENT") or
                                        peers.target_release() / "mwperf-agent"))
    if why:
        raise SystemExit(f"bench_probe_ros2: {why}")
    dom = peers.domain(9)
    work = Path(tempfile.mkdtemp(prefix="bench-probe-ros2-"))
    pubs = {dds: PythonPeer(dom, "--topic", dds, "--type", kind, "--size", str(size), "--rate",
                            str(hz), "--reliability", "reliable" if hz < 100 else "best-effort",
                            sends=work / dds.replace("/", "_"))
            for dds, (_, kind, size, hz) in TOPICS.items()}
    docs, refs = [], []
    try:
        time.sleep(1.0)
        for k in range(repeats):
            docs.append(probe_once(dom, duration))
            refs.append(reference_once(dom, duration))
            print(f"repeat {k}: probe {docs[-1]['probe_cpu_percent']:.1f} % of one core, max RSS "
                  f"{docs[-1].get('probe_max_rss_bytes', 0) / 2**20:.1f} MiB; reference "
                  f"(python cyclonedds readers) {refs[-1]['cpu_percent']:.1f} %, "
                  f"{refs[-1]['rss_bytes'] / 2**20:.1f} MiB", flush=True)
    finally:
        summaries = {dds: p.summary() for dds, p in pubs.items()}
    sends = {dds: p.sends() for dds, p in pubs.items()}
    errors: dict[str, list[float]] = {dds: [] for dds in TOPICS}
    for k, doc in enumerate(docs):
        topics = {t["topic"]: t for t in doc["topics"]}
        start, end = doc["start_ns"], doc["start_ns"] + doc["duration_ns"]
        parts = []
        for dds, (ros, _, _, _) in TOPICS.items():
            _, truth = peers.window_truth(sends[dds], start, end)
            measured = topics.get(ros, {}).get("rate_hz") or 0.0
            errors[dds].append(100 * (measured - truth) / truth if truth else float("nan"))
            parts.append(f"{ros} {measured:.2f} Hz vs sent {truth:.2f} Hz "
                         f"({errors[dds][-1]:+.2f} %, lost {topics.get(ros, {}).get('lost')})")
        print(f"repeat {k} rates: " + "; ".join(parts))
    print("publishers sent: " + ", ".join(f"{dds} {s['sent']} at {s['rate_hz']:.2f} Hz"
                                          for dds, s in summaries.items()))
    print(f"median (min..max) over {repeats} repeats of {duration:g} s:")
    print(f"  probe CPU       {spread([d['probe_cpu_percent'] for d in docs], '{:.1f}')} % of one core")
    print(f"  probe max RSS   {spread([d.get('probe_max_rss_bytes', 0) / 2**20 for d in docs], '{:.1f}')} MiB")
    print(f"  reference CPU   {spread([r['cpu_percent'] for r in refs], '{:.1f}')} % "
          "(two python cyclonedds readers)")
    print(f"  reference RSS   {spread([r['rss_bytes'] / 2**20 for r in refs], '{:.1f}')} MiB")
    for dds, errs in errors.items():
        print(f"  rate error      {TOPICS[dds][0]}: {spread(errs, '{:+.2f}')} %")
    print(f"  ratio probe/reference CPU "
          f"{statistics.median([d['probe_cpu_percent'] for d in docs]) / statistics.median([r['cpu_percent'] for r in refs]):.2f}")


if __name__ == "__main__":
    main()
