"""``mwperf run --graph G --replay FILE [--replay-topics A,B]`` (issue 40: a recording feeds the
graph's inputs, graph/replay_inputs.py): the publishers of the recording's topics become
exactly what the graph file's ``replay:`` key makes of them, the others keep their rates, and
what cannot be is refused (exit 2, the flag named and what is allowed). End to end: every
message the recording's schedule put in the measured window arrives, counted from the bag
itself with rosbags."""

import json
import textwrap
from pathlib import Path

import pytest

from conftest import run_mwperf
from mwperf.errors import UsageError
from mwperf.graph.parse import parse_graph
from mwperf.graph.replay_inputs import replay_inputs

GRAPH = """
    name: replay-cli
    nodes:
      - name: player
        publishers: [{topic: /scan, rate: 10, payload: 100}, {topic: /odom, rate: 50, payload: 64}]
      - name: monitor
        subscribers: [{topic: /scan}, {topic: /odom}]
    """


def parse(body: str):  # type: ignore[no-untyped-def]
    return parse_graph(textwrap.dedent(body).strip() + "\n", "g.yaml")


def test_the_recordings_topics_replay_as_the_graph_files_replay_key_would():
    graph, topics = replay_inputs(parse(GRAPH), "example", None)
    assert topics == ("/scan",)  # the example has /scan and /camera/image_raw
    keyed = parse(GRAPH.replace("{topic: /scan, rate: 10, payload: 100}",
                                "{topic: /scan, replay: {recording: example, topic: /scan}}"))
    assert graph.node("player").publishers == keyed.node("player").publishers
    odom = graph.node("player").publishers[1]
    assert (odom.period_ns, odom.payload_bytes, odom.offsets_ns) == (20_000_000, 64, ())


def test_replay_topics_choose_and_name_what_is_missing():
    graph, topics = replay_inputs(parse(GRAPH), "example", "/scan")
    assert topics == ("/scan",)
    with pytest.raises(UsageError, match=r"--replay-topics: '/imu' is no publisher's topic in "
                                         r"graph 'replay-cli' \(its publishers: /odom, /scan\)"):
        replay_inputs(parse(GRAPH), "example", "/imu")
    with pytest.raises(UsageError, match=r"--replay-topics: '/odom' is not in recording "
                                         r"'example' \(it has: /camera/image_raw, /scan\)"):
        replay_inputs(parse(GRAPH), "example", "/odom")


def test_a_recording_sharing_no_topic_with_the_graph_is_refused():
    body = GRAPH.replace("/scan", "/front")
    with pytest.raises(UsageError, match=r"--replay example: none of graph 'replay-cli''s "
                                         r"publishers' topics \(/front, /odom\) is in the "
                                         r"recording \(it has: /camera/image_raw, /scan\)"):
        replay_inputs(parse(body), "example", None)
    with pytest.raises(UsageError, match="--replay: recording 'nowhere.bag' does not exist"):
        replay_inputs(parse(GRAPH), "nowhere.bag", None)


@pytest.mark.parametrize(("extra", "expected"), [
    (("--replay-rate", "2"), "--replay-rate: not with --graph (a graph's replayed publishers "
                             "loop for the run's --duration; --rate-scale scales their times)"),
    (("--replay-loop",), "--replay-loop: not with --graph"),
    (("--replay-topics", "/scan"), "--replay-topics: only with --replay FILE"),
])
def test_the_stream_replays_options_are_refused_with_a_graph(fake_env, tmp_path: Path, extra,
                                                              expected):
    path = tmp_path / "g.yaml"
    path.write_text(textwrap.dedent(GRAPH))
    replay = () if extra[0] == "--replay-topics" else ("--replay", "example")
    done = run_mwperf("run", "--graph", str(path), "--transport", "udp", *replay, *extra,
                      "--no-save", env=fake_env)
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr


@pytest.mark.agent
def test_a_recording_drives_a_graphs_publisher_on_its_schedule(real_env, tmp_path: Path):
    from rosbags.rosbag1 import Reader

    from mwperf.bags.example import example_bag
    from mwperf.graph.plan import phase_ns

    warmup_s, duration_s = 0.5, 2
    path, out = tmp_path / "g.yaml", tmp_path / "r.json"
    path.write_text(textwrap.dedent(GRAPH))
    done = run_mwperf("run", "--graph", str(path), "--transport", "udp", "--replay", "example",
                      "--duration", f"{duration_s}s", "--warmup", f"{warmup_s}s", "--no-save",
                      "--json-out", str(out), env=real_env, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["config"]["graph"]["replay"] == {"recording": "example", "topics": ["/scan"]}
    with Reader(example_bag()) as bag:
        scans = [c for c in bag.connections if c.topic == "/scan"]
        times = [t for _, t, _ in bag.messages(connections=scans)]
        sizes = [len(raw) for _, _, raw in bag.messages(connections=scans)]
    offsets = [t - times[0] for t in times]
    period = round(offsets[-1] / (len(offsets) - 1))
    start = phase_ns("player", "/scan", period, "spread")
    warmup_ns, end_ns = int(warmup_s * 1e9), int((warmup_s + duration_s) * 1e9)
    measured = []
    for k in range(10 * len(offsets)):
        due = start + k // len(offsets) * (offsets[-1] + period) + offsets[k % len(offsets)]
        if due >= end_ns:
            break
        if due >= warmup_ns:
            measured.append(k)
    edges = {e["topic"]: e for e in result["edges"]}
    scan, odom = edges["/scan"], edges["/odom"]
    assert (scan["sent"], scan["received"], scan["lost"]) == (len(measured),) * 2 + (0,), scan
    assert scan["received_bytes"] == sum(sizes[k % len(sizes)] for k in measured)
    assert scan["period_ns"] == period
    assert (odom["sent"], odom["received"], odom["period_ns"]) == (100, 100, 20_000_000)
