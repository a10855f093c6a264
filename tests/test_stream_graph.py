"""plan/stream_graph.py: each stream run kind is the graph docs/architecture.md §2.2 says — its
nodes (named as today's roles), their publishers and subscriptions, its topics and chains — and
its names are the ones an upgraded v2 result of the same kind gives (the golden results)."""

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from mwperf.bags import replay_point
from mwperf.config import PointConfig, build_point
from mwperf.graph.model import Graph
from mwperf.plan.stream_graph import stream_graph
from mwperf.result.upgrade import upgrade

GOLDEN = Path(__file__).parent / "vectors" / "results"
BAG = str(Path(__file__).parent / "fixtures" / "bags" / "small.bag")


class Catalogue:
    def transports(self) -> list[str]:
        return ["udp", "tcp", "uds", "ros2"]

    def payloads(self) -> dict[str, int]:
        return {"Array1k": 1024, "Array32": 32}


def point(**options: Any) -> PointConfig:
    return build_point({"transport": "udp", **options}, Catalogue)


def shape(graph: Graph) -> dict[str, Any]:
    """Who publishes and who subscribes what, and the chains: the facts to compare."""
    return {n.name: {"pub": [p.topic for p in n.publishers],
                     "sub": [(s.topic, s.publish) for s in n.subscribers],
                     "serves": [s.service for s in n.servers],
                     "calls": [c.service for c in n.clients]} for n in graph.nodes} | {
        "chains": [(c.name, c.topics) for c in graph.chains]}


def test_a_round_trip_is_a_ping_and_an_echoing_pong_with_one_chain() -> None:
    graph = stream_graph(point(rate="200", payload="Array1k", busy_loop="1ms"))
    assert shape(graph) == {
        "ping": {"pub": ["ping"], "sub": [("pong", None)], "serves": [], "calls": []},
        "pong": {"pub": [], "sub": [("ping", "pong")], "serves": [], "calls": []},
        "chains": [("rt", ("ping", "pong"))]}
    (publisher,) = graph.node("ping").publishers
    assert (publisher.period_ns, publisher.payload_bytes) == (5_000_000, 1024)
    assert not publisher.closed_loop and not publisher.saturating
    assert graph.node("pong").subscribers[0].busy_loop_ns == 1_000_000
    assert graph.source == "stream:roundtrip" and graph.hosts == ()


def test_a_round_trip_at_rate_0_is_a_closed_loop_not_a_saturating_stream() -> None:
    (publisher,) = stream_graph(point(rate="0")).node("ping").publishers
    assert publisher.closed_loop and publisher.period_ns == 0 and not publisher.saturating


def test_throughput_is_a_saturating_publisher_and_a_sub() -> None:
    graph = stream_graph(point(mode="throughput", rate="0"))
    assert shape(graph) == {
        "pub": {"pub": ["t"], "sub": [], "serves": [], "calls": []},
        "sub": {"pub": [], "sub": [("t", None)], "serves": [], "calls": []}, "chains": []}
    assert graph.node("pub").publishers[0].saturating


def test_one_way_to_three_subscribers_names_them_as_the_runner_does() -> None:
    graph = stream_graph(point(mode="oneway", subscribers="3", rate="50"))
    assert [n.name for n in graph.nodes] == ["pub", "sub.0", "sub.1", "sub.2"]
    assert all([s.topic for s in n.subscribers] == ["t"] for n in graph.nodes[1:])
    assert graph.node("pub").publishers[0].period_ns == 20_000_000


def test_several_topics_are_a_chain_each_under_their_names() -> None:
    graph = stream_graph(point(topics="3", executor="multi"))
    names = [f"topic {i}" for i in range(3)]
    assert [c.name for c in graph.chains] == names
    assert [p.topic for p in graph.node("ping").publishers] == [f"{n}:ping" for n in names]
    assert [(s.topic, s.publish) for s in graph.node("pong").subscribers] == [
        (f"{n}:ping", f"{n}:pong") for n in names]
    assert graph.node("pong").executor == "multi"


def test_a_service_is_a_server_and_a_client_with_a_caller_per_client() -> None:
    graph = stream_graph(point(mode="service", clients="2", in_flight="3",
                               server_work="2ms", rate="100"))
    assert shape(graph)["server"]["serves"] == ["s"]
    callers = graph.node("client").clients
    assert [(c.service, c.in_flight, c.period_ns) for c in callers] == [("s", 3, 10_000_000)] * 2
    assert graph.node("server").servers[0].work_ns == 2_000_000


def test_the_qos_given_and_only_that_is_the_graphs() -> None:
    assert stream_graph(point()).node("ping").publishers[0].qos.history is None
    qos = stream_graph(point(depth="1000", reliability="best-effort")).node("pong").subscribers[0].qos
    assert (qos.reliability, qos.history, qos.durability) == ("best-effort", "keep-last:1000", None)


def test_a_link_places_the_sender_and_the_receiver_on_their_hosts() -> None:
    graph = stream_graph(point(link="wifi-80211n"))
    assert [(n.name, n.host) for n in graph.nodes] == [("ping", "a"), ("pong", "b")]
    assert graph.hosts == ("a", "b")


def test_a_foreign_echo_and_a_users_program_are_the_pong() -> None:
    assert stream_graph(point(transport="ros2", pong="relay")).node("pong").client == "relay"
    pong = stream_graph(point(transport="ros2", pong_cmd="python3 echo.py {in} {out}")).node("pong")
    assert pong.command == ("python3", "echo.py", "{in}", "{out}")


def test_a_replay_publishes_each_recorded_topic_from_its_trace() -> None:
    with tempfile.TemporaryDirectory() as folder:
        cfg = replay_point.build({"transport": "udp", "replay": BAG},
                                 replay_point.written_into(Path(folder)),
                                 lambda o: build_point(o, Catalogue))
        graph = stream_graph(cfg)
        traces = [p.trace for p in graph.node("ping").publishers]
        assert traces == [str(Path(cfg.replay_trace or "") / f"topic-{i}.trace") for i in (0, 1)]
        assert all(Path(t).is_file() for t in traces if t)
    assert [c.name for c in graph.chains] == ["/camera/image_raw", "/scan"]


def test_a_graph_point_is_refused() -> None:
    with pytest.raises(ValueError, match="graph"):
        stream_graph(point(graph="sierra_nevada"))


@pytest.mark.parametrize("name", ["roundtrip", "topics", "replay", "throughput",
                                  "oneway-3-subscribers", "service"])
def test_the_names_are_an_upgraded_results(name: str) -> None:
    """The golden result's own config rebuilt as a graph: its chains, topics, and nodes are the
    upgraded result's chains, edge topics and nodes (so old and new results compare)."""
    old = json.loads((GOLDEN / f"{name}.json").read_text())
    new = upgrade(old)
    config = old["config"]
    options = {"mode": config["mode"], "rate": str(config["rate"]),
               "topics": str(config.get("topics", 1)),
               "subscribers": str(config.get("subscribers", 1))}
    if "service" in config:
        options["clients"] = str(config["service"]["clients"])
    if "replay" in config:
        options["topics"] = "1"
        with tempfile.TemporaryDirectory() as folder:
            graph = stream_graph(replay_point.build(
                {"transport": "udp", "replay": BAG, "mode": config["mode"]},
                replay_point.written_into(Path(folder)),
                lambda o: build_point(o, Catalogue)))
    else:
        graph = stream_graph(point(**options))
    assert sorted(n.name for n in graph.nodes) == sorted(n["name"] for n in new["nodes"])
    assert [c.name for c in graph.chains] == [c["name"] for c in new["chains"]]
    edges = {e["topic"] for e in new["edges"]}
    assert edges <= set(graph.topics()), (edges, graph.topics())
    assert {(c["client"], c["server"]) for c in new["calls"]} <= {
        (n.name, m.name) for n in graph.nodes for m in graph.nodes if n.clients and m.servers}
