"""mwperf bag graph RECORDING: a recording as a graph file that parse.py loads, with the recorded
rates and sizes, the publishing nodes a ROS 1 bag names (callerid), and bad input as one line.

tests/fixtures/bags/small.{bag,mcap} were made by 'mwperf bag example' (1 s, fixed sizes); a bag
with named publishers and varying sizes is written here with rosbags' ROS 1 writer.
"""

import re
import subprocess
from pathlib import Path

import pytest
from cli_inprocess import run_inprocess

from mwperf.bags.info import inspect
from mwperf.graph.from_recording import recording_graph
from mwperf.graph.parse import parse_graph

FIXTURES = Path(__file__).parent / "fixtures" / "bags"


def mwperf(*args: str) -> subprocess.CompletedProcess[str]:
    """``mwperf ARGS`` (run in this process, as a child would run it: cli_inprocess)."""
    return run_inprocess(args, timeout=120)


@pytest.fixture(scope="module")
def named_bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """/chatter from two callerids (10 Hz each, sizes 10..29 cycling), /tf from one (fixed)."""
    from rosbags.rosbag1 import Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS1_NOETIC)
    string = store.types["std_msgs/msg/String"]
    path = tmp_path_factory.mktemp("bags") / "named.bag"
    with Writer(path) as writer:
        talker = writer.add_connection("/chatter", "std_msgs/msg/String", typestore=store,
                                       callerid="/talker")
        other = writer.add_connection("/chatter", "std_msgs/msg/String", typestore=store,
                                      callerid="/ns/other_talker")
        tf = writer.add_connection("/tf", "std_msgs/msg/String", typestore=store, callerid="/tf")
        start = 1_700_000_000_000_000_000
        for k in range(40):  # 20 Hz on /chatter, alternating connections, 2 s
            text = "x" * (k % 20 + 6)
            data = store.serialize_ros1(string(data=text), "std_msgs/msg/String")
            writer.write(talker if k % 2 == 0 else other, start + k * 50_000_000, data)
        for k in range(11):  # 5 Hz on /tf
            data = store.serialize_ros1(string(data="tf"), "std_msgs/msg/String")
            writer.write(tf, start + k * 200_000_000, data)
    return path


@pytest.mark.parametrize("name", ["small.bag", "small.mcap"])
def test_the_example_recording_is_a_graph_of_its_rates_and_sizes(name: str) -> None:
    path = FIXTURES / name
    text, count = recording_graph(path, str(path), None, None, command="mwperf bag graph X")
    graph = parse_graph(text, "small.yaml")
    info = {t.topic: t for t in inspect(path).topics}
    assert count == 2
    assert [n.name for n in graph.nodes] == ["camera/image_raw_publisher", "scan_publisher",
                                             "recorder"]
    for topic in ("/scan", "/camera/image_raw"):
        assert graph.period_ns(topic) == round(1e9 / float(f"{info[topic].rate_hz:.6g}"))
        assert graph.payload_bytes(topic) == info[topic].size_max == info[topic].size_p50
    assert {(e.topic, e.subscriber) for e in graph.edges()} == {("/scan", "recorder"),
                                                                ("/camera/image_raw", "recorder")}
    assert "every message" in text and "intervals in" in text
    assert f"# recording: {path.resolve()}" in text
    assert "recording names no publishing node" in text


def test_a_bags_callerids_are_its_nodes_and_varying_sizes_keep_their_order(
        named_bag: Path) -> None:
    text, count = recording_graph(named_bag, str(named_bag), named_bag.with_suffix(".yaml"),
                                  None, command="mwperf bag graph named.bag")
    graph = parse_graph(text, str(named_bag.with_suffix(".yaml")))
    assert graph.name == "named"
    assert [n.name for n in graph.nodes] == ["talker", "ns/other_talker", "tf", "recorder"]
    chatter = graph.node("talker").publishers[0]
    assert chatter.topic == "/chatter"
    assert chatter.period_ns == 100_000_000  # 20 Hz over two publishing nodes: 10 Hz each
    assert graph.node("ns/other_talker").publishers[0].period_ns == 100_000_000
    # the recording's own sizes, in order: serialized std_msgs/String = 4 + len(text)
    assert chatter.payload_sizes == tuple(4 + k % 20 + 6 for k in range(40))
    assert f"recording: {named_bag}" in text
    tf = graph.node("tf").publishers[0]
    assert (tf.period_ns, tf.payload_bytes, tf.payload_sizes) == (200_000_000, 6, ())
    said = re.sub(r"\n\s*# (?!/)", " ", text)
    assert "in recorded order (40 messages, 10 B to 29 B)" in said
    assert "2 publishing nodes, each at 1/2" in said and "callerid" in said


def test_cli_prints_or_writes_the_graph(named_bag: Path, tmp_path: Path) -> None:
    printed = mwperf("bag", "graph", str(named_bag), "--topics", "/tf")
    assert printed.returncode == 0, printed.stderr
    assert parse_graph(printed.stdout, "x.yaml").topics() == ["/tf"]
    out = tmp_path / "g.yaml"
    wrote = mwperf("bag", "graph", str(named_bag), "--out", str(out))
    assert wrote.returncode == 0 and f"written to {out}" in wrote.stdout
    assert parse_graph(out.read_text(), str(out)).topics() == ["/chatter", "/tf"]
    assert [p.name for p in tmp_path.iterdir()] == ["g.yaml"]


@pytest.mark.parametrize("args, words", [
    (["{tmp}/missing.bag"], "missing.bag: no such file or folder"),
    (["{fixtures}/small.bag", "--topics", "/odom"], "--topics: topic '/odom' is not in"),
    (["{fixtures}/small.bag", "--out", "{tmp}/no/g.yaml"], "--out {tmp}/no/g.yaml: folder"),
    (["{fixtures}/small.bag", "--out", "{tmp}"], "is a folder"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path: Path, args: list[str],
                                                          words: str) -> None:
    fill = {"tmp": str(tmp_path), "fixtures": str(FIXTURES)}
    proc = mwperf("bag", "graph", *(a.format(**fill) for a in args))
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and words.format(**fill) in proc.stderr
    assert list(tmp_path.iterdir()) == []
