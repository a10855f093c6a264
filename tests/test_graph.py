"""Graphs (issue 24): the built-in graphs against their sources' facts, the graph file's
errors (FILE:LINE, the node and the topic), iRobot topologies read as they are, and
``mwperf graphs``."""

import json
import textwrap
from pathlib import Path

import pytest

from conftest import run_mwperf
from mwperf.errors import UsageError
from mwperf.graph.builtin import builtin_names, load_graph
from mwperf.graph.check import check_hosts, check_qos, check_sizes
from mwperf.graph.irobot import parse_irobot
from mwperf.graph.parse import parse_graph
from mwperf.graph.plan import FIRST_PORT, LISTEN_PORTS, addresses, node_specs, serving_nodes
from mwperf.graph.run import RUSTDDS_LOOPBACK_PARTICIPANTS, rustdds_participants


def graph_text(body: str) -> str:
    return textwrap.dedent(body).strip() + "\n"


# iRobot's topologies: nodes, topics, subscription edges as counted from its JSON files
@pytest.mark.parametrize(("name", "nodes", "topics", "edges"), [
    ("sierra_nevada", 10, 13, 17), ("mont_blanc", 20, 23, 35), ("cedar", 9, 13, 19),
    ("white_mountain", 20, 23, 35)])
def test_irobot_topologies_have_their_published_shape(name: str, nodes: int, topics: int,
                                                      edges: int) -> None:
    graph = load_graph(name)
    assert (len(graph.nodes), len(graph.topics()), len(graph.edges())) == (nodes, topics, edges)


def test_irobot_sizes_and_periods_are_resolved_as_its_tool_does() -> None:
    mont_blanc = load_graph("mont_blanc")
    assert mont_blanc.payload_bytes("columbia") == 256000  # stamped250kb
    assert mont_blanc.payload_bytes("amazon") == 36  # stamped9_float32: float32[9]
    assert mont_blanc.payload_bytes("tagus") == 250000  # stamped_vector, msg_size
    assert mont_blanc.period_ns("chenab") == 25_000_000
    white = load_graph("white_mountain")
    assert white.payload_bytes("columbia") == 614400
    assert white.period_ns("columbia") == 66_666_000  # freq_hz 15, whole microseconds
    assert load_graph("cedar").period_ns("danube") == 15_625_000  # 64 Hz


def test_built_in_graphs_all_load_and_the_listing_names_them() -> None:
    names = builtin_names()
    assert {"mobile-robot", "autoware-reference", "host-scaling", "mont_blanc",
            "sierra_nevada"} <= set(names)
    for name in names:
        assert load_graph(name).nodes
    done = run_mwperf("graphs")
    assert done.returncode == 0, done.stderr
    assert all(name in done.stdout for name in names)
    shown = run_mwperf("graphs", "mobile-robot", "--json")
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    assert doc["chain_topics"] == {"scan_to_wheels": ["/scan", "/obstacles", "/path",
                                                      "/wheel_cmd"]}
    imu = next(t for t in doc["topics"] if t["topic"] == "/imu")
    assert (imu["period_ns"], imu["payload_bytes"]) == (1_000_000, 256)


def test_mobile_robot_and_autoware_reference_carry_their_facts() -> None:
    robot = load_graph("mobile-robot")
    assert robot.payload_bytes("/camera/image_raw") == 921_600
    assert robot.period_ns("/camera/image_raw") == round(1e9 / 30)
    assert robot.period_ns("/wheel_cmd") == 100_000_000  # a stage: its origin's (the lidar's)
    autoware = load_graph("autoware-reference")
    assert len(autoware.nodes) == 24
    assert {autoware.payload_bytes(t) for t in autoware.topics()} == {4096}
    assert autoware.period_ns("PointCloudMap") == 120_000_000
    hot = next(c for c in autoware.chains if c.name == "hot_path")
    assert hot.topics[0] == "FrontLidarDriver" and hot.topics[-1] == "ObjectCollisionEstimator"


def test_copies_make_numbered_nodes_on_the_same_topics() -> None:
    graph = load_graph("host-scaling")
    senders = [n.name for n in graph.nodes if n.copy_of == "sender"]
    assert senders == ["sender_1", "sender_2", "sender_3", "sender_4"]
    assert sorted(graph.publishers_of("/ping")) == senders
    assert len([e for e in graph.edges() if e.topic == "/pong"]) == 4


@pytest.mark.parametrize(("body", "expected"), [
    ("""
     nodes:
       - name: a
         subscribers: [{topic: /nobody}]
     """, "node 'a' subscribes to '/nobody', which no node publishes"),
    ("""
     nodes:
       - name: a
         publishers: [{topic: /x, rate: 10, payload: 8}]
         subscribers: [{topic: /x, publish: /y}, {topic: /y, publish: /z}]
       - name: b
         subscribers: [{topic: /z, publish: /y}]
     """, "chain stages form a cycle: /y -> /z -> /y"),
    ("""
     nodes:
       - name: a
         publishers: [{topic: /x, rate: 10, payload: 8}]
       - name: b
         subscribers: [{topic: /x}]
     chains:
       c: [/x, /missing]
     """, "chain 'c' goes through topic '/missing', which is not in the graph"),
    ("""
     nodes:
       - name: a
         publishers: [{topic: /x, rate: 10, payload: 8}, {topic: /y, rate: 10, payload: 8}]
       - name: b
         subscribers: [{topic: /x}, {topic: /y}]
     chains:
       c: [/x, /y]
     """, "chain 'c': no node subscribes to '/x' and publishes '/y'"),
    ("""
     nodes:
       - name: a
         publishers: [{topic: /x, rate: 10, payload: 8}]
       - name: a
         subscribers: [{topic: /x}]
     """, "node 'a' is defined twice"),
    ("""
     nodes:
       - name: a
         publishers: [{topic: /x, rate: 10, period: 100ms, payload: 8}]
     """, "graph.yaml:3: node 'a', publisher of '/x': give one of rate (Hz) or period"),
    ("""
     nodes:
       - name: a
         executor: fast
         publishers: [{topic: /x, rate: 10, payload: 8}]
     """, "graph.yaml:3: node 'a': executor 'fast'; allowed: single, multi"),
    ("""
     nodes:
       - name: a
         publishers: [{topic: /x, rate: 10, payload: lots}]
     """, "graph.yaml:3: node 'a', publisher of '/x': payload: 'lots' is not a size"),
    ("""
     nodes:
       - name: a
         colour: red
         publishers: [{topic: /x, rate: 10, payload: 8}]
     """, "graph.yaml:3: node: unknown key 'colour'"),
    ("""
     nodes:
       - name: a
         publishers: [{topic: /x, rate: 10, payload: 8}]
       - name: b
         publishers: [{topic: /x, rate: 20, payload: 8}]
     """, "topic '/x' is published with different sizes or periods (nodes a, b)"),
    ("""
     nodes:
       - name: a
         publishers: [{topic: /x, rate: 10, payload: 8}]
         subscribers: [{topic: /x, publish: /y}, {topic: /x, publish: /z}]
     """, "node 'a' subscribes to '/x' twice"),
    ("""
     nodes:
       - name: a/b
         publishers: [{topic: /x, rate: 10, payload: 8}]
       - name: a_b
         subscribers: [{topic: /x}]
     """, "nodes 'a/b' and 'a_b' differ only in '/' and '_'"),
    ("""
     nodes:
       - name: a
         cpu_quota: fast
         publishers: [{topic: /x, rate: 10, payload: 8}]
     """, "graph.yaml:3: node 'a': cpu_quota: cannot parse"),
])
def test_a_graph_that_cannot_run_is_a_usage_error_naming_node_and_topic(body: str,
                                                                        expected: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_graph(graph_text(body), "graph.yaml")
    assert expected in str(caught.value)


def test_hosts_and_sizes_are_checked_against_the_run() -> None:
    robot = load_graph("mobile-robot")
    check_hosts(robot, ("a", "b"), "--link")
    with pytest.raises(UsageError, match="node 'imu_driver' is on host 'a', which --host does "
                                         "not have; hosts: robot"):
        check_hosts(robot, ("robot",), "--host")
    check_sizes(robot, "udp", 1_000_000)
    with pytest.raises(UsageError, match="node 'lidar_driver' publishes '/scan' with 300000 B "
                                         "payloads; --transport udp carries at most 65000 B "
                                         "after mwperf's 56-byte header"):
        check_sizes(robot, "udp", 65000)


def test_an_irobot_file_runs_as_it_is(tmp_path: Path) -> None:
    topology = {"nodes": [
        {"node_name": "talker", "number": 2, "executor_id": 3, "publishers": [
            {"topic_name": "chatter", "msg_type": "stamped_vector", "msg_size": 300,
             "freq_hz": 3, "qos_reliability": "best_effort", "qos_history": "keep_last",
             "qos_depth": 5}]},
        {"node_name": "listener", "subscribers": [
            {"topic_name": "chatter", "msg_type": "stamped_vector"}]}]}
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(topology))
    graph = load_graph(str(path))
    assert [n.name for n in graph.nodes] == ["talker_1", "talker_2", "listener"]
    pub = graph.nodes[0].publishers[0]
    assert (pub.period_ns, pub.payload_bytes) == (333_333_000, 300)
    assert (pub.qos.reliability, pub.qos.history) == ("best-effort", "keep-last:5")
    assert graph.nodes[0].group == "3"
    assert len(graph.edges()) == 2  # both copies publish chatter to the listener


@pytest.mark.parametrize(("node", "expected"), [
    ({"node_name": "x", "publishers": [{"topic_name": "t", "msg_type": "stamped42",
                                        "period_ms": 10}]},
     "node 'x', publisher of 't': msg_type 'stamped42' is not one of"),
    ({"node_name": "x", "publishers": [{"topic_name": "t", "msg_type": "stamped10b"}]},
     "needs period_ms or freq_hz"),
    ({"node_name": "x", "clients": [{"service_name": "s"}]},
     "node 'x', client of 's': needs period_ms or freq_hz"),
    ({"node_name": "x", "clients": [{"service_name": "s", "period_ms": 10}]},
     "node 'x', client of 's': needs a srv_type"),
    ({"node_name": "x", "servers": [{"srv_type": "stamped10b"}]},
     "node 'x': a client or server without service_name"),
])
def test_a_bad_irobot_file_names_node_and_field(node: dict, expected: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_irobot(json.dumps({"nodes": [node]}), "t.json", "t")
    assert str(caught.value).startswith("t.json: ") and expected in str(caught.value)


def test_an_unknown_graph_is_a_usage_error() -> None:
    done = run_mwperf("graphs", "no-such-graph")
    assert done.returncode == 2
    assert "'no-such-graph' is neither a file nor a built-in graph; built-in:" in done.stderr


def test_a_topic_or_a_chain_alone_keeps_only_what_carries_it() -> None:
    from mwperf.graph.subgraph import alone, without
    robot = load_graph("mobile-robot")
    imu = alone(robot, "/imu")
    assert [n.name for n in imu.nodes] == ["imu_driver", "state_estimator"]
    assert [s.topic for s in imu.node("state_estimator").subscribers] == ["/imu"]
    chain = alone(robot, "chain:scan_to_wheels")
    assert [n.name for n in chain.nodes] == ["lidar_driver", "perception", "planning", "control",
                                             "motor_driver"]
    assert [s.topic for s in chain.node("control").subscribers] == ["/path"]  # not /cmd_vel
    with pytest.raises(UsageError, match="a chain stage publishes it"):
        alone(robot, "/obstacles")
    with pytest.raises(UsageError, match="has no chain 'nope'; chains: scan_to_wheels"):
        alone(robot, "chain:nope")
    no_camera = without(robot, ("camera_driver",))
    assert "image_processing" not in [n.name for n in no_camera.nodes]  # nothing left to receive
    assert "/camera/image_raw" not in no_camera.topics()
    assert [c.name for c in no_camera.chains] == ["scan_to_wheels"]
    no_lidar = without(robot, ("lidar_driver",))
    assert no_lidar.chains == () and "perception" not in [n.name for n in no_lidar.nodes]
    with pytest.raises(UsageError, match="--without ghost: no such node"):
        without(robot, ("ghost",))


def test_the_graph_page_draws_nodes_in_columns_and_colours_edges_by_their_p99() -> None:
    from mwperf.graph import drawing, page

    def stats(p50: int, p99: int) -> dict:
        return {"p50_ns": p50, "p99_ns": p99, "max_ns": p99, "count": 10}
    edge = {"period_ns": 10_000_000, "received": 10, "lost": 0, "late": 0, "too_late": 0}
    result = {
        "graph": {"name": "g<1>", "nodes": 3, "topics": 3, "edges": 3}, "status": "complete",
        "status_reason": None, "run_id": "r", "config": {"transport": "udp"},
        "nodes": [{"name": n, "status": "complete", "cpu_percent": 1.0} for n in "abc"],
        "edges": [{**edge, "topic": "/x", "from": "a", "to": "b", "latency": stats(1, 100_000)},
                  {**edge, "topic": "/y", "from": "b", "to": "c", "latency": stats(1, 5_000_000)},
                  {**edge, "topic": "/z", "from": "c", "to": "a", "lost": 3,
                   "latency": stats(1, 1_000)}],
        "chains": [{"name": "ch", "topics": ["/x", "/y"], "end_to_end": stats(3_000, 4_000),
                    "hops": [{"topic": "/x", "stage_p50_ns": None, "latency_p50_ns": 1_000},
                             {"topic": "/y", "stage_p50_ns": 3_000, "latency_p50_ns": 2_000}]}],
    }
    nodes, edges = drawing.marks(result)
    assert drawing.columns([n.name for n in nodes], edges) == {"a": 0, "b": 1, "c": 2}  # the
    # cycle c -> a is cut
    assert [drawing.colour(e) for e in edges] == ["#2e7d32", "#f9a825", "#c62828"]
    text = page.render(result)
    assert text.count("<rect") == 3 + 3  # three nodes, three parts of the chain's bar
    assert "g&lt;1&gt;" in text and "<script" not in text
    # the bar is to scale: 1 + 3 + 2 us over 600 px
    assert 'width="100.0"' in text and 'width="300.0"' in text and 'width="200.0"' in text


def test_a_node_publishing_one_topic_twice_is_refused() -> None:
    text = graph_text("""
        nodes:
          - name: a
            publishers: [{topic: /x, rate: 10, payload: 8}, {topic: /y, rate: 10, payload: 8}]
          - name: b
            subscribers: [{topic: /x, publish: /z}, {topic: /y, publish: /z}]
          - name: c
            subscribers: [{topic: /z}]
        """)
    with pytest.raises(UsageError, match="node 'b' publishes '/z' twice"):
        parse_graph(text, "graph.yaml")


def test_leaving_out_every_publisher_is_a_usage_error() -> None:
    from mwperf.graph.subgraph import without
    with pytest.raises(UsageError, match="nothing of graph 'host-scaling' is left to measure"):
        without(load_graph("host-scaling"), ("sender_1", "sender_2", "sender_3", "sender_4"))


@pytest.mark.parametrize(("field", "expected"), [
    ({"freq_hz": 1e7}, "at most 100 kHz"), ({"freq_hz": float("nan")}, "must be a number > 0"),
    ({"period_ms": 0}, "must be a number > 0")])
def test_an_irobot_period_out_of_range_is_refused(field: dict, expected: str) -> None:
    node = {"node_name": "x", "publishers": [{"topic_name": "t", "msg_type": "stamped10b",
                                              **field}]}
    with pytest.raises(UsageError, match=expected):
        parse_irobot(json.dumps({"nodes": [node]}), "t.json", "t")
    with pytest.raises(UsageError, match="number '5000' is not a whole number from 1 to 1000"):
        parse_irobot(json.dumps({"nodes": [{"node_name": "y", "number": 5000,
                                            "subscribers": [{"topic_name": "t"}]}]}), "t.json",
                     "t")


FAN_IN = graph_text("""
    name: fan-in
    nodes:
      - name: left
        publishers: [{topic: /raw, rate: 100, payload: 64}]
      - name: right
        host: b
        publishers: [{topic: /raw, rate: 100, payload: 64}, {topic: /unread, rate: 1, payload: 8}]
      - name: filter
        host: b
        subscribers: [{topic: /raw, publish: /clean}]
      - name: logger
        subscribers: [{topic: /raw}, {topic: /clean}]
    """)


class TwoHosts:
    """Where the emulated network puts each node (place.py's Place, as far as plan.py asks)."""

    def address_of(self, name: str) -> str:
        return {"right": "10.0.0.2", "filter": "10.0.0.2"}.get(name, "10.0.0.1")


TAG = 0xABCDEF


@pytest.mark.parametrize("transport", ["tcp", "zenoh"])
def test_a_connecting_transport_listens_per_subscription_and_publishers_connect_to_each(
        transport: str, tmp_path: Path) -> None:
    graph = parse_graph(FAN_IN, "g.yaml")
    where = addresses(graph, transport, "unused", tmp_path, TAG)
    raw = [where.listen[("filter", "/raw")], where.listen[("logger", "/raw")]]
    assert where.publish["/raw"] == raw and where.publish["/unread"] == []
    assert where.publish["/clean"] == [where.listen[("logger", "/clean")]]
    ports = [int(a.split("#")[0].rsplit(":", 1)[1]) for a in where.listen.values()]
    assert len(set(ports)) == 3 and all(LISTEN_PORTS[0] <= p < LISTEN_PORTS[1] for p in ports)
    if transport == "zenoh":  # peer mode: the subscription's session listens, keys per topic
        assert raw[0].startswith("tcp/127.0.0.1:") and raw[0].endswith("#gabcdeft0")
        assert where.listen[("logger", "/clean")].endswith("#gabcdeft2")
    else:
        assert raw[0].startswith("127.0.0.1:")
    # both publishers of /raw (left and right) connect to both subscriptions of it
    specs = {s["name"]: s for s in node_specs(graph, where, 0, 1, 1)}
    assert specs["left"]["publishers"][0]["addresses"] == raw
    assert specs["right"]["publishers"][0]["addresses"] == raw
    assert specs["filter"]["subscriptions"][0]["publish"]["addresses"] == \
        [where.listen[("logger", "/clean")]]
    placed = addresses(graph, transport, "unused", tmp_path, TAG, TwoHosts())
    prefix = "tcp/" if transport == "zenoh" else ""
    assert placed.listen[("filter", "/raw")].startswith(f"{prefix}10.0.0.2:{FIRST_PORT}")
    assert placed.listen[("logger", "/raw")].startswith(f"{prefix}10.0.0.1:{FIRST_PORT + 1}")


def test_zenoh_in_client_mode_meets_at_the_router_with_a_key_per_topic(tmp_path: Path) -> None:
    graph = parse_graph(FAN_IN, "g.yaml")
    where = addresses(graph, "zenoh", "tcp/127.0.0.1:7447", tmp_path, TAG, mode="client")
    assert where.listen[("filter", "/raw")] == where.listen[("logger", "/raw")] == \
        "tcp/127.0.0.1:7447#gabcdeft0"
    assert where.publish["/raw"] == ["tcp/127.0.0.1:7447#gabcdeft0"]
    assert where.publish["/unread"] == []  # nobody subscribes: published nowhere, counted


def test_foxglove_nodes_serve_what_they_publish_and_subscriptions_meet_every_server(
        tmp_path: Path) -> None:
    graph = parse_graph(FAN_IN, "g.yaml")
    assert serving_nodes(graph) == ["left", "right", "filter"]  # right's /unread: nobody reads
    servers = {"left": "127.0.0.1:1001", "right": "127.0.0.1:1002", "filter": "127.0.0.1:1003"}
    where = addresses(graph, "foxglove", None, tmp_path, TAG, servers=servers)
    assert where.listen[("logger", "/raw")] == "127.0.0.1:1001,127.0.0.1:1002/gabcdeft0"
    assert where.listen[("logger", "/clean")] == "127.0.0.1:1003/gabcdeft2"
    specs = {s["name"]: s for s in node_specs(graph, where, 0, 1, 1)}
    assert specs["left"]["publishers"][0]["addresses"] == ["127.0.0.1:1001/gabcdeft0"]
    assert [p["addresses"] for p in specs["right"]["publishers"]] == \
        [["127.0.0.1:1002/gabcdeft0"], []]
    assert specs["filter"]["subscriptions"][0]["publish"]["addresses"] == \
        ["127.0.0.1:1003/gabcdeft2"]
    with pytest.raises(UsageError, match="no server for node.s. filter"):
        addresses(graph, "foxglove", None, tmp_path, TAG, servers={"left": "h:1", "right": "h:2"})


def test_a_qos_the_transport_does_not_keep_is_refused_naming_node_and_topic() -> None:
    graph = parse_graph(graph_text("""
        name: latched
        nodes:
          - name: map_server
            publishers: [{topic: /map, rate: 1, payload: 64, qos: {durability: transient-local}}]
          - name: planner
            subscribers: [{topic: /map, qos: {history: keep-all}}]
        """), "g.yaml")
    with pytest.raises(UsageError) as caught:
        check_qos(graph, "zenoh", {"durability": ["volatile"], "history": ["keep-last"]})
    assert str(caught.value) == (
        "--graph latched --transport zenoh: node 'map_server' publishes '/map' with qos "
        "durability: transient-local; zenoh supports durability volatile: use one of those, or a "
        "transport that has it (mwperf transports)")
    with pytest.raises(UsageError, match="node 'planner' subscribes to '/map' with qos history: "
                                         "keep-all; zenoh supports history keep-last"):
        check_qos(graph, "zenoh", {"durability": ["volatile", "transient-local"],
                                   "history": ["keep-last"]})
    check_qos(graph, "tcp", {})  # QoS does not apply to a socket: nothing to refuse
def test_rustdds_on_loopback_is_limited_to_13_participants_one_per_node() -> None:
    # a node's endpoints share one participant: sierra_nevada's 30 endpoints are 10 participants
    assert rustdds_participants(load_graph("sierra_nevada")) == 10
    assert rustdds_participants(load_graph("mont_blanc")) == 20 > RUSTDDS_LOOPBACK_PARTICIPANTS
    # a node subscribing to what it publishes needs a second one (RustDDS does not deliver
    # within one participant)
    echo = parse_graph(textwrap.dedent("""
        name: echo
        nodes:
          - name: talker
            publishers: [{topic: /chat, rate: 10, payload: 64}]
            subscribers: [{topic: /chat}]
        """), "graph.yaml")
    assert rustdds_participants(echo) == 2
