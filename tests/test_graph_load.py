"""A saturating publisher in a graph (``rate: max``, issue 26's latency under load): read,
refused where it cannot be (FILE:LINE, node, field), planned as period 0 for the agent, kept by
--rate-scale, and its edges' delivered msgs/s and bytes/s in the result and the summary."""

import textwrap
from pathlib import Path
from typing import Any

import pytest

from mwperf.config import PointConfig
from mwperf.errors import UsageError
from mwperf.graph.builtin import load_graph
from mwperf.graph.load import flow_control
from mwperf.graph.parse import parse_graph
from mwperf.graph.plan import addresses, linger_ns, node_specs
from mwperf.graph.result import interference, merge
from mwperf.graph.scale import scale
from mwperf.graph.subgraph import alone
from mwperf.show.graph import figure, render

LOADED = textwrap.dedent("""
    name: loaded
    nodes:
      - name: pinger
        publishers: [{topic: /ping, rate: 100, payload: 64}]
      - name: loader
        publishers: [{topic: /load, rate: max, payload: 1MiB}]
      - name: sink
        subscribers: [{topic: /load, publish: /digest, publish_payload: 16}]
      - name: ponger
        subscribers: [{topic: /ping}, {topic: /digest}]
    """).lstrip()


def test_rate_max_is_a_saturating_publisher_without_a_period() -> None:
    graph = parse_graph(LOADED, "g.yaml")
    (load,) = graph.node("loader").publishers
    assert (load.period_ns, load.saturating, load.payload_bytes) == (0, True, 1 << 20)
    assert graph.period_ns("/load") is None and graph.saturating("/load")
    # what a stage makes of a saturating topic has no period either
    assert graph.period_ns("/digest") is None and graph.saturating("/digest")
    assert graph.period_ns("/ping") == 10_000_000 and not graph.saturating("/ping")


@pytest.mark.parametrize(("body", "expected"), [
    ("""
     nodes:
       - name: a
         publishers: [{topic: /x, rate: fast, payload: 8}]
     """, "g.yaml:3: node 'a', publisher of '/x': rate: 'fast' is not a number from 0.001 to "
          "100000, or max (back to back, as fast as the middleware accepts)"),
    ("""
     nodes:
       - name: a
         publishers:
           - topic: /x
             payload: 8
             rate: 0
     """, "g.yaml:6: node 'a', publisher of '/x': rate: '0' is not a number from 0.001"),
    ("""
     nodes:
       - name: a
         publishers: [{topic: /x, rate: max, period: 1ms, payload: 8}]
     """, "g.yaml:3: node 'a', publisher of '/x': give one of rate (Hz) or period (a duration); "
          "rate: max for as fast as the middleware accepts"),
    ("""
     nodes:
       - name: a
         publishers: [{topic: /x, period: 0s, payload: 8}]
     """, "g.yaml:3: node 'a', publisher of '/x': period must be more than 0 (for a "
          "saturating publisher: rate: max)"),
    ("""
     nodes:
       - name: a
         servers: [{service: /s}]
       - name: b
         clients:
           - {service: /s, rate: max, size: 8}
     """, "g.yaml:6: node 'b', client of '/s': rate max: only a publisher saturates"),
    ("""
     nodes:
       - name: a
         publishers: [{topic: /x, rate: max, payload: 8}]
       - name: b
         publishers: [{topic: /x, rate: 100, payload: 8}]
       - name: c
         subscribers: [{topic: /x}]
     """, "topic '/x' is published with different sizes or periods (nodes a, b)"),
])
def test_a_bad_rate_names_file_line_node_and_field(body: str, expected: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_graph(textwrap.dedent(body).strip() + "\n", "g.yaml")
    assert expected in str(caught.value)


def test_the_agent_gets_period_0_from_the_start_and_late_by_the_absolute_limits(
        tmp_path: Path) -> None:
    graph = parse_graph(LOADED, "g.yaml")
    where = addresses(graph, "udp", None, tmp_path, 0x123456)
    specs = {s["name"]: s for s in node_specs(graph, where, 0, 1_000_000_000, 500_000_000)}
    (load,) = specs["loader"]["publishers"]
    assert (load["period_ns"], load["phase_ns"], load["payload_bytes"]) == (0, 0, 1 << 20)
    (sink,) = specs["sink"]["subscriptions"]
    # no period: iRobot's rule keeps its absolute limits (5 ms late, 50 ms too late)
    assert (sink["period_ns"], sink["late_ns"], sink["too_late_ns"]) == (0, 5_000_000,
                                                                          50_000_000)
    ping = specs["ponger"]["subscriptions"][0]
    assert (ping["period_ns"], ping["late_ns"]) == (10_000_000, 2_000_000)
    assert linger_ns(graph) == 500_000_000  # the paced topics' (at least 0.5 s)


def test_rate_scale_leaves_a_saturating_publisher_as_fast_as_accepted() -> None:
    scaled = scale(parse_graph(LOADED, "g.yaml"), rate_scale=4)
    assert scaled.node("loader").publishers[0].period_ns == 0
    assert scaled.node("pinger").publishers[0].period_ns == 2_500_000


def test_the_built_in_under_load_graph_pings_beside_a_saturating_stream() -> None:
    graph = load_graph("under-load")
    assert [n.name for n in graph.nodes] == ["ping_pub", "ping_sub", "load_pub", "load_sub"]
    assert graph.period_ns("/ping") == 10_000_000 and graph.payload_bytes("/ping") == 64
    assert graph.saturating("/load") and graph.payload_bytes("/load") == 1 << 20
    # the saturating publisher is alone in its node: it takes a CPU, not another topic's turn
    (loader,) = [n for n in graph.nodes if any(p.saturating for p in n.publishers)]
    assert len(loader.publishers) == 1 and not loader.subscribers
    ping = alone(graph, "/ping")
    assert [n.name for n in ping.nodes] == ["ping_pub", "ping_sub"]


def _cfg(*given: str, reliability: str = "reliable") -> PointConfig:
    return PointConfig(transport="cyclonedds", mode="graph", rate=0, payload="0",
                       payload_bytes=0, duration_ns=2_000_000_000, count=None, warmup_ns=0,
                       peer_timeout_ns=1, reliability=reliability, qos_given=given)


DDS = {"history": ["keep-last", "keep-all"], "reliability": ["reliable", "best-effort"]}


def _histories(graph: Any) -> dict[tuple[str, str], str | None]:
    return {**{(n.name, p.topic): p.qos.history for n in graph.nodes for p in n.publishers},
            **{(n.name, s.topic): s.qos.history for n in graph.nodes for s in n.subscribers}}


def test_a_reliable_saturating_topic_keeps_all_unless_told_otherwise() -> None:
    graph = parse_graph(LOADED, "g.yaml")
    held = _histories(flow_control(graph, _cfg(), DDS))
    # the load's writer and its readers block rather than overwrite; the rest keeps the run's
    assert held[("loader", "/load")] == held[("sink", "/load")] == "keep-all"
    assert held[("pinger", "/ping")] is None and held[("ponger", "/ping")] is None
    assert held[("ponger", "/digest")] is None  # a stage's output: paced by what arrives
    # --history, --reliability best-effort, or a transport without keep-all: as they say
    for cfg, supported in ((_cfg("history"), DDS),
                           (_cfg("reliability", reliability="best-effort"), DDS),
                           (_cfg(), {"history": ["keep-last"]}), (_cfg(), {})):
        assert flow_control(graph, cfg, supported) == graph
    # an entity's own QoS wins
    own = parse_graph(LOADED.replace("rate: max, payload: 1MiB", "rate: max, payload: 1MiB, "
                                     "qos: {history: 'keep-last:50'}"), "g.yaml")
    held = _histories(flow_control(own, _cfg(), DDS))
    assert held[("loader", "/load")] == "keep-last:50" and held[("sink", "/load")] == "keep-all"
    best = parse_graph(LOADED.replace("rate: max, payload: 1MiB", "rate: max, payload: 1MiB, "
                                      "qos: {reliability: best-effort}"), "g.yaml")
    assert _histories(flow_control(best, _cfg(), DDS))[("loader", "/load")] is None


def _edge_report(topic: str, tid: int, source: int, received: int, payload: int,
                 p50: int) -> dict[str, Any]:
    stats = {"count": received, "p50_ns": p50, "p99_ns": 2 * p50, "max_ns": 3 * p50}
    return {"topic": topic, "id": tid, "source": source, "late": 0, "too_late": 0,
            "late_ns": 1, "too_late_ns": 2, "offered_per_s": 0.0 if tid else 100.0,
            "measurement": {
                "accounting": {"received": received, "corrupted": 0, "duplicated": 0,
                               "reordered": 0},
                "service": stats, "response": stats, "jitter_rfc3550_ns": 1.0,
                "payload_bytes": payload,
                "throughput": {"duration_s": 2.0,
                               "payload_bytes_per_s": received * payload / 2.0}}}


def _report(publishers: list[tuple[str, int]], edges: list[dict[str, Any]]) -> dict[str, Any]:
    return {"status": "complete", "discovery_ns": 1, "publishers": [
        {"topic": t, "sent": n, "max_send_lag_ns": 0, "send_errors": 0} for t, n in publishers],
        "subscriptions": [{"topic": e["topic"], "edges": [e]} for e in edges],
        "process": {"wall_s": 1.0, "cpu_user_s": 0.5, "cpu_sys_s": 0.1, "max_rss_kib": 1024}}


def test_a_saturating_edge_reports_delivered_msgs_and_bytes_per_second() -> None:
    graph = load_graph("under-load")
    specs = [{"name": n.name, "index": i} for i, n in enumerate(graph.nodes)]
    reports = {
        "ping_pub": _report([("/ping", 200)], []),
        "ping_sub": _report([], [_edge_report("/ping", 0, 0, 200, 64, 80_000)]),
        "load_pub": _report([("/load", 5000)], []),
        "load_sub": _report([], [_edge_report("/load", 1, 2, 4990, 1 << 20, 900_000)]),
    }
    cfg = PointConfig(transport="tcp", mode="graph", rate=0, payload="0", payload_bytes=0,
                      duration_ns=2_000_000_000, count=None, warmup_ns=0, peer_timeout_ns=1)
    result = merge(graph, cfg, specs, reports, {}, None, run_id="r", started=_now(),
                   ready_s=1.0, stop_s=0.1, total_s=4.0, daemons=[])
    edges = {e["topic"]: e for e in result["edges"]}
    load, ping = edges["/load"], edges["/ping"]
    assert load["saturating"] is True and "saturating" not in ping
    assert load["period_ns"] is None and load["offered_per_s"] is None
    assert load["achieved_per_s"] == 4990 / 2.0 and load["lost"] == 10
    assert load["payload_bytes_per_s"] == 4990 * (1 << 20) / 2.0
    assert ping["offered_per_s"] == 100.0 and ping["payload_bytes_per_s"] == 200 * 64 / 2.0
    alone_result = {**result, "run_id": "a", "edges": [ping], "chains": []}
    result["baseline"] = interference(alone_result, result, "/ping")
    text = render(result)
    assert "/load load_pub -> load_sub" in text and "2495/max Hz 2616 MB/s" in text
    assert ("under load: /load load_pub -> load_sub delivered 2495 msgs/s, 2616 MB/s "
            "(sent 5000, lost 10)") in text
    assert "/ping ping_pub -> ping_sub: p99 160 µs alone, 160 µs in the graph" in text
    assert (figure(41312.7), figure(952.46), figure(2.5)) == ("41313", "952.5", "2.5")


def _now() -> Any:
    from datetime import datetime, timezone
    return datetime(2026, 11, 26, tzinfo=timezone.utc)
