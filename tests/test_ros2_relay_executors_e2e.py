"""rclpy's real executors as the echo of a ros2 round trip (issue 40, item 1): ``--pong relay``
with ``--topics 3 --executor single|multi|events --busy-loop 2ms`` runs a real rclpy relay node
(python/mwperf/ros2/relay.py) with a topic pair each, every callback spinning 2 ms of CPU before
it publishes. A single-threaded executor (rclpy's SingleThreadedExecutor, its EventsExecutor)
runs the three callbacks of one tick one after another, so the last reply of a tick cannot come
back sooner than three busy loops after the first of its requests was sent: a hard floor from
what was injected, checked tick by tick from the ping's own samples; every message of every
topic comes back."""

import csv
from pathlib import Path

import pytest

from conftest import read_saved, run_mwperf

pytestmark = pytest.mark.agent

BUSY_NS = 2_000_000
RATE = 20
SECONDS = 3


def ticks(folder: Path, result: dict) -> list[tuple[int, int]]:
    """Per tick all three topics measured: (first request sent, last reply received), ns."""
    by_tick: dict[int, list[tuple[int, int]]] = {}
    for topic in result["per_topic"]:
        with open(folder / topic["samples_file"], newline="") as f:
            for row in csv.DictReader(f):
                if row["recv_ns"]:
                    by_tick.setdefault(int(row["intended_ns"]), []).append(
                        (int(row["sent_ns"]), int(row["recv_ns"])))
    return [(min(s for s, _ in t), max(r for _, r in t)) for t in by_tick.values() if len(t) == 3]


@pytest.mark.parametrize("executor", ["single", "multi", "events"])
def test_rclpy_executors_echo_three_topics(tmp_path: Path, executor: str):
    done = run_mwperf("run", "--transport", "ros2", "--pong", "relay", "--topics", "3",
                      "--executor", executor, "--busy-loop", f"{BUSY_NS}ns", "--rate", str(RATE),
                      "--depth", "1000",  # every message kept while a starved relay catches up
                      "--duration", f"{SECONDS}s", "--warmup", "500ms", "--samples",
                      "--results", str(tmp_path), timeout=180)
    assert done.returncode == 0, done.stderr + done.stdout
    folder = next(tmp_path.glob("*/result.json")).parent
    result = read_saved(folder / "result.json")
    assert [t["accounting"]["received"] for t in result["per_topic"]] == [RATE * SECONDS] * 3
    assert result["measurement"]["response"]["min_ns"] >= BUSY_NS  # one callback at least
    relay = next(d for d in result["daemons"] if d["name"] == "rclpy-relay")
    assert f"--executor {executor}" in " ".join(relay["argv"])
    measured = ticks(folder, result)
    assert len(measured) == RATE * SECONDS
    if executor != "multi":  # one callback at a time: three busy loops per tick
        assert all(last - first >= 3 * BUSY_NS for first, last in measured), measured[:5]


def test_events_is_the_rclpy_echos_alone(fake_env):
    done = run_mwperf("run", "--transport", "udp", "--topics", "3", "--executor", "events",
                      "--no-save", env=fake_env)
    assert done.returncode == 2
    assert "--executor events: mwperf's agents have single, multi" in done.stderr
