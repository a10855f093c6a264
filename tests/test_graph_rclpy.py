"""Graph nodes run by rclpy (issue 40, item 1: ``client: rclpy``): what a graph file may ask of
an rclpy node and what is refused (exit 2, the file, node and field named, and what is allowed),
and ``mwperf-agent node-collect``: an rclpy node's log made into its node-report by the agent's
own collectors, with messages that python/mwperf/ros2/wire.py encoded (so the Python header,
checksum and payload pattern are checked against the agent's, message by message)."""

import json
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REAL_AGENT, run_mwperf
from mwperf.errors import UsageError
from mwperf.graph.clients import check_clients
from mwperf.graph.parse import parse_graph

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python" / "mwperf" / "ros2"))
import wire  # noqa: E402  (the rclpy node imports it so, as its sibling)

CHAIN = """
    nodes:
      - name: source
        publishers: [{topic: /a, rate: 100, payload: 256}]
      - name: middle
        client: rclpy
        executor: EXECUTOR
        subscribers: [{topic: /a, publish: /b, callback_group: reentrant}]
      - name: sink
        subscribers: [{topic: /b}]
    """


def graph(body: str, executor: str = "single"):  # type: ignore[no-untyped-def]
    return parse_graph(textwrap.dedent(body.replace("EXECUTOR", executor)).strip() + "\n",
                       "g.yaml")


@pytest.mark.parametrize("executor", ["single", "multi", "events"])
def test_an_rclpy_node_takes_rclpys_executors_and_callback_groups(fake_env, executor):
    middle = graph(CHAIN, executor).node("middle")
    assert (middle.client, middle.executor) == ("rclpy", executor)
    assert middle.subscribers[0].callback_group == "reentrant"
    assert graph(CHAIN).node("source").client == "agent"


@pytest.mark.parametrize(("change", "expected"), [
    (("client: rclpy", "client: rclcpp"), "g.yaml:5: node 'middle': client 'rclcpp'; allowed: "
                                          "agent, rclpy"),
    (("        client: rclpy\n", ""), "node 'middle': executor 'events'; allowed: single, multi "
                              "(events: with client: rclpy)"),
    (("callback_group: reentrant", "callback_group: mine"),
     "node 'middle', subscriber of '/a': callback_group 'mine'; allowed: exclusive, reentrant"),
    (("{topic: /b}", "{topic: /b, callback_group: reentrant}"),
     "node 'sink', subscriber of '/b': callback_group: only in a node with client: rclpy"),
    (("publish: /b, callback_group: reentrant}]", "publish: /b}]\n        publishers: "
                                                  "[{topic: /c, rate: max, payload: 8}]"),
     "node 'middle': client: rclpy: publisher of '/c': rate max: not in an rclpy node"),
    (("publish: /b, callback_group: reentrant}]", "publish: /b}]\n        servers: "
                                                  "[{service: /s}]"),
     "node 'middle': client: rclpy: servers and clients: not yet in an rclpy node"),
])
def test_what_an_rclpy_node_cannot_do_is_refused_naming_the_field(fake_env, change, expected):
    with pytest.raises(UsageError) as caught:
        graph(CHAIN.replace(*change), "events")
    assert expected in str(caught.value)


def test_an_rclpy_node_off_ros2_is_a_usage_error_naming_the_field_and_what_is_allowed(fake_env):
    chain = graph(CHAIN)
    with pytest.raises(UsageError) as caught:
        check_clients(chain, "cyclonedds")
    assert str(caught.value) == (
        "--graph g.yaml: node 'middle': client: rclpy: only with --transport ros2 (a real rclpy node "
        "on its RMW), not --transport cyclonedds; allowed on cyclonedds: client: agent")
    with pytest.raises(UsageError, match="node 'middle': executor: events: this ROS 2 "
                                         "distribution's rclpy has no EventsExecutor"):
        check_clients(graph(CHAIN, "events"), "ros2", has_events=False)
    with pytest.raises(UsageError, match="client: rclpy: not yet with --layers"):
        check_clients(chain, "ros2", layers=True)
    with pytest.raises(UsageError, match="client: rclpy: --opt type=sensor_msgs/msg/PointCloud2: "
                                         "not yet"):
        check_clients(chain, "ros2", message_type="sensor_msgs/msg/PointCloud2")
    check_clients(chain, "ros2", message_type="std_msgs/msg/UInt8MultiArray")
    check_clients(chain, "ros2")  # nothing to refuse


def test_the_command_line_refuses_it_before_anything_starts(fake_env, tmp_path: Path):
    path = tmp_path / "chain.yaml"
    path.write_text(textwrap.dedent(CHAIN.replace("EXECUTOR", "multi")))
    done = run_mwperf("run", "--graph", str(path), "--transport", "udp", "--duration", "1s",
                      "--no-save", env=fake_env)
    assert done.returncode == 2, done.stderr
    assert "node 'middle': client: rclpy: only with --transport ros2" in done.stderr
    assert not (Path(fake_env["FAKE_AGENT_TRACE"]) / "calls").exists() or \
        "node" not in (Path(fake_env["FAKE_AGENT_TRACE"]) / "calls").read_text()


# --- node-collect: the log of an rclpy node through the agent's collectors -------------------

RUN = 4242
SPEC = {"name": "middle", "index": 1, "executor": "single", "warmup_ns": 1_000_000,
        "duration_ns": 100_000_000, "linger_ns": 50_000_000, "publishers": [],
        "subscriptions": [{"topic": "/a", "id": 0, "address": "0/x", "busy_loop_ns": 0,
                           "period_ns": 10_000_000, "late_ns": 2_000_000,
                           "too_late_ns": 10_000_000,
                           "publish": {"topic": "/b", "id": 1, "payload_bytes": None,
                                       "addresses": ["0/y"], "subscribers": 1}}]}
GO = 1_000_000_000


def message(seq: int, intended: int, flags: int = 0, run: int = RUN, source: int = 0,
            length: int = 100) -> bytes:
    h = wire.Header(flags, run, 0, seq, intended, intended + 1000, source, length)
    return wire.encode(h) + wire.Pattern(length).payload(seq)


def record(msg: bytes, recv_ns: int, stage_ns: int = 0) -> bytes:
    return struct.pack("<IQQI", 0, recv_ns, stage_ns, len(msg)) + msg


@pytest.mark.agent
def test_node_collect_accounts_an_rclpy_nodes_log_as_the_agents_node_would(tmp_path: Path):
    """Ten measured messages 300 us after their send (one of them 3 ms: late), one duplicate,
    one with a flipped payload byte, a warm-up one, another run's and a stranger's bytes; the
    stage sent 9 measured messages 50 us after each callback's start."""
    log = [record(message(0, GO - 500_000, wire.FLAG_WARMUP), GO)]
    for seq in range(10):
        intended = GO + 2_000_000 + seq * 10_000_000
        lat = 3_000_000 if seq == 4 else 300_000
        recv = intended + 1000 + lat
        log.append(record(message(seq, intended), recv, recv + 50_000 if seq != 9 else 0))
    log.append(record(message(3, GO + 32_000_000), GO + 33_000_000))  # a duplicate
    bad = bytearray(message(10, GO + 102_000_000))
    bad[-1] ^= 0xFF
    log.append(record(bytes(bad), GO + 102_400_000))
    log.append(record(message(0, GO, run=RUN + 1), GO + 1))  # another run's
    log.append(record(b"hello", GO + 2))
    (tmp_path / "spec.json").write_text(json.dumps(SPEC))
    (tmp_path / "log.bin").write_bytes(b"".join(log))
    stage = {"topic": "/b", "id": 1, "sent": 9, "warmup_sent": 1, "send_errors": 0,
             "max_send_lag_ns": 0}
    (tmp_path / "sent.json").write_text(json.dumps({
        "role": "node", "name": "middle", "index": 1, "status": "complete",
        "discovery_ns": 5, "go_ns": GO, "sessions": 1, "publishers": [], "stages": [stage],
        "process": {"pid": 1, "wall_s": 1.0, "cpu_user_s": 0.1, "cpu_sys_s": 0.0,
                    "max_rss_kib": 1, "voluntary_ctx_switches": 0,
                    "involuntary_ctx_switches": 0}}))
    done = subprocess.run([str(REAL_AGENT), "node-collect", "--node-spec",
                           str(tmp_path / "spec.json"), "--sent", str(tmp_path / "sent.json"),
                           "--log", str(tmp_path / "log.bin"), "--run-id", str(RUN),
                           "--json", str(tmp_path / "report.json")],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    from mwperf.schema import validation_error
    assert validation_error(report, "node-report") is None
    sub = report["subscriptions"][0]
    assert (sub["foreign"], sub["malformed"], sub["warmup_received"]) == (2, 0, 1)
    assert sub["stage"] == stage
    assert sub["stage_time"]["count"] == 9 and sub["stage_time"]["max_ns"] == 50_000
    [edge] = sub["edges"]
    acc = edge["measurement"]["accounting"]
    assert (acc["received"], acc["duplicated"], acc["corrupted"]) == (10, 1, 1)
    service = edge["measurement"]["service"]
    assert service["min_ns"] == 300_000 and service["max_ns"] == 3_000_000
    assert (edge["late"], edge["too_late"], edge["source"]) == (1, 0, 0)


@pytest.mark.agent
def test_a_log_cut_short_is_an_error_naming_where(tmp_path: Path):
    (tmp_path / "spec.json").write_text(json.dumps(SPEC))
    (tmp_path / "log.bin").write_bytes(record(message(0, GO), GO + 1)[:-3])
    (tmp_path / "sent.json").write_text(json.dumps({"go_ns": GO, "stages": [None]}))
    done = subprocess.run([str(REAL_AGENT), "node-collect", "--node-spec",
                           str(tmp_path / "spec.json"), "--sent", str(tmp_path / "sent.json"),
                           "--log", str(tmp_path / "log.bin"), "--run-id", str(RUN),
                           "--json", str(tmp_path / "report.json")],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert "node-collect middle: --log: a message cut short at byte 0" in done.stderr


# --- a single stream: --opt client=rclpy -----------------------------------------------------

@pytest.mark.parametrize(("args", "expected"), [
    (("--transport", "udp"), "--opt client=rclpy: only with --transport ros2 (a real rclpy node "
                             "on its RMW), not --transport udp; allowed on udp: client=agent"),
    (("--transport", "ros2", "--mode", "throughput", "--rate", "100"),
     "--opt client=rclpy --mode throughput: the rclpy publisher sends as fast as rclpy "
     "publishes; --rate 100 is not allowed (allowed: --rate max, the default)"),
    (("--transport", "ros2", "--pong", "agent"),
     "--opt client=rclpy: not with --pong agent (client=rclpy makes the echo a real rclpy relay "
     "node: --pong relay)"),
])
def test_opt_client_rclpy_is_refused_where_there_is_no_rclpy_echo(fake_env, monkeypatch, args,
                                                                 expected):
    monkeypatch.setenv("FAKE_AGENT_TRANSPORTS", "ros2")
    fake_env = {**fake_env, "FAKE_AGENT_TRANSPORTS": "ros2"}
    done = run_mwperf("run", *args, "--opt", "client=rclpy", "--duration", "1s", "--no-save",
                      env=fake_env)
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr


def test_opt_client_takes_agent_or_rclpy_and_not_with_a_graph(fake_env, monkeypatch):
    monkeypatch.setenv("FAKE_AGENT_TRANSPORTS", "ros2")
    fake_env = {**fake_env, "FAKE_AGENT_TRANSPORTS": "ros2"}
    done = run_mwperf("run", "--transport", "ros2", "--opt", "client=rclcpp", "--no-save",
                      env=fake_env)
    assert done.returncode == 2
    assert "--opt client=rclcpp: allowed: client=agent, client=rclpy" in done.stderr
    done = run_mwperf("run", "--graph", "mobile-robot", "--transport", "ros2", "--opt",
                      "client=rclpy", "--no-save", env=fake_env)
    assert done.returncode == 2
    assert "--opt client: not with --graph: a graph file says who runs each node" in done.stderr


def test_opt_client_rclpy_makes_the_echo_the_rclpy_relay_and_is_not_passed_on(fake_env,
                                                                             monkeypatch):
    monkeypatch.setenv("FAKE_AGENT_TRANSPORTS", "ros2")
    from mwperf.config import build_point
    from mwperf.agent import find_agent
    point = build_point({"transport": "ros2", "opt": ("client=rclpy", "distro=kilted")},
                        find_agent)
    assert point.pong == "relay"
    assert point.opts == ("distro=kilted",)  # the agents never see it


def test_opt_client_rclpy_makes_a_throughput_streams_publisher_rclpys(fake_env, monkeypatch):
    monkeypatch.setenv("FAKE_AGENT_TRANSPORTS", "ros2")
    from mwperf.config import build_point
    from mwperf.agent import find_agent
    point = build_point({"transport": "ros2", "mode": "throughput",
                         "opt": ("client=rclpy", "distro=kilted")}, find_agent)
    assert (point.client, point.pong, point.rate) == ("rclpy", "agent", 0.0)
    assert point.opts == ("distro=kilted",)  # the agents never see it
    assert point.to_dict()["client"] == "rclpy"
    plain = build_point({"transport": "ros2", "mode": "throughput"}, find_agent)
    assert "client" not in plain.to_dict()  # the agent's: as before


def test_events_is_offered_where_the_distributions_rclpy_has_the_events_executor(tmp_path):
    from types import SimpleNamespace
    from mwperf.graph.clients import EVENTS_MODULE, has_events
    dist = SimpleNamespace(prefix=tmp_path)
    assert not has_events(dist)  # type: ignore[arg-type]
    module = tmp_path / "lib" / "python3.11" / "site-packages" / EVENTS_MODULE
    module.parent.mkdir(parents=True)
    module.write_text("")
    assert has_events(dist)  # type: ignore[arg-type]


def test_mwperf_graphs_shows_who_runs_a_node(fake_env, tmp_path):
    path = tmp_path / "chain.yaml"
    path.write_text(textwrap.dedent(CHAIN.replace("EXECUTOR", "events")))
    done = run_mwperf("graphs", str(path), env=fake_env)
    assert done.returncode == 0, done.stderr
    assert "  middle (rclpy, executor events): publishes -; subscribes /a -> /b" in done.stdout
    assert "  source: publishes /a" in done.stdout
