"""A throughput stream from a real rclpy publisher (issue 39: `--transport ros2 --mode
throughput --opt client=rclpy`, python/mwperf/ros2/throughput_pub.py) into the agent's rcl
subscriber, on the managed Kilted's rmw_fastrtps_cpp: what the subscriber delivered is checked
exactly against the rclpy publisher's own count; bad input is exit 2 naming the option."""

import json
import subprocess
from pathlib import Path

import pytest

from conftest import read_saved, run_mwperf_own_shm, run_mwperf

pytestmark = pytest.mark.agent


def mwperf(*args: str) -> subprocess.CompletedProcess[str]:
    return run_mwperf("run", "--transport", "ros2", "--mode", "throughput", *args, timeout=180)


@pytest.mark.parametrize("payload", ["64", "64KiB"])
def test_an_rclpy_publishers_stream_is_delivered_as_it_counted_it(tmp_path: Path,
                                                                   payload: str) -> None:
    done, left = run_mwperf_own_shm("run", "--transport", "ros2", "--mode", "throughput",
                                    "--opt", "client=rclpy", "--payload", payload, "--duration",
                                    "2s", "--warmup", "500ms", "--results", str(tmp_path),
                                    timeout=180)
    assert done.returncode == 0, done.stderr
    run = next(p for p in tmp_path.iterdir() if (p / "result.json").exists())
    result = read_saved(run / "result.json")
    assert result["status"] == "complete", result["status_reason"]
    assert result["config"]["client"] == "rclpy"
    pub = json.loads((run / "agents" / "pub.json").read_text())
    sub = json.loads((run / "agents" / "sub.json").read_text())
    # the publisher was the rclpy node (its report, its process), the subscriber the agent
    assert pub["tool"]["name"] == "mwperf rclpy publisher" and pub["config"]["client"] == "rclpy"
    assert sub["tool"]["name"] == "mwperf"
    acc = result["measurement"]["accounting"]
    # the rclpy publisher's own count, each message delivered (reliable keep-all), intact
    assert acc["sent"] == pub["sent"] > 0
    assert acc["received"] == acc["sent"] and acc["lost"] == 0 and acc["corrupted"] == 0, acc
    assert acc["warmup_received"] == acc["warmup_sent"] > 0, acc
    assert pub["throughput"]["messages"] == pub["sent"]
    assert sum(pub["throughput"]["sending"]["series"]) == pub["sent"]
    # the subscriber's own count: its measured messages, and everything it took (the warm-up's
    # and the three end-of-stream markers besides)
    assert sub["throughput"]["messages"] == acc["received"]
    assert 0 <= sub["counters"]["received"] - acc["received"] - acc["warmup_received"] <= 3
    assert result["measurement"]["throughput"]["sent_per_s"] > 0
    assert left == [], f"left in /dev/shm: {left}"


@pytest.mark.parametrize("args,message", [
    (("--reliability", "best-effort", "--rate", "1000"),
     "--opt client=rclpy --mode throughput: the rclpy publisher sends as fast as rclpy "
     "publishes; --rate 1000 is not allowed"),
    (("--payload", "PointCloud512k"),
     "the rclpy publisher sends std_msgs/msg/UInt8MultiArray only, not "
     "sensor_msgs/msg/PointCloud2"),
])
def test_what_the_rclpy_publisher_cannot_do_is_exit_2_naming_it(args: tuple[str, ...],
                                                                message: str) -> None:
    done = mwperf("--opt", "client=rclpy", "--duration", "1s", "--no-save", *args)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert message in done.stderr, done.stderr
