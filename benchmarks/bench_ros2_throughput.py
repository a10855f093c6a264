"""ROS 2 throughput through rcl (``--transport ros2 --mode throughput``) against raw Fast DDS of
the same distribution (``--transport fastdds --opt distro=kilted``: the libfastdds 3.2 the
wheels' rmw_fastrtps_cpp loads), issue 39 item 2.

Stacks, each a reliable stream sent as fast as the middleware takes it (``--mode throughput``),
one publisher and one subscriber agent, PAYLOAD in {64 B, 1 KiB, 64 KiB, 1 MiB}:

  fastdds kilted   raw Fast DDS 3.2, keep-all (the throughput default);
  ros2 keep-all    rcl + rmw_fastrtps_cpp with ROS 2's own Fast DDS defaults, keep-all;
  ros2 keep-last   the same with ROS 2's default QoS (keep-last 10): a reliable writer that
                   overwrites what its reader has not acknowledged;
  ros2 window=W    keep-all and mwperf's publisher waiting for the acknowledgements of every
                   W messages (``--opt window``, rcl_publisher_wait_for_all_acked).

REPEATS rounds, interleaved (every stack and size of round 1, then round 2, ...), SECONDS each
after mwperf's 1 s warm-up. Per cell: the median of the rounds' delivered msgs/s (the
subscriber's measured messages over its receive window) with the lowest-highest round, the
median loss (publisher's accepted count against the subscriber's) and the publisher's peak RSS.

Checked for every run against the subscriber's own count (agents/sub.json): its counter of every
message it took is the measured plus the warm-up messages (plus at most 10 of mwperf's own:
discovery probes, end-of-stream markers), its measured count is the accounting's received, and its measured messages over
its own steady window are the delivered rate reported (to 1 %, where it measured 100 or more). Exit 1 otherwise. Every run
has --peer-timeout 5s (longer than Fast DDS's 3 s heartbeat period).
Usage: python3 benchmarks/bench_ros2_throughput.py [--reps N] [--seconds S] [--window W]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import read_result  # (run as a script: benchmarks/ is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (str(ROOT / "python"), os.environ.get("PYTHONPATH")) if p)

SIZES = ("64", "1KiB", "64KiB", "1MiB")
CONTROL_MESSAGES = 10
"""at most this many of mwperf's own messages besides the measured and warm-up ones"""
PEER_TIMEOUT = "5s"
"""longer than Fast DDS's 3 s heartbeat period: a writer whose history is full of
unacknowledged messages is acknowledged at the latest with that heartbeat"""


def stacks(window: int) -> list[tuple[str, list[str]]]:
    return [("fastdds kilted (raw)", ["--transport", "fastdds", "--opt", "distro=kilted"]),
            ("ros2 keep-all", ["--transport", "ros2"]),
            ("ros2 keep-last 10", ["--transport", "ros2", "--history", "keep-last:10"]),
            (f"ros2 window={window}", ["--transport", "ros2", "--opt", f"window={window}"])]


def run_point(args: list[str], size: str, seconds: float) -> dict:
    """One throughput run: its figures, checked against the subscriber's own count."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "mwperf", "run", "--mode", "throughput", "--payload", size,
               "--duration", f"{seconds}s", "--peer-timeout", PEER_TIMEOUT, "--results", tmp,
               *args]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        runs = [p for p in Path(tmp).iterdir() if (p / "result.json").exists()]
        if not runs:
            return {"status": f"no result (exit {done.returncode}): "
                              f"{done.stderr.strip().splitlines()[-1:]}"}
        run = runs[0]
        result = read_result((run / "result.json").read_text())
        sub = json.loads((run / "agents" / "sub.json").read_text())
        pub = json.loads((run / "agents" / "pub.json").read_text())
    m = result["measurement"]
    acc, tp = m["accounting"], m["throughput"] or {}
    own = sub["counters"]["received"]
    # everything the subscriber took: measured + warm-up + a few of mwperf's own (the
    # discovery probes, the end-of-stream markers)
    checked = 0 <= own - (acc["received"] + acc["warmup_received"]) <= CONTROL_MESSAGES
    side = sub.get("throughput") or {}
    if side.get("messages"):
        checked = checked and side["messages"] == acc["received"]
        if side["messages"] >= 100:  # a rate over fewer is a burst's
            own_rate = side["messages"] / side["steady_wall_s"]
            checked = checked and abs(own_rate - tp["msgs_per_s"]) <= 0.01 * own_rate
    sending_s = (tp.get("sender") or {}).get("sending_s")
    return {"status": result["status"], "reason": result.get("status_reason"),
            "delivered": tp.get("msgs_per_s") or 0.0, "sent": acc["sent"],
            # the same messages over the publisher's sending window: a stream that stalls and
            # then arrives in a burst has a short receive window and a high "delivered"
            "per_sending_s": acc["received"] / sending_s if sending_s else 0.0,
            "received": acc["received"], "loss": tp.get("loss_pct"),
            "refused": ((tp.get("sender") or {}).get("refused")),
            "pub_rss_mib": pub["process"]["max_rss_kib"] / 1024, "checked": checked,
            "sub_own": own}


def fmt_rate(x: float) -> str:
    return f"{x:,.0f}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--window", type=int, default=16)
    ap.add_argument("--json", help="also write every run's figures to this file")
    a = ap.parse_args()
    cells: dict[tuple[str, str], list[dict]] = {}
    bad = 0
    for rep in range(1, a.reps + 1):
        for size in SIZES:
            for name, args in stacks(a.window):
                r = run_point(args, size, a.seconds)
                cells.setdefault((name, size), []).append(r)
                ok = r.get("checked", False)
                bad += not ok
                print(f"round {rep} {size:>6} {name:<22} {r['status']:<9} "
                      + (f"delivered {fmt_rate(r['delivered'])}/s "
                         f"({fmt_rate(r['per_sending_s'])}/s of sending) sent {r['sent']} received "
                         f"{r['received']} (sub's own {r['sub_own']}) loss {r['loss']} "
                         f"refused {r['refused']} pub RSS {r['pub_rss_mib']:.0f} MiB "
                         f"{'checked' if ok else 'CHECK FAILED'} {r['reason'] or ''}"
                         if "delivered" in r else ""), flush=True)
    print()
    print("| payload | stack | delivered msg/s, median (lowest–highest) | MB/s | received per "
          "second of sending, median (lowest–highest) | loss, median (rounds) | publisher peak "
          "RSS | status |")
    print("|---|---|---|---|---|---|---|---|")
    nbytes = {"64": 64, "1KiB": 1024, "64KiB": 65536, "1MiB": 1 << 20}
    for size in SIZES:
        for name, _ in stacks(a.window):
            rs = [r for r in cells[(name, size)] if "delivered" in r]
            if not rs:
                print(f"| {size} | {name} | — | — | — | — | — | {cells[(name, size)][0]['status']} |")
                continue
            d = [r["delivered"] for r in rs]
            g = [r["per_sending_s"] for r in rs]
            loss = [r["loss"] for r in rs if r["loss"] is not None]
            rss = statistics.median(r["pub_rss_mib"] for r in rs)
            status = ", ".join(sorted({r["status"] for r in rs}))
            print(f"| {size} | {name} | {fmt_rate(statistics.median(d))} ({fmt_rate(min(d))}–"
                  f"{fmt_rate(max(d))}) | {statistics.median(d) * nbytes[size] / 1e6:,.1f} | "
                  f"{fmt_rate(statistics.median(g))} ({fmt_rate(min(g))}–{fmt_rate(max(g))}) | "
                  + (f"{statistics.median(loss):.1f} % ({', '.join(f'{x:.0f}' for x in loss)})"
                     if loss else "—")
                  + f" | {rss:,.0f} MiB | {status} |")
    if a.json:
        Path(a.json).write_text(json.dumps({f"{k[0]} | {k[1]}": v for k, v in cells.items()},
                                           indent=1))
    print(f"\nchecked against the subscriber's own count: {sum(len(v) for v in cells.values()) - bad}"
          f" of {sum(len(v) for v in cells.values())} runs")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
