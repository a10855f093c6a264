"""``--opt client=rclpy`` on a single stream (issue 40, item 1; rclpy_roles.py): where an rclpy
node plays the other side and what is refused (exit 2, the flag named and what is allowed), and
``mwperf-agent sub --arrivals``: the log of an rclpy subscriber measured by the agent's sub,
with messages python/mwperf/ros2/wire.py encoded at known send and receive instants (the
latencies, counts and the end-of-stream marker checked against that injected truth)."""

import json
import subprocess
from pathlib import Path

import pytest

from conftest import REAL_AGENT, run_mwperf
from test_graph_rclpy import record, wire

RUN = 777
T0 = 5_000_000_000


def refused(fake_env: dict[str, str], *args: str) -> str:
    fake_env = {**fake_env, "FAKE_AGENT_TRANSPORTS": "ros2,udp"}
    done = run_mwperf("run", *args, "--opt", "client=rclpy", "--duration", "1s", "--no-save",
                      env=fake_env)
    assert done.returncode == 2, done.stderr
    return done.stderr


@pytest.mark.parametrize(("args", "expected"), [
    (("--transport", "udp", "--mode", "oneway"),
     "--opt client=rclpy: only with --transport ros2 (a real rclpy node on its RMW), not "
     "--transport udp; allowed on udp: client=agent"),
    (("--transport", "ros2", "--mode", "throughput", "--rate", "50"),
     "--opt client=rclpy --mode throughput: the rclpy publisher sends as fast as rclpy "
     "publishes; --rate 50 is not allowed (allowed: --rate max, the default)"),
    (("--transport", "ros2", "--mode", "oneway", "--topics", "2"),
     "--opt client=rclpy: not with --topics 2 (one topic); drop --topics 2 or use "
     "--opt client=agent"),
    (("--transport", "ros2", "--mode", "oneway", "--clock-sync"),
     "--opt client=rclpy: not with --clock-sync / --test-clock (the rclpy sub runs on this "
     "machine's clock)"),
    (("--transport", "ros2", "--mode", "service", "--count-allocs"),
     "--opt client=rclpy: not with --count-allocs / --alloc-sites"),
    (("--transport", "ros2", "--mode", "oneway", "--link", "delay=1ms"),
     "--opt client=rclpy: not with --link / a scenario's hosts (the rclpy sub runs on this "
     "machine's loopback)"),
    (("--transport", "ros2", "--mode", "oneway", "--executor", "fast"),
     "--executor: unknown executor 'fast'; allowed: single, multi, events"),
])
def test_client_rclpy_is_refused_where_no_rclpy_node_can_play(fake_env, monkeypatch, args,
                                                              expected):
    monkeypatch.setenv("FAKE_AGENT_TRANSPORTS", "ros2,udp")
    assert expected in refused(fake_env, *args)


@pytest.mark.parametrize(("mode", "agents"), [("oneway", ("sub", "pub")),
                                               ("service", ("client",))])
def test_client_rclpy_plays_the_sub_or_the_server_and_is_not_passed_on(fake_env, monkeypatch,
                                                                     mode, agents):
    monkeypatch.setenv("FAKE_AGENT_TRANSPORTS", "ros2")
    from mwperf.agent import find_agent
    from mwperf.config import build_point
    from mwperf.parts import parts_for
    point = build_point({"transport": "ros2", "mode": mode, "executor": "events",
                         "opt": ("client=rclpy", "distro=kilted")}, find_agent)
    assert (point.client, point.pong, point.opts) == ("rclpy", "agent", ("distro=kilted",))
    assert point.to_dict()["client"] == "rclpy"
    assert ("rclpy sub" in [p.name for p in parts_for(point)]) == (mode == "oneway")
    plain = build_point({"transport": "ros2", "mode": mode}, find_agent)
    assert "client" not in plain.to_dict()  # an agent's point reads as before


# --- sub --arrivals: an rclpy subscriber's log measured by the agent's sub -------------------

def message(seq: int, intended: int, flags: int = 0, run: int = RUN, length: int = 64) -> bytes:
    h = wire.Header(flags, run, 0, seq, intended, intended + 1_000, 0, length)
    return wire.encode(h) + wire.Pattern(length).payload(seq)


def fin(sent: int, warmup: int, period_ns: int) -> bytes:
    return wire.encode(wire.Header(wire.FLAG_FIN, RUN, 0, sent, warmup, 0, period_ns, 0))


def sub_from(tmp_path: Path, log: list[bytes], *extra: str) -> tuple[int, dict]:
    (tmp_path / "sub.arrivals").write_bytes(b"".join(log))
    done = subprocess.run([str(REAL_AGENT), "sub", "--transport", "ros2", "--listen", "0/auto",
                           "--run-id", str(RUN), "--json", str(tmp_path / "sub.json"),
                           "--quiet", "--arrivals", str(tmp_path / "sub.arrivals"), *extra],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode in (0, 3), done.stderr
    report = json.loads((tmp_path / "sub.json").read_text())
    from mwperf.schema import validation_error
    assert validation_error(report, "agent-report") is None
    return done.returncode, report


@pytest.mark.agent
def test_sub_arrivals_measures_an_rclpy_subscribers_log_against_the_injected_truth(
        tmp_path: Path):
    """Two warm-up and ten measured messages each taken 400 us after its send (the sixth 4 ms),
    one of them twice, one lost, a flipped byte, a foreign run's, then the end-of-stream marker
    saying 12 were sent and the last one, a straggler within the linger."""
    period = 10_000_000
    log = [record(message(s, T0 + s * period, wire.FLAG_WARMUP), T0 + s * period + 401_000)
           for s in range(2)]
    base = T0 + 100_000_000
    for seq in range(10):
        if seq == 7:
            continue  # lost
        intended = base + seq * period
        log.append(record(message(seq, intended), intended + 1_000 +
                          (4_000_000 if seq == 5 else 400_000)))
    log.append(record(message(2, base + 2 * period), base + 2 * period + 900_000))  # twice
    bad = bytearray(message(10, base + 10 * period))
    bad[-1] ^= 0xFF
    log.append(record(bytes(bad), base + 10 * period + 401_000))
    log.append(record(message(0, base, run=RUN + 1), base + 1))  # another run's
    log.append(record(fin(12, 2, period), base + 11 * period))
    log.append(record(message(11, base + 11 * period), base + 11 * period + 401_000))
    code, report = sub_from(tmp_path, log)
    assert code == 0 and report["status"] == "complete", report["status_reason"]
    m = report["measurement"]
    acc = m["accounting"]
    assert (acc["sent"], acc["warmup_sent"], acc["warmup_received"]) == (12, 2, 2)
    assert (acc["received"], acc["lost"], acc["duplicated"], acc["corrupted"]) == \
        (10, 1, 1, 1), acc
    assert acc["foreign"] == 1
    # from the send instant (service) and from the schedule's (response: 1 us before the send)
    assert (m["service"]["min_ns"], m["service"]["max_ns"]) == (400_000, 4_000_000)
    assert (m["response"]["min_ns"], m["response"]["max_ns"]) == (401_000, 4_001_000)
    assert report["config"]["arrivals"] == str(tmp_path / "sub.arrivals")


@pytest.mark.agent
def test_sub_arrivals_without_the_marker_says_why_as_the_agents_sub_does(tmp_path: Path):
    """The agent's own sub stopped by a signal before the marker reports what it measured
    with that reason (the runner marks the interrupted point partial); so does a logged one."""
    log = [record(message(s, T0 + s * 1_000_000), T0 + s * 1_000_000 + 300_000)
           for s in range(3)]
    code, report = sub_from(tmp_path, log, "--arrivals-stopped",
                            "stopped by signal before the end-of-stream marker")
    assert code == 0 and report["status"] == "complete"
    assert report["status_reason"] == "stopped by signal before the end-of-stream marker"
    acc = report["measurement"]["accounting"]
    assert (acc["sent"], acc["received"]) == (3, 3)  # the highest seq seen, as the agent's


@pytest.mark.agent
@pytest.mark.parametrize(("extra", "expected"), [
    (("--topics", "2"), "--arrivals: not with --topics 2 (one topic)"),
    (("--throughput",), "--arrivals: not with --throughput"),
])
def test_sub_arrivals_refuses_what_a_logged_subscriber_cannot_be(tmp_path: Path, extra,
                                                                 expected):
    (tmp_path / "a").write_bytes(b"")
    done = subprocess.run([str(REAL_AGENT), "sub", "--transport", "ros2", "--listen", "0/auto",
                           "--json", str(tmp_path / "s.json"), "--arrivals",
                           str(tmp_path / "a"), *extra],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert expected in done.stderr
