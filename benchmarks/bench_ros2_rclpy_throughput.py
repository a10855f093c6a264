"""rclpy vs the rcl shim as a throughput stream's publisher (issue 39): the same reliable stream
(``--transport ros2 --mode throughput``, keep-all, Kilted's rmw_fastrtps_cpp with ROS 2's Fast
DDS defaults) from the agent's pub (rcl through mwperf's shim, serialized publish) and from a
real rclpy publisher (``--opt client=rclpy``: ros2/throughput_pub.py, a UInt8MultiArray built
in Python per message), both into the agent's rcl subscriber, PAYLOAD in {64 B, 1 KiB, 64 KiB,
1 MiB} (``--sizes`` picks some).

REPEATS rounds, interleaved (both stacks and sizes of round 1, then round 2, ...), SECONDS each
after mwperf's 1 s warm-up, ``--peer-timeout 5s`` (longer than Fast DDS's 3 s heartbeat). Per
cell: the median of the rounds with the lowest-highest beside it, of the delivered msgs/s (the
subscriber's measured messages over its receive window), the messages received per second of
the publisher's sending window, the publisher's CPU per message (its steady window) and its
send call's p50.

Every run is checked (exit 1 otherwise) against the sender's own count (agents/pub.json
``sent``: the result's sent is it, and every one was received, none lost) and the subscriber's
own (bench_ros2_throughput.run_point: its counter of every message it took is the measured plus
the warm-up messages plus at most a few of mwperf's own, its measured count the accounting's
received, its own rate the delivered rate reported).
Usage: python3 benchmarks/bench_ros2_rclpy_throughput.py [--reps N] [--seconds S] [--sizes A,B]
       [--json F]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_ros2_throughput as base  # noqa: E402  (the run and the subscriber's checks)

SIZES = ("64", "1KiB", "64KiB", "1MiB")
STACKS = (("rcl shim (agent pub)", ["--transport", "ros2"]),
          ("rclpy publisher", ["--transport", "ros2", "--opt", "client=rclpy"]))


def run_point(args: list[str], size: str, seconds: float) -> dict:
    """One run, with the publisher's figures and the check against its own count."""
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "mwperf", "run", "--mode", "throughput", "--payload", size,
               "--duration", f"{seconds}s", "--peer-timeout", base.PEER_TIMEOUT, "--results",
               tmp, *args]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        runs = [p for p in Path(tmp).iterdir() if (p / "result.json").exists()]
        if not runs:
            return {"status": f"no result (exit {done.returncode}): "
                              f"{done.stderr.strip().splitlines()[-1:]}", "checked": False}
        run = runs[0]
        result = base.read_result((run / "result.json").read_text())
        sub = json.loads((run / "agents" / "sub.json").read_text())
        pub = json.loads((run / "agents" / "pub.json").read_text())
    m = result["measurement"]
    acc, tp = m["accounting"], m["throughput"] or {}
    own = sub["counters"]["received"]
    failed = []
    extra = own - (acc["received"] + acc["warmup_received"])
    if not 0 <= extra <= base.CONTROL_MESSAGES:
        failed.append(f"sub's own count {own} = measured {acc['received']} + warm-up "
                      f"{acc['warmup_received']} + {extra}")
    side = sub.get("throughput") or {}
    if side.get("messages") != acc["received"]:
        failed.append(f"sub's measured {side.get('messages')} != received {acc['received']}")
    if side.get("messages", 0) >= 100:
        own_rate = side["messages"] / side["steady_wall_s"]
        if abs(own_rate - tp["msgs_per_s"]) > 0.01 * own_rate:
            failed.append(f"sub's own rate {own_rate:.0f}/s != delivered {tp['msgs_per_s']:.0f}/s")
    # the sender's own count, all of it delivered
    if not acc["sent"] == pub["sent"] == acc["received"] or acc["lost"]:
        failed.append(f"pub's own {pub['sent']}, result sent {acc['sent']}, received "
                      f"{acc['received']}, lost {acc['lost']}")
    checked = not failed
    sender = tp.get("sender") or {}
    sending_s = sender.get("sending_s")
    return {"status": result["status"], "reason": result.get("status_reason"),
            "delivered": tp.get("msgs_per_s") or 0.0,
            "per_sending_s": acc["received"] / sending_s if sending_s else 0.0,
            "sent": acc["sent"], "pub_sent": pub["sent"], "received": acc["received"],
            "sub_own": own, "pub_cpu_us": ((tp.get("cpu") or {}).get("pub") or {}).get(
                "per_msg_us"), "send_p50_us": (sender.get("send_p50_ns") or 0) / 1e3,
            "refused": sender.get("refused"), "pub_tool": pub["tool"]["name"],
            "checked": checked, "failed": failed}


def spread(values: list[float], fmt: str) -> str:
    return (f"{format(statistics.median(values), fmt)} ({format(min(values), fmt)}–"
            f"{format(max(values), fmt)})")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--sizes", default=",".join(SIZES),
                    help=f"comma-separated payloads (default {','.join(SIZES)})")
    ap.add_argument("--json", help="also write every run's figures to this file")
    a = ap.parse_args()
    sizes = [s for s in a.sizes.split(",") if s]
    cells: dict[tuple[str, str], list[dict]] = {}
    bad = 0
    for rep in range(1, a.reps + 1):
        for size in sizes:
            for name, args in STACKS:
                r = run_point(args, size, a.seconds)
                cells.setdefault((name, size), []).append(r)
                bad += not r["checked"]
                print(f"round {rep} {size:>6} {name:<21} {r['status']:<9} "
                      + (f"delivered {r['delivered']:,.0f}/s ({r['per_sending_s']:,.0f}/s of "
                         f"sending) pub's own {r['pub_sent']} received {r['received']} (sub's "
                         f"own {r['sub_own']}) pub CPU {r['pub_cpu_us']} us/msg send p50 "
                         f"{r['send_p50_us']:.1f} us refused {r['refused']} [{r['pub_tool']}] "
                         f"{'checked' if r['checked'] else 'CHECK FAILED: ' + '; '.join(r['failed'])} "
                         f"{r['reason'] or ''}"
                         if "delivered" in r else ""), flush=True)
    print()
    print("| payload | publisher | delivered msg/s, median (lowest–highest) | received per "
          "second of sending | publisher CPU µs/msg | send call p50 µs | status |")
    print("|---|---|---|---|---|---|---|")
    for size in sizes:
        for name, _ in STACKS:
            rs = [r for r in cells[(name, size)] if "delivered" in r]
            if not rs:
                print(f"| {size} | {name} | — | — | — | — | {cells[(name, size)][0]['status']} |")
                continue
            cpu = [r["pub_cpu_us"] for r in rs if r["pub_cpu_us"] is not None]
            print(f"| {size} | {name} | {spread([r['delivered'] for r in rs], ',.0f')} | "
                  f"{spread([r['per_sending_s'] for r in rs], ',.0f')} | "
                  f"{spread(cpu, '.1f') if cpu else '—'} | "
                  f"{spread([r['send_p50_us'] for r in rs], '.1f')} | "
                  f"{', '.join(sorted({r['status'] for r in rs}))} |")
    if a.json:
        Path(a.json).write_text(json.dumps({f"{k[0]} | {k[1]}": v for k, v in cells.items()},
                                           indent=1))
    total = sum(len(v) for v in cells.values())
    print(f"\nchecked against the publisher's and the subscriber's own counts: {total - bad} of "
          f"{total} runs")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
