#!/usr/bin/env python3
"""A stand-in for ``mwperf-agent probe-ros2`` (no DDS): prints READY and a canned log
(tests/fixtures/probe_ros2/agent-log.txt, or $FAKE_PROBE_ROS2_LOG), then exits 0. Select it with
MWPERF_AGENT=<this file>. $FAKE_PROBE_ROS2 picks a failure instead: ``usage`` (exit 2, one line
on stderr, as for an interface that does not exist) or ``fail`` (exit 1, as for an empty
domain) or ``hang`` (READY, then wait for a signal; SIGTERM writes $FAKE_PROBE_ROS2_ARGV.term
and exits 143). $FAKE_PROBE_ROS2_ARGV=FILE: write the arguments there as JSON first."""

import json
import os
import signal
import sys
import time
from pathlib import Path

LOG = Path(__file__).resolve().parent.parent / "fixtures" / "probe_ros2" / "agent-log.txt"


def main() -> int:
    if os.environ.get("FAKE_PROBE_ROS2_ARGV"):
        Path(os.environ["FAKE_PROBE_ROS2_ARGV"]).write_text(json.dumps(sys.argv[1:]))
    if sys.argv[1:2] != ["probe-ros2"]:
        print(f"mwperf-agent: error: the fake knows only probe-ros2, got {sys.argv[1:2]}",
              file=sys.stderr)
        return 2
    behaviour = os.environ.get("FAKE_PROBE_ROS2", "")
    if behaviour == "usage":
        print("mwperf-agent: error: probe-ros2: --interface eth9: no such interface "
              "(this host has: lo, eth0)", file=sys.stderr)
        return 2
    if behaviour == "fail":
        print("READY probe-ros2 domain=0 interface=lo", flush=True)
        print("some progress line", file=sys.stderr)
        print("mwperf-agent: error: probe-ros2: nothing discovered on DDS domain 0 (interface "
              "lo) within 3 s", file=sys.stderr)
        return 1
    if behaviour == "hang":
        def stop(*_: object) -> None:
            Path(os.environ["FAKE_PROBE_ROS2_ARGV"] + ".term").write_text("SIGTERM")
            sys.exit(143)
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the terminal's Ctrl-C: mwperf stops it
        print("READY probe-ros2 domain=0 interface=lo", flush=True)
        time.sleep(60)
        return 0
    sys.stdout.write(Path(os.environ.get("FAKE_PROBE_ROS2_LOG") or LOG).read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
