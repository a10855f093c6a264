"""How a ros2 publisher is paced (issue 39): `--opt window=N` (the publisher waits for its
subscription's acknowledgements every N messages, rcl_publisher_wait_for_all_acked) and
`--opt timer=rcl` (an rcl timer instead of mwperf's pacer), with the real agents as real ROS 2
nodes (rmw_fastrtps_cpp of mwperf's managed Kilted). Bad values are exit 2 naming the option."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from test_ros2_transport_e2e import fastdds_files, leftovers

pytestmark = pytest.mark.agent


def mwperf(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mwperf", "run", "--transport", "ros2",
                           *args], capture_output=True, text=True, timeout=180)


def test_a_windowed_1mib_throughput_stream_delivers_every_message(tmp_path: Path) -> None:
    # without the window ROS 2's defaults send 1 MiB as UDP fragments as fast as the writer's
    # 5000-message keep-all history takes them: BENCHMARKS.md measured none delivered
    before = fastdds_files()
    done = mwperf("--mode", "throughput", "--payload", "1MiB", "--duration", "2s",
                  "--opt", "window=16", "--results", str(tmp_path))
    assert done.returncode == 0, done.stderr
    run = next(p for p in tmp_path.iterdir() if (p / "result.json").exists())
    result = json.loads((run / "result.json").read_text())
    assert result["status"] == "complete", result["status_reason"]
    acc = result["measurement"]["accounting"]
    assert acc["received"] == acc["sent"] > 0 and acc["lost"] == 0, acc
    # the subscriber's own count: its measured messages, and everything it took (warm-up and
    # at most a few of mwperf's own messages besides)
    sub = json.loads((run / "agents" / "sub.json").read_text())
    assert sub["throughput"]["messages"] == acc["received"]
    assert 0 <= sub["counters"]["received"] - acc["received"] - acc["warmup_received"] <= 10
    assert not leftovers(before)


def test_an_rcl_timer_sends_at_the_rate_asked(tmp_path: Path) -> None:
    rate, seconds = 200, 3
    out = tmp_path / "r.json"
    # keep-all: a subscriber the loaded machine holds back more than 10 messages does not lose
    # the oldest (keep-last 10 would, whatever paces the sender)
    done = mwperf("--mode", "oneway", "--rate", str(rate), "--duration", f"{seconds}s",
                  "--warmup", "200ms", "--history", "keep-all", "--opt", "timer=rcl",
                  "--no-save", "--json-out", str(out))
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["status"] == "complete", result["status_reason"]
    acc = result["measurement"]["accounting"]
    assert acc["sent"] == rate * seconds and acc["received"] == acc["sent"], acc
    # its lateness is reported as the pacer's: every message measured against its slot
    schedule = result["measurement"]["schedule"]
    assert schedule["period_ns"] == 1e9 / rate
    assert schedule["lateness"]["count"] == acc["sent"]
    # the rate as the subscriber saw it: each whole second of its receive series holds the
    # messages of one second of the schedule, give or take those that the measured lateness and
    # latency (their max) can move across the second's edges
    series = [s["received"] for s in result["measurement"]["series"]]
    slack_ns = schedule["lateness"]["max_ns"] + result["measurement"]["response"]["max_ns"]
    slack = 2 * (slack_ns * rate / 1e9 + 1)
    whole = series[1:-1] if len(series) > 2 else series
    assert whole and all(abs(n - rate) <= slack for n in whole), (series, slack)


@pytest.mark.parametrize("args,message", [
    (("--opt", "window=0"), "--opt window=0 (allowed: a whole number of messages >= 1"),
    (("--opt", "window=16", "--reliability", "best-effort"),
     "--opt window=16 with --reliability best-effort"),
    (("--opt", "timer=wall"), "--opt timer=wall (allowed: rcl, mwperf)"),
    (("--opt", "timer=rcl", "--mode", "roundtrip"), "--opt timer=rcl outside a publisher's stream"),
])
def test_a_bad_pacing_option_is_exit_2_naming_it(args: tuple[str, ...], message: str) -> None:
    done = mwperf("--mode", "oneway", "--duration", "1s", "--no-save", *args)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert message in done.stderr, done.stderr
