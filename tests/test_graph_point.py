"""A graph as a point (graph/point.py): the scenario key and the flags, scale factors, CPU limits
per node, and what a sweep's summary keeps of a graph result."""

import json
from pathlib import Path
from typing import Any

import pytest

from mwperf.config import build_point
from mwperf.errors import UsageError
from mwperf.graph.builtin import load_graph
from mwperf.graph.cpu import node_limits
from mwperf.graph.digest import graph_lines, graph_row
from mwperf.graph.scale import scale
from mwperf.scenario.expand import expand
from mwperf.scenario.parse import parse_scenario


class Catalogue:
    def transports(self) -> list[str]:
        return ["udp", "uds", "cyclonedds"]

    def payloads(self) -> dict[str, int]:
        return {"Array1k": 1024}


def build(**options: Any) -> Any:
    return build_point({k: v for k, v in options.items()}, Catalogue)


def test_a_graph_point_carries_the_graph_as_it_runs() -> None:
    cfg = build(graph="sierra_nevada", transport="udp", duration="2s", copies="2",
                rate_scale="0.5", without="arequipa")
    point = cfg.graph
    assert point is not None and point.copies == 2 and point.rate_scale == 0.5
    names = {n.name for n in point.graph.nodes}
    assert "montreal_c1" in names and "montreal_c2" in names
    assert not any(n.startswith("arequipa") for n in names)
    assert len(point.graph.nodes) == 2 * 9
    montreal = point.graph.node("montreal_c1")
    assert {p.period_ns for p in montreal.publishers} == {20_000_000}  # 10 ms at half the rate
    assert cfg.to_dict()["graph"] == {
        "spec": "sierra_nevada", "name": point.graph.name, "nodes": 18, "copies": 2,
        "rate_scale": 0.5, "without": ["arequipa"], "baseline": None}


@pytest.mark.parametrize("options, expected", [
    ({"rate": "100"}, "--rate: not with --graph"),
    ({"payload": "Array1k"}, "--payload: not with --graph"),
    ({"copies": "0"}, "--copies: a whole number from 1 to 100"),
    ({"copies": "two"}, "--copies: a whole number"),
    ({"rate_scale": "-1"}, "--rate-scale: a positive factor"),
    ({"rate_scale": "nan"}, "--rate-scale: a positive factor"),
    ({"rate_scale": "2000"}, "faster than 100 kHz"),
    ({"rate_scale": "/nope=2"}, "--rate-scale /nope=...: graph 'sierra_nevada' has no publisher "
                                "of '/nope'; its published topics: "),
    ({"rate_scale": "=2"}, "--rate-scale: '=2' is not TOPIC=FACTOR"),
    ({"rate_scale": "/amazon=0"}, "--rate-scale: a positive factor"),
    ({"without": "nobody"}, "--without nobody: no such node"),
    ({"baseline": "/nope"}, "--baseline /nope: not a topic"),
    ({"cpu_quota": "lots"}, "--cpu-quota: cannot parse"),
    ({"cpu_quota": "nobody=50%"}, "--cpu-quota: no agent 'nobody'"),
    ({"cpu_quota": "50%", "rt_priority": "10"}, "--rt-priority: not with a CPU quota"),
])
def test_bad_graph_options_name_their_flag(options: dict[str, str], expected: str) -> None:
    with pytest.raises(UsageError) as caught:
        build(graph="sierra_nevada", **options)
    assert expected in str(caught.value)


@pytest.mark.parametrize("option", ["copies", "rate_scale", "baseline", "without"])
def test_graph_options_need_a_graph(option: str) -> None:
    with pytest.raises(UsageError) as caught:
        build(**{option: "2"})
    assert f"--{option.replace('_', '-')}: only with --graph" in str(caught.value)


def test_a_node_limit_of_its_own_and_the_runs_limits() -> None:
    graph = load_graph("sierra_nevada")
    limits = node_limits(graph, "30%,lyon=20%", "1", None)
    quotas = dict(limits.quota_pct)
    assert quotas["lyon"] == 20.0 and quotas["montreal"] == 30.0 and len(quotas) == 10
    assert limits.group_for("lyon") == ("lyon", 20.0)  # a node is an agent: a cgroup of its own
    assert limits.cpus_for("hamburg") == (1,)


def test_the_graph_files_limits_yield_to_the_runs_named_ones(tmp_path: Path) -> None:
    path = tmp_path / "g.yaml"
    path.write_text("nodes:\n"
                    "  - {name: p, cpu_quota: 40%, publishers: [{topic: /x, rate: 10, payload: 8}]}\n"
                    "  - {name: s, subscribers: [{topic: /x}]}\n")
    graph = load_graph(str(path))
    assert dict(node_limits(graph, None, None, None).quota_pct) == {"p": 40.0}
    assert dict(node_limits(graph, "10%", None, None).quota_pct) == {"p": 40.0, "s": 10.0}
    assert dict(node_limits(graph, "p=25%", None, None).quota_pct) == {"p": 25.0}


def test_a_host_limit_takes_the_hosts_nodes_into_one_cgroup() -> None:
    graph = load_graph("sierra_nevada")
    place = tuple((n.name, "a" if n.name == "lyon" else "b") for n in graph.nodes)
    limits = node_limits(graph, "a=50%", None, None, place)
    assert limits.group_for("lyon") == ("host-a", 50.0)
    assert limits.group_for("montreal") is None


def test_scale_keeps_the_graph_itself_at_one() -> None:
    graph = load_graph("mont_blanc")
    assert scale(graph) is graph
    doubled = scale(graph, rate_scale=2)
    before = {(n.name, p.topic): p.period_ns for n in graph.nodes for p in n.publishers}
    after = {(n.name, p.topic): p.period_ns for n in doubled.nodes for p in n.publishers}
    assert after == {k: round(v / 2) for k, v in before.items()}


def test_a_scenario_sweeps_a_graph_like_any_point() -> None:
    scenario = parse_scenario("graph: sierra_nevada\ntransport: [udp, uds]\ncopies: [1, 3]\n"
                              "duration: 1s\n", "s.yaml", "s")
    points = expand(scenario, ["udp", "uds"])
    assert [p.label() for p in points] == [
        "udp graph sierra_nevada copies=1", "udp graph sierra_nevada copies=3",
        "uds graph sierra_nevada copies=1", "uds graph sierra_nevada copies=3"]
    assert points[1].options == {"graph": "sierra_nevada", "transport": "udp", "copies": "3",
                                 "duration": "1s"}


FIXTURE = Path(__file__).parent / "fixtures" / "graph-result-sierra.json"


def test_a_graph_results_row_is_its_worst_edge_and_its_totals() -> None:
    result = json.loads(FIXTURE.read_text())
    row = graph_row(result, "points/x")
    measured = [e for e in result["edges"] if e["latency"]]
    worst = max(measured, key=lambda e: e["latency"]["p99_ns"] / e["period_ns"])
    assert (row.mode, row.payload, row.p99_ns) == ("graph", result["graph"]["name"],
                                                   worst["latency"]["p99_ns"])
    assert row.count == sum(e["received"] for e in result["edges"])
    sent = sum(e["sent"] for e in result["edges"])
    assert row.loss_pct == pytest.approx(100 * sum(e["lost"] for e in result["edges"]) / sent)
    assert row.cpu_pct == pytest.approx(sum(n["cpu_percent"] for n in result["nodes"]), abs=0.01)
    lines = graph_lines(result)
    assert len(lines) == len(result["chains"]) + 3
    assert lines[-3].startswith(f"edge {worst['topic']} {worst['from']} -> {worst['to']}: p99")


def test_the_clock_plan_serves_mwperfs_clock_and_probes_the_others() -> None:
    from mwperf.graph.clocks import clock_plan

    graph = load_graph("sierra_nevada")
    names = [n.name for n in graph.nodes]
    place = {n: ("b" if n in ("lyon", "hamburg") else "a") for n in names}
    plan = clock_plan(graph, place, {"b"}, False, lambda node: "10.0.0.1")
    assert plan.server == names[0] and plan.probed == {"lyon", "hamburg"}
    assert plan.args(names[0]) == ["--clock-serve", "0.0.0.0:47999"]
    assert plan.args("lyon") == ["--clock-ref", "10.0.0.1:47999"]
    assert clock_plan(graph, place, set(), False, lambda node: "10.0.0.1").probed == set()
    synced = clock_plan(graph, place, set(), True, lambda node: "10.0.0.1")
    assert synced.probed == {"lyon", "hamburg"}  # a self-check across the emulated hosts
    with pytest.raises(UsageError, match="leave one host on mwperf's clock"):
        clock_plan(graph, place, {"a", "b"}, False, lambda node: "10.0.0.1")


ROBOT_GRAPH = ("nodes:\n"
               "  - {name: lidar, host: b, publishers: [{topic: /x, rate: 10, payload: 8}]}\n"
               "  - {name: planner, subscribers: [{topic: /x}]}\n")


@pytest.mark.agent  # which transports cross hosts: the agent's profiles
@pytest.mark.parametrize("graph, options, expected", [
    (ROBOT_GRAPH.replace("host: b", "host: c"), {}, "node 'lidar' is on host 'c', which --host "
     "does not name; hosts: local, b"),
    (ROBOT_GRAPH, {"remote_place": "nobody=b"}, "--place: graph 'g.yaml' has no node 'nobody'"),
    (ROBOT_GRAPH, {"remote_place": "planner=c"}, "--place: 'planner=c': no host 'c'"),
    (ROBOT_GRAPH.replace("host: b", "host: local"), {}, "--host: no node of graph 'g.yaml' is on b"),
])
def test_nodes_on_real_hosts_are_placed_or_refused_by_name(tmp_path: Path, graph: str,
                                                           options: dict[str, str],
                                                           expected: str) -> None:
    path = tmp_path / "g.yaml"
    path.write_text(graph)
    with pytest.raises(UsageError) as caught:
        build(graph=str(path), transport="udp", host="b=ssh://root@10.0.0.1", **options)
    assert expected in str(caught.value)


@pytest.mark.agent
def test_nodes_on_a_real_host_and_here(tmp_path: Path) -> None:
    path = tmp_path / "g.yaml"
    path.write_text(ROBOT_GRAPH)
    cfg = build(graph=str(path), transport="udp", host="b=ssh://root@10.0.0.1",
                remote_place="planner=b", cpu_quota="b=50%")
    assert dict(cfg.remote.place) == {"lidar": "b", "planner": "b"}
    assert cfg.cpu.remote_host("lidar") == "b"  # its supervisor there applies the limit


@pytest.mark.parametrize("payload, expected", [
    ("{uniform: [1KiB, 2KiB]}", (1024, 2048, 1000)),
    ("{sizes: [64, 1500, 9000]}", (64, 9000, 3)),
])
def test_a_payload_may_vary_as_a_distribution_or_a_list(payload: str,
                                                        expected: tuple[int, int, int]) -> None:
    from mwperf.graph.parse import parse_graph

    graph = parse_graph("nodes:\n"
                        f"  - {{name: p, publishers: [{{topic: /x, rate: 10, payload: {payload}}}]}}\n"
                        "  - {name: s, subscribers: [{topic: /x}]}\n", "g.yaml")
    pub = graph.node("p").publishers[0]
    low, high, count = expected
    assert min(pub.payload_sizes) >= low and max(pub.payload_sizes) <= high
    assert len(pub.payload_sizes) == count and pub.payload_bytes == max(pub.payload_sizes)
    again = parse_graph("nodes:\n"
                        f"  - {{name: p, publishers: [{{topic: /x, rate: 10, payload: {payload}}}]}}\n"
                        "  - {name: s, subscribers: [{topic: /x}]}\n", "g.yaml")
    assert again.node("p").publishers[0].payload_sizes == pub.payload_sizes  # every run alike


@pytest.mark.parametrize("payload, expected", [
    ("{uniform: [2KiB, 1KiB]}", "payload: uniform takes [MIN, MAX] with MIN <= MAX"),
    ("{uniform: [1KiB]}", "payload: uniform takes [MIN, MAX]"),
    ("{sizes: []}", "payload: sizes is empty"),
    ("{sizes: [64], uniform: [1, 2]}", "payload: give one of a size"),
    ("{recording: example}", "payload: give one of a size"),
    ("{recording: /no/such.bag, topic: /scan}", "recording '/no/such.bag' does not exist"),
    ("{colour: red}", "colour"),
])
def test_a_bad_payload_names_the_publisher_and_the_form(payload: str, expected: str) -> None:
    from mwperf.graph.parse import parse_graph

    with pytest.raises(UsageError) as caught:
        parse_graph("nodes:\n"
                    f"  - {{name: p, publishers: [{{topic: /x, rate: 10, payload: {payload}}}]}}\n"
                    "  - {name: s, subscribers: [{topic: /x}]}\n", "g.yaml")
    assert "node 'p', publisher of '/x'" in str(caught.value) and expected in str(caught.value)


@pytest.mark.agent  # the example recording is written with the ROS 1 tools
def test_a_payload_from_a_recordings_topic_is_its_sizes_in_order() -> None:
    from mwperf.bags.info import inspect
    from mwperf.bags.example import example_bag
    from mwperf.graph.parse import parse_graph

    graph = parse_graph("nodes:\n"
                        "  - {name: p, publishers: [{topic: /x, rate: 10, payload: "
                        "{recording: example, topic: /scan}}]}\n"
                        "  - {name: s, subscribers: [{topic: /x}]}\n", "g.yaml")
    sizes = graph.node("p").publishers[0].payload_sizes
    info = inspect(example_bag(), ["/scan"]).topics[0]
    assert len(sizes) == info.count and sum(sizes) == info.bytes and max(sizes) == info.size_max


def test_one_topics_publishers_scaled_alone() -> None:
    cfg = build(graph="mobile-robot", transport="cyclonedds", duration="2s",
                rate_scale="/camera/image_raw=4")
    point = cfg.graph
    before = {(n.name, p.topic): p.period_ns for n in load_graph("mobile-robot").nodes
              for p in n.publishers}
    after = {(n.name, p.topic): p.period_ns for n in point.graph.nodes for p in n.publishers}
    assert after == {k: round(v / 4) if k[1] == "/camera/image_raw" else v
                     for k, v in before.items()}
    assert point.rate_scale == 1.0 and point.topic_scales == (("/camera/image_raw", 4.0),)
    assert cfg.to_dict()["graph"]["topic_scales"] == {"/camera/image_raw": 4.0}
