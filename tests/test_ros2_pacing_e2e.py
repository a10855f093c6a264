"""How a ros2 publisher is paced (issue 39): `--opt window=N` (the publisher waits for its
subscription's acknowledgements every N messages, rcl_publisher_wait_for_all_acked) and
`--opt timer=rcl` (an rcl timer instead of mwperf's pacer: a pub, a round trip's ping, a graph
node's timers), with the real agents as real ROS 2
nodes (rmw_fastrtps_cpp of mwperf's managed Kilted). Bad values are exit 2 naming the option."""

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from conftest import read_saved, run_mwperf, run_mwperf_own_shm
from test_ros2_transport_e2e import fastdds_files, leftovers

pytestmark = pytest.mark.agent


def mwperf(*args: str) -> subprocess.CompletedProcess[str]:
    return run_mwperf("run", "--transport", "ros2", *args, timeout=180)


def test_a_windowed_1mib_throughput_stream_delivers_every_message(tmp_path: Path) -> None:
    # without the window ROS 2's defaults send 1 MiB as UDP fragments as fast as the writer's
    # 5000-message keep-all history takes them: BENCHMARKS.md measured none delivered
    done, left = run_mwperf_own_shm("run", "--transport", "ros2", "--mode", "throughput",
                                    "--payload", "1MiB", "--duration", "2s", "--opt",
                                    "window=16", "--results", str(tmp_path), timeout=180)
    assert done.returncode == 0, done.stderr
    run = next(p for p in tmp_path.iterdir() if (p / "result.json").exists())
    result = read_saved(run / "result.json")
    assert result["status"] == "complete", result["status_reason"]
    acc = result["measurement"]["accounting"]
    assert acc["received"] == acc["sent"] > 0 and acc["lost"] == 0, acc
    # the subscriber's own count: its measured messages, and everything it took (warm-up and
    # at most a few of mwperf's own messages besides)
    sub = json.loads((run / "agents" / "sub.json").read_text())
    assert sub["throughput"]["messages"] == acc["received"]
    assert 0 <= sub["counters"]["received"] - acc["received"] - acc["warmup_received"] <= 10
    assert left == [], f"left in /dev/shm: {left}"


def test_a_saturating_64kib_keep_all_stream_is_delivered_whole_the_publisher_waiting_at_its_end(
        tmp_path: Path) -> None:
    # no window: the writer runs up to 5000 messages (328 MB) ahead of its reader, and leaving
    # after 1 s dropped that backlog with the writer (BENCHMARKS.md: up to all 2038 of a run's
    # messages lost); at a planned end the publisher now waits up to --peer-timeout for its
    # reader's acknowledgements, which comes as soon as the reader has taken everything
    before = fastdds_files()
    done = mwperf("--mode", "throughput", "--payload", "64KiB", "--duration", "2s",
                  "--warmup", "500ms", "--peer-timeout", "60s", "--results", str(tmp_path))
    assert done.returncode == 0, done.stderr
    run = next(p for p in tmp_path.iterdir() if (p / "result.json").exists())
    result = read_saved(run / "result.json")
    assert result["status"] == "complete", result["status_reason"]
    assert "acknowledged" not in (result["status_reason"] or ""), result["status_reason"]
    acc = result["measurement"]["accounting"]
    pub = json.loads((run / "agents" / "pub.json").read_text())
    assert acc["sent"] == pub["sent"] > 0
    assert acc["received"] == acc["sent"] and acc["lost"] == 0, acc
    sub = json.loads((run / "agents" / "sub.json").read_text())
    assert sub["throughput"]["messages"] == acc["received"]
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
    result = read_saved(out)
    assert result["status"] == "complete", result["status_reason"]
    acc = result["measurement"]["accounting"]
    assert acc["sent"] == rate * seconds and acc["received"] == acc["sent"], acc
    # its lateness is reported as the pacer's: every message measured against its slot
    schedule = result["measurement"]["schedule"]
    assert schedule["period_ns"] == 1e9 / rate
    assert schedule["lateness"]["count"] == acc["sent"]
    per_second_within(result, rate)


def per_second_within(result: dict, rate: int) -> None:
    """The rate as the receiving side saw it: each whole second of its receive series holds the
    messages of one second of the schedule, give or take those that the measured lateness and
    latency (their max) can move across the second's edges."""
    schedule = result["measurement"]["schedule"]
    series = [s["received"] for s in result["measurement"]["series"]]
    slack_ns = schedule["lateness"]["max_ns"] + result["measurement"]["response"]["max_ns"]
    slack = 2 * (slack_ns * rate / 1e9 + 1)
    whole = series[1:-1] if len(series) > 2 else series
    assert whole and all(abs(n - rate) <= slack for n in whole), (series, slack)


def test_an_rcl_timer_paces_a_round_trips_ping(tmp_path: Path) -> None:
    # the ping's echoes wait in the timer's wait set: every slot of the schedule sent at its
    # tick, every echo taken between ticks
    rate, seconds = 200, 3
    out = tmp_path / "r.json"
    done = mwperf("--mode", "roundtrip", "--rate", str(rate), "--duration", f"{seconds}s",
                  "--warmup", "200ms", "--history", "keep-all", "--opt", "timer=rcl",
                  "--no-save", "--json-out", str(out))
    assert done.returncode == 0, done.stderr
    result = read_saved(out)
    assert result["status"] == "complete", result["status_reason"]
    acc = result["measurement"]["accounting"]
    # the schedule's count, each echoed (the pong's own count: every message it took, probes
    # and the warm-up's included)
    assert acc["sent"] == rate * seconds and acc["received"] == acc["sent"], acc
    assert acc["warmup_sent"] == rate * 0.2 == acc["warmup_received"], acc
    schedule = result["measurement"]["schedule"]
    assert schedule["period_ns"] == 1e9 / rate
    assert schedule["lateness"]["count"] == acc["sent"]
    assert result["measurement"]["response"]["count"] == acc["received"]
    per_second_within(result, rate)


def test_an_rcl_timer_paces_a_graph_nodes_publishers(real_env: dict[str, str],
                                                     tmp_path: Path) -> None:
    # a single-threaded node with one subscription and two timers (the one-thread loop without
    # the option) and a multi-threaded one: each publisher's count is its schedule's, each
    # edge gets all of it
    graph = tmp_path / "g.yaml"
    graph.write_text(textwrap.dedent("""
        name: rcl-timers
        nodes:
          - name: hub
            publishers: [{topic: /fast, rate: 100, payload: 64}, {topic: /slow, rate: 10, payload: 1KiB}]
            subscribers: [{topic: /back}]
          - name: leaf
            executor: multi
            publishers: [{topic: /back, rate: 50, payload: 64}]
            subscribers: [{topic: /fast}, {topic: /slow}]
        """))
    out = tmp_path / "graph.json"
    done = run_mwperf("run", "--graph", str(graph), "--transport", "ros2", "--opt", "timer=rcl",
                      "--duration", "2s", "--warmup", "300ms", "--history", "keep-all",
                      "--no-save", "--json-out", str(out), env=real_env, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["status"] == "complete", result["status_reason"]
    edges = {e["topic"]: e for e in result["edges"]}
    assert sorted(edges) == ["/back", "/fast", "/slow"]
    for edge in edges.values():
        # ground truth: the publisher's own count, which the schedule fixes (2 s / period)
        assert edge["sent"] == 2e9 / edge["period_ns"], edge
        assert edge["received"] == edge["sent"] and edge["lost"] == 0, edge
        assert edge["latency"]["count"] == edge["received"]


@pytest.mark.parametrize("args,message", [
    (("--opt", "window=0"), "--opt window=0 (allowed: a whole number of messages >= 1"),
    (("--opt", "window=16", "--reliability", "best-effort"),
     "--opt window=16 with --reliability best-effort"),
    (("--opt", "timer=wall"), "--opt timer=wall on --transport ros2: allowed: timer=mwperf, "
                              "timer=rcl"),
    (("--opt", "timer=rcl", "--mode", "service"), "--opt timer=rcl: not with --mode service"),
])
def test_a_bad_pacing_option_is_exit_2_naming_it(args: tuple[str, ...], message: str) -> None:
    done = mwperf("--mode", "oneway", "--duration", "1s", "--no-save", *args)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert message in done.stderr, done.stderr


def test_an_rcl_timer_on_another_transport_is_exit_2_naming_the_allowed_options() -> None:
    done = run_mwperf("run", "--transport", "udp", "--opt", "timer=rcl", "--duration", "1s",
                      "--no-save", timeout=60)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "--opt timer: not an option of udp; allowed: none" in done.stderr, done.stderr


def test_a_bad_timer_in_a_graph_is_exit_2_before_any_node_starts(real_env: dict[str, str],
                                                                  tmp_path: Path) -> None:
    done = run_mwperf("run", "--graph", "sierra_nevada", "--transport", "ros2", "--opt",
                      "timer=wall", "--duration", "1s", "--no-save", env=real_env, timeout=60)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "--opt timer=wall on --graph sierra_nevada --transport ros2: allowed: timer=mwperf, " \
        "timer=rcl" in done.stderr, done.stderr
    assert "READY" not in done.stdout + done.stderr


@pytest.mark.parametrize("mode", ["oneway", "roundtrip"])
def test_loaned_messages_are_refused_naming_the_type_and_the_rmw(mode: str) -> None:
    # rcl_publisher_can_loan_messages asked of the real rmw_fastrtps_cpp: no loans of a type
    # with an unbounded uint8[] (it lends plain types only)
    done = mwperf("--mode", mode, "--duration", "1s", "--no-save", "--opt", "loan=on")
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "--opt loan=on: rmw_fastrtps_cpp of ROS 2 kilted" in done.stderr, done.stderr
    assert "does not lend std_msgs/msg/UInt8MultiArray messages " \
        "(rcl_publisher_can_loan_messages is false" in done.stderr, done.stderr
    assert "allowed: loan=off" in done.stderr


def test_an_unknown_loan_value_is_exit_2_naming_the_allowed_ones() -> None:
    done = mwperf("--mode", "oneway", "--duration", "1s", "--no-save", "--opt", "loan=maybe")
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "--opt loan=maybe (allowed: on, off)" in done.stderr, done.stderr
