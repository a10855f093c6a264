#!/usr/bin/env python3
"""The ROS 2 tax's figures and their check against the other side of each stream
(BENCHMARKS.md, "The ROS 2 tax").

    mwperf run ros2-tax --results R                # the measurement (about 15 min here)
    python3 benchmarks/bench_ros2_tax.py R          # the tax table and the count check

The table is the report's (mwperf.report.tax, the run in R named 'latest' unless --run). The
check: for every point, what the echo side counted itself — mwperf's pong agent its echoes
(agents/pong.json counters), the rclpy relay the messages it relayed (its log's "relayed N") —
against the ping's: at least every message the ping got back (measured, warm-up and the one
discovery probe answered), at most every message it sent (its probes included: the ping probes
every 10 ms until one comes back, and probes sent before the echo's endpoints matched may be
dropped by volatile QoS). Without loss that is every measured message. A point that fails is
named, and the script exits 1; a point that lost messages says on which way.
"""

import argparse
import json
import re
import sys
from pathlib import Path

from benchlib import measurement_of  # (run as a script: benchmarks/ is on sys.path)


def echo_count(folder: Path) -> int:
    """What the echo side of the point in ``folder`` counted itself."""
    log = folder / "daemons" / "rclpy-relay.log"
    if log.exists():
        (count,) = re.findall(r"^relayed (\d+)$", log.read_text(), re.MULTILINE)
        return int(count)
    pong = json.loads((folder / "agents" / "pong.json").read_text())
    return int(pong["counters"]["echoed"])


def ping_count(folder: Path) -> tuple[int, int, int, int]:
    """(the measured and warm-up messages the ping sent, its discovery probes, the measured and
    warm-up messages it got back plus the one probe that was answered, the measured messages it
    did not get back)."""
    ping = json.loads((folder / "agents" / "ping.json").read_text())
    accounting = measurement_of(ping)["accounting"]
    probes = (ping.get("discovery") or {}).get("probes", 0)
    return (accounting["sent"] + accounting["warmup_sent"], probes,
            accounting["received"] + accounting["warmup_received"] + 1,
            accounting["sent"] - accounting["received"])


def consistent(folder: Path) -> tuple[bool, str]:
    """Whether the echo's own count agrees with the ping's, and the counts as text: the echo
    passed on at least every message the ping got back, and at most what the ping sent."""
    sent, probes, back, lost = ping_count(folder)
    echoed = echo_count(folder)
    ok = sent > 0 and back <= echoed <= sent + probes
    return ok, (f"ping sent {sent} (+ {probes} probes), got {back} back (the answered probe "
                f"included; {lost} measured messages lost); the echo passed on {echoed}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path, help="the results folder of a ros2-tax run")
    ap.add_argument("--run", default="latest", help="the run (id or prefix; default latest)")
    args = ap.parse_args()
    from mwperf.report import tax
    from mwperf.report.data import load_runs

    runs = load_runs(args.results, [args.run])
    print(tax.markdown(runs))
    bad = 0
    checked = 0
    for run in runs:
        for point in run.points:
            ok, text = consistent(args.results / str(point.get("folder")))
            checked += 1
            if not ok:
                bad += 1
                print(f"MISMATCH {point.point_id}: {text}")
            elif ping_count(args.results / str(point.get("folder")))[3]:
                print(f"loss {point.point_id}: {text}")
    print(f"counts: at {checked - bad} of {checked} points the echo's own count lies between "
          "what the ping got back and what it sent")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
