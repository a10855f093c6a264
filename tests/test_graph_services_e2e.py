"""Services in graph runs with the real agent: a server node and two client nodes at different
rates, their call counts exact (rate x duration, against the server's own count of requests),
their latencies above the server's work; a graph with topics and services beside each other;
an iRobot topology with a client and a server; a transport without services refused before
anything starts."""

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from conftest import run_mwperf

SHORT = ("--duration", "2s", "--warmup", "300ms", "--no-save")
WORK_NS = 300_000

SERVICES = f"""\
name: services
nodes:
  - name: map_server
    servers:
      - {{service: /get_map, reply_size: 2KiB, work: {WORK_NS // 1000}us}}
  - name: planner
    clients:
      - {{service: /get_map, rate: 100, size: 64}}
  - name: monitor
    clients:
      - {{service: /get_map, period: 40ms, size: 16, in_flight: 2, timeout: 500ms}}
"""


def graph_run(env: dict[str, str], tmp_path: Path, text: str, *args: str, name: str = "g.yaml",
              code: int = 0) -> dict[str, Any]:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    out = tmp_path / "graph.json"
    done = run_mwperf("run", "--graph", str(path), *SHORT, *args, "--json-out", str(out),
                      env=env, timeout=120)
    assert done.returncode == code, done.stderr
    return json.loads(out.read_text()) if code == 0 else {"stderr": done.stderr}


@pytest.mark.parametrize("transport", ["udp", "cyclonedds", "zenoh", "ros2"])
def test_every_call_is_answered_and_counted_by_both_sides(real_env: dict[str, str],
                                                         tmp_path: Path, transport: str) -> None:
    result = graph_run(real_env, tmp_path, SERVICES, "--transport", transport)
    assert result["status"] == "complete", result["status_reason"]
    calls = {c["client"]: c for c in result["calls"]}
    assert set(calls) == {"planner", "monitor"} and result["graph"]["services"] == 1
    for client, rate in (("planner", 100), ("monitor", 25)):
        c = calls[client]
        expected = 2 * rate  # the schedule fixes it: 2 s at the rate
        assert c["server"] == "map_server"
        assert c["slots"] == c["sent"] == expected, c
        # the server's own count of this client's measured requests: none lost either way
        assert c["server_requests"] == c["server_answered"] == c["answered"] == expected, c
        assert c["timeouts"] == c["errors"] == c["unmatched"] == c["skipped"] == 0, c
        assert c["latency"]["count"] == expected
        # a call takes at least the server's work; the server's time includes it too
        assert c["latency"]["min_ns"] > WORK_NS and c["call_latency"]["min_ns"] > WORK_NS, c
        assert c["server_time"]["min_ns"] >= WORK_NS
        assert c["latency"]["p50_ns"] >= c["call_latency"]["p50_ns"] >= c["server_time"][
            "p50_ns"]
        assert c["achieved_per_s"] == pytest.approx(rate)
    nodes = {n["name"]: n for n in result["nodes"]}
    if transport in ("cyclonedds", "ros2"):  # a node's clients and servers share its participant
        assert all(n["sessions"] == 1 for n in nodes.values())


def test_topics_and_services_run_side_by_side(real_env: dict[str, str], tmp_path: Path) -> None:
    text = """\
        name: mixed
        nodes:
          - name: sensor
            publishers: [{topic: /scan, rate: 50, payload: 1KiB}]
            servers: [{service: /status}]
          - name: planner
            subscribers: [{topic: /scan}]
            clients: [{service: /status, rate: 20, size: 8}]
        """
    result = graph_run(real_env, tmp_path, text, "--transport", "udp")
    assert result["status"] == "complete", result["status_reason"]
    [edge] = result["edges"]
    assert edge["received"] == edge["sent"] == 100
    [call] = result["calls"]
    assert call["answered"] == call["server_requests"] == 40 and call["timeouts"] == 0


def test_an_irobot_client_and_server_run(real_env: dict[str, str], tmp_path: Path) -> None:
    topology = {"nodes": [
        {"node_name": "node_0", "publishers": [
            {"topic_name": "topic_0", "msg_type": "stamped10b", "period_ms": 10}]},
        {"node_name": "node_1", "subscribers": [{"topic_name": "topic_0",
                                                 "msg_type": "stamped10b"}],
         "servers": [{"service_name": "service_1", "srv_type": "stamped10b"}]},
        {"node_name": "node_2", "clients": [
            {"service_name": "service_1", "srv_type": "stamped10b", "period_ms": 10}]}]}
    result = graph_run(real_env, tmp_path, json.dumps(topology), "--transport", "udp",
                       name="arch.json")
    assert result["status"] == "complete", result["status_reason"]
    [call] = result["calls"]
    assert (call["client"], call["server"], call["request_bytes"]) == ("node_2", "node_1", 10)
    assert call["answered"] == call["server_requests"] == 200


def test_a_transport_without_services_is_refused_before_anything_starts(
        real_env: dict[str, str], tmp_path: Path) -> None:
    out = graph_run(real_env, tmp_path, SERVICES, "--transport", "foxglove", code=2)
    assert "--graph services --transport foxglove: node 'map_server' has services, and " \
        "foxglove has none" in out["stderr"]
    assert "transports with services: " in out["stderr"]
