"""A probe document as a graph file (graph/from_probe.py, emit.py, outfile.py): the file loads
with parse.py and holds the probed nodes, rates, sizes and QoS, says where each came from, and is
written whole or not at all."""

import os
import re
from pathlib import Path

import pytest
from cli_inprocess import run_inprocess

from mwperf.errors import RunError, UsageError
from mwperf.graph.emit import graph_text
from mwperf.graph.from_probe import probe_traffic, qos, write_probe_graph
from mwperf.graph.model import Qos
from mwperf.graph.outfile import check_out, write_whole
from mwperf.graph.parse import parse_graph
from mwperf.probe.stats import size_quantiles

START = 1_700_000_000_000_000_000
RELIABLE = {"reliability": "reliable", "durability": "transient", "history": "keep-last",
            "depth": 10, "deadline_ns": None, "liveliness": "automatic", "lease_ns": None,
            "lifespan_ns": None, "ownership": "shared", "partitions": []}
BEST_EFFORT = RELIABLE | {"reliability": "best-effort", "durability": "volatile", "depth": 5}


def topic(name: str, count: int, rate: float | None, sizes: list[int], **more: object) -> dict:
    return {"topic": name, "msgtype": "std_msgs/msg/String", "count": count, "rate_hz": rate,
            "size_p50": sorted(sizes)[len(sizes) // 2] if sizes else 0,
            "size_max": max(sizes, default=0), "size_quantiles": size_quantiles(sizes)} | more


def ros2_document() -> dict:
    chatter = [12] * 100 + [20] * 400 + [1200] * 399
    return {"system": "ros2 domain 0 (interface lo)", "start_ns": START,
            "duration_ns": 30_000_000_000, "topics": [
                topic("/chatter", 899, 29.98, chatter,
                      publishers=[{"node": "/talker", "participant": "a" * 32,
                                   "endpoint": "b" * 32, "qos": RELIABLE}],
                      subscribers=[{"node": "/ns/listener", "participant": "c" * 32,
                                    "endpoint": "d" * 32, "qos": BEST_EFFORT}]),
                topic("DDSPerfRDataKS", 300, 10.0, [64] * 300, ros=False,
                      publishers=[{"node": None, "participant": "e" * 32, "endpoint": "f" * 32,
                                   "qos": BEST_EFFORT}], subscribers=[]),
                topic("/cmd", 200, 20.0, [48] * 200,
                      publishers=[{"node": "/a"}, {"node": "/b"}, {"node": "/a"}],
                      subscribers=[{"node": "/a"}]),
                topic("/silent", 0, None, [], subscribed=False, why_not="type not found",
                      publishers=[{"node": "/talker"}], subscribers=[]),
            ]}


def flat(text: str) -> str:
    """The file with wrapped comments joined into one line each."""
    return re.sub(r"\n\s*# (?!/)", " ", text)


def load(tmp_path: Path, document: dict) -> tuple[str, object]:
    path = tmp_path / "robot.yaml"
    write_probe_graph(document, path, command="mwperf probe --ros2 --write-graph robot.yaml")
    text = path.read_text()
    return text, parse_graph(text, str(path))


def test_a_ros2_probe_becomes_a_graph_with_its_nodes_rates_sizes_and_qos(tmp_path: Path) -> None:
    text, graph = load(tmp_path, ros2_document())
    names = [n.name for n in graph.nodes]
    assert names == ["talker", "ns/listener", "participant_1", "a", "b", "probe_listener"]
    talker = graph.node("talker").publishers[0]
    assert talker.topic == "/chatter" and talker.period_ns == round(1e9 / 29.98)
    # the 20 quantiles k/20 of 100 x 12, 400 x 20, 399 x 1200 (nearest rank)
    assert talker.payload_sizes == (12,) * 2 + (20,) * 9 + (1200,) * 9
    assert talker.payload_bytes == 1200
    # transient (no mwperf transport has it) as the nearest, transient-local
    assert talker.qos == Qos("reliable", "keep-last:10", "transient-local")
    listener = graph.node("ns/listener").subscribers[0]
    assert listener.qos == Qos("best-effort", "keep-last:5", "volatile")
    # a plain DDS writer without a ROS node: its participant, numbered, the GUID in a comment
    dds = graph.node("participant_1").publishers[0]
    assert (dds.topic, dds.payload_bytes, dds.payload_sizes) == ("DDSPerfRDataKS", 64, ())
    assert "e" * 32 in text and "a plain DDS topic" in flat(text)
    # two publishing nodes share the measured 20 Hz; /a's two writers are one publisher
    assert [p.period_ns for p in graph.node("a").publishers] == [100_000_000]
    assert [p.period_ns for p in graph.node("b").publishers] == [100_000_000]
    assert "2 publishing nodes, each at 1/2" in flat(text)
    # a topic without a known subscriber is received by probe_listener, so it is measured
    edges = {(e.topic, e.publisher, e.subscriber) for e in graph.edges()}
    assert edges == {("/chatter", "talker", "ns/listener"), ("/cmd", "a", "a"),
                     ("/cmd", "b", "a"), ("DDSPerfRDataKS", "participant_1", "probe_listener")}
    assert graph.node("probe_listener").executor == "multi"
    # /silent had no message: left out, with why
    assert "/silent" not in graph.topics()
    assert "#   /silent: no message in 30.0 s; not subscribed: type not found" in text


def test_the_file_says_where_each_figure_came_from(tmp_path: Path) -> None:
    text, graph = load(tmp_path, ros2_document())
    head = text.splitlines()[:4]
    assert head[1] == "#   mwperf probe --ros2 --write-graph robot.yaml"
    assert head[2] == "# system: ros2 domain 0 (interface lo); window: 30.0 s from 2023-11-14T22:13:20Z"
    said = flat(text)
    assert "# /chatter: rate 29.98 Hz measured over 30.0 s (899 messages); sizes: the 20 " \
           "quantiles k/20" in said
    assert "12 B to 1.172 KiB" in said and "every message 48 B" in said
    assert "ros_discovery_info" in said and "56-byte header" in said
    assert graph.name == "robot" and "ros2 domain 0" in graph.description


def test_zenoh_and_mqtt_probes_name_no_nodes_and_say_so(tmp_path: Path) -> None:
    document = {"system": "zenoh tcp/127.0.0.1:7447", "start_ns": START,
                "duration_ns": 10_000_000_000,
                "topics": [topic("robot/imu", 2000, 200.0, [256] * 2000),
                           topic("robot/scan", 1, None, [4000])]}
    text, graph = load(tmp_path, document)
    assert [n.name for n in graph.nodes] == ["robot/imu_publisher", "robot/scan_publisher",
                                             "probe_listener"]
    assert graph.node("robot/imu_publisher").publishers[0].period_ns == 5_000_000
    # one message in 10 s: one every 10 s
    assert graph.node("robot/scan_publisher").publishers[0].period_ns == 10_000_000_000
    assert "a zenoh probe sees samples, not nodes" in flat(text)
    assert "1 message in 10.0 s: rate = 1 / the window" in flat(text)
    assert {s.topic for s in graph.node("probe_listener").subscribers} == {"robot/imu",
                                                                           "robot/scan"}


def test_a_ros1_probe_names_publishers_and_subscribers(tmp_path: Path) -> None:
    document = {"system": "ros1 http://127.0.0.1:11311", "start_ns": START,
                "duration_ns": 5_000_000_000,
                "topics": [topic("/scan", 200, 40.0, [4000] * 200,
                                 publishers=[{"node": "/lidar"}],
                                 subscribers=[{"node": "/slam"}, {"node": "/rviz"}]),
                           topic("/odom", 250, 50.0, [700] * 250,
                                 publishers=[{"node": "/base"}], subscribers=[])]}
    text, graph = load(tmp_path, document)
    assert {(e.topic, e.publisher, e.subscriber) for e in graph.edges()} == {
        ("/scan", "lidar", "slam"), ("/scan", "lidar", "rviz"),
        ("/odom", "base", "probe_listener")}
    assert "getSystemState" in text


def test_a_subscription_no_data_flows_to_is_left_out_and_the_listener_matches(
        tmp_path: Path) -> None:
    document = ros2_document()
    document["topics"][1]["subscribers"] = [{"node": "/reliable_reader", "qos": RELIABLE}]
    text, graph = load(tmp_path, document)
    assert "reliable_reader" not in [n.name for n in graph.nodes]
    assert "no data flows to it: reliability: the reader asks for reliable, the writer offers " \
           "best-effort" in flat(text)
    # the stand-in reader takes what the best-effort writer offers, so the run matches
    listener = graph.node("probe_listener").subscribers[0]
    assert (listener.topic, listener.qos) == ("DDSPerfRDataKS",
                                              Qos("best-effort", None, "volatile"))


def test_names_that_clash_or_need_quoting_still_load(tmp_path: Path) -> None:
    document = {"system": "mqtt 127.0.0.1:1883", "start_ns": START, "duration_ns": 10**10,
                "topics": [topic("true", 10, 1.0, [1] * 10),
                           topic("a b:c", 10, 1.0, [1] * 10),
                           topic("/x", 10, 1.0, [1] * 10,
                                 publishers=[{"node": "/a/b"}, {"node": "/a_b"}],
                                 subscribers=[{"node": "/a/b"}])]}
    _, graph = load(tmp_path, document)
    assert set(graph.topics()) == {"true", "a b:c", "/x"}
    assert {n.name for n in graph.nodes} >= {"a/b", "a_b_2"}


def test_without_quantiles_the_median_is_the_size_and_the_file_says_so(tmp_path: Path) -> None:
    t = topic("/old", 10, 10.0, [10, 20, 30]) | {"size_quantiles": None}
    document = {"system": "mqtt h:1", "start_ns": START, "duration_ns": 10**9, "topics": [t]}
    text, graph = load(tmp_path, document)
    assert graph.node("old_publisher").publishers[0].payload_bytes == 20
    assert "keeps no size quantiles" in flat(text)


def test_size_quantiles_are_nearest_rank_from_the_smallest_to_the_largest() -> None:
    assert size_quantiles(list(range(1, 101))) == [1] + list(range(5, 101, 5))
    assert size_quantiles([7]) == [7] * 21
    assert size_quantiles([]) == []


def test_qos_mapping() -> None:
    assert qos(None) == Qos()
    assert qos({"reliability": "best-effort", "durability": "persistent", "history": "keep-all",
                "depth": 0}) == Qos("best-effort", "keep-all", "transient-local")
    assert qos({"history": "keep-last", "depth": None}) == Qos(history="keep-last")


def test_no_message_at_all_writes_nothing(tmp_path: Path) -> None:
    document = ros2_document()
    document["topics"] = document["topics"][3:]
    with pytest.raises(RunError, match="--write-graph .*no topic carried a message"):
        write_probe_graph(document, tmp_path / "g.yaml")
    assert list(tmp_path.iterdir()) == []


def test_the_output_is_checked_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--write-graph .*: folder .* does not exist"):
        check_out(str(tmp_path / "no" / "g.yaml"), "--write-graph")
    with pytest.raises(UsageError, match="is a folder"):
        check_out(str(tmp_path), "--write-graph")
    assert check_out(str(tmp_path / "g.yaml"), "--write-graph") == tmp_path / "g.yaml"


def test_a_failed_write_leaves_nothing_half_written(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "g.yaml"
    target.write_text("old\n")

    def fail(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(RunError, match="--write-graph .*g.yaml: cannot write: No space left"):
        write_whole(target, graph_text(probe_traffic(ros2_document(), target)), "--write-graph")
    assert [p.name for p in tmp_path.iterdir()] == ["g.yaml"] and target.read_text() == "old\n"


@pytest.mark.parametrize("where, words", [
    ("{tmp}/missing/g.yaml", "does not exist"),
    ("{tmp}", "is a folder"),
])
def test_cli_refuses_an_unwritable_graph_before_probing(tmp_path: Path, where: str,
                                                        words: str) -> None:
    # port 1: nothing listens; the option is refused before the broker is tried
    proc = run_inprocess(["probe", "--no-save", "--mqtt", "127.0.0.1:1", "--duration", "1s",
                          "--write-graph", where.format(tmp=tmp_path)], timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "--write-graph" in proc.stderr and words in proc.stderr
