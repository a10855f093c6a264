"""A graph's command nodes (graph/commands.py, command_run.py): the graph file's ``command:``
and ``remap:`` read and refused by FILE:LINE and node, the transports and flags they run with,
what mwperf's subscriptions accept carried through them (per edge), the program's command line,
the verdict on an output that carried nothing, and a process group's CPU and memory."""

import os
import subprocess
import sys
import textwrap
import time

import pytest

from mwperf.errors import UsageError
from mwperf.graph.command_run import check_programs, verdicts
from mwperf.graph.commands import argv, await_writers, awaited, carried, ros_name, supported
from mwperf.graph.parse import parse_graph
from mwperf.graph.plan import Addresses, node_specs
from mwperf.process_group import usage

CAMERA = """
nodes:
  - name: camera
    publishers: [{topic: /image, rate: 50, payload: 256}]
"""
MONITOR = """
  - name: monitor
    subscribers: [{topic: /filtered}]
"""


def parse(body: str):
    return parse_graph(textwrap.dedent(body).strip() + "\n", "g.yaml")


def filter_graph(command: str = "node --ros-args -r in:={in} -r out:={out}",
                 extra: str = "") -> str:
    return CAMERA + f"""
  - name: my_filter
    command: {command}
    subscribers: [{{topic: /image, publish: /filtered}}]{extra}
""" + MONITOR


def test_a_command_node_is_read_with_its_words_and_edges():
    graph = parse(filter_graph("python3 'my node.py' --type {type}"))
    node = graph.node("my_filter")
    assert node.command == ("python3", "my node.py", "--type", "{type}")
    assert [(e.topic, e.publisher, e.subscriber) for e in graph.edges()] == [
        ("/image", "camera", "my_filter"), ("/filtered", "my_filter", "monitor")]
    assert graph.period_ns("/filtered") == 20_000_000  # followed through the program


@pytest.mark.parametrize(("extra", "message"), [
    ("\n    publishers: [{topic: /x, rate: 1, payload: 1}]",
     "g.yaml:8: node 'my_filter': 'publishers' is not for a command node"),
    ("\n    executor: multi", "node 'my_filter': 'executor' is not for a command node"),
    ("\n    remap: [a, b]", "node 'my_filter': remap: expected a mapping"),
    ("\n    remap: {input: /nowhere}",
     "node 'my_filter': remap input: '/nowhere' is none of its topics (/filtered, /image)"),
])
def test_what_a_command_node_does_not_take_is_refused_by_line_and_node(extra, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse(filter_graph(extra=extra))


def test_a_command_is_checked_as_pong_cmd_is():
    with pytest.raises(UsageError, match="node 'my_filter': command: '{topic}' is not "
                                         "replaced; mwperf replaces {in}, {out}, {type}"):
        parse(filter_graph("node {topic}"))
    with pytest.raises(UsageError, match="node 'my_filter': command: cannot split"):
        parse(filter_graph("'node \"x'"))


def test_in_and_out_name_one_topic_each():
    body = """
nodes:
  - name: camera
    publishers: [{topic: /image, rate: 50, payload: 256}, {topic: /imu, rate: 100, payload: 64}]
  - name: fusion
    command: node -r a:={in}
    subscribers: [{topic: /image, publish: /filtered}, {topic: /imu}]
""" + MONITOR
    with pytest.raises(UsageError, match=r"node 'fusion': command: '\{in\}' stands for one "
                                         r"topic and the node has 2 inputs \(/image, /imu\); "
                                         "name each with remap"):
        parse(body)
    graph = parse(body.replace("-r a:={in}", "--type {type}").replace(
        "    subscribers: [{topic: /image, publish",
        "    remap: {camera_in: /image, imu_in: /imu, out: /filtered}\n"
        "    subscribers: [{topic: /image, publish"))
    node = graph.node("fusion")
    names = {"/image": "/mwperf/g1t0/ping", "/imu": "/mwperf/g1t1/ping",
             "/filtered": "/mwperf/g1t2/ping"}
    assert argv(node, names, "std_msgs/msg/UInt8MultiArray") == [
        "node", "--type", "std_msgs/msg/UInt8MultiArray", "--ros-args",
        "-r", "camera_in:=/mwperf/g1t0/ping", "-r", "imu_in:=/mwperf/g1t1/ping",
        "-r", "out:=/mwperf/g1t2/ping"]


def test_remap_is_only_for_a_command_node():
    with pytest.raises(UsageError, match="node 'camera': remap is for a command node"):
        parse(CAMERA + "    remap: {a: /image}\n" + MONITOR.replace("/filtered", "/image"))


def test_an_input_needs_one_publisher_and_an_output_a_subscriber():
    two = filter_graph() + """
  - name: camera2
    publishers: [{topic: /image, rate: 50, payload: 256}]
"""
    with pytest.raises(UsageError, match="command node 'my_filter': its input '/image' is "
                                         r"published by 2 nodes \(camera, camera2\)"):
        parse(two)
    with pytest.raises(UsageError, match="command node 'my_filter': nobody subscribes to its "
                                         "output '/filtered'"):
        parse(filter_graph().replace(MONITOR, "\n  - name: monitor\n    subscribers: "
                                               "[{topic: /image}]\n"))


def test_command_nodes_run_on_ros2_and_refuse_the_flags_they_do_not_take_yet():
    graph = parse(filter_graph())
    with pytest.raises(UsageError, match="command node 'my_filter' runs only with --transport "
                                         "ros2, cyclonedds, fastdds, rustdds .*not zenoh"):
        supported(graph, "zenoh", {})
    with pytest.raises(UsageError, match="--transport fastdds: command node 'my_filter' reads "
                                         "real ROS 2 messages; add --opt ros2-type="):
        supported(graph, "fastdds", {})
    supported(graph, "fastdds", {}, "std_msgs/msg/UInt8MultiArray")
    with pytest.raises(UsageError, match="--link is not yet possible with a command node"):
        supported(graph, "ros2", {"--link": True, "--layers": False})
    supported(graph, "ros2", {"--link": False})
    supported(parse(CAMERA + MONITOR.replace("/filtered", "/image")), "udp", {"--link": True})


def test_a_missing_program_is_a_usage_error_naming_the_node():
    graph = parse(filter_graph("no-such-program-mwperf"))
    with pytest.raises(UsageError, match="node 'my_filter': command: 'no-such-program-mwperf' "
                                         "is not an executable program on PATH"):
        check_programs(graph, {"PATH": os.defpath})


def test_a_subscription_accepts_what_comes_through_command_nodes_explicitly():
    """Two programs in a row: the monitor's subscription takes /image's messages (the camera's
    numbering) as an edge from the last program; mwperf's own subscriptions nothing extra."""
    graph = parse(CAMERA + """
  - name: first
    command: a
    subscribers: [{topic: /image, publish: /mid}]
  - name: second
    command: b
    subscribers: [{topic: /mid, publish: /filtered}]
  - name: tap
    subscribers: [{topic: /image}]
""" + MONITOR)
    ids = {t: i for i, t in enumerate(graph.topics())}
    assert carried(graph, "/filtered", ids) == [{"topic": "/image", "id": 0, "via": 2}]
    assert carried(graph, "/image", ids) == []
    listen = {(n.name, s.topic): f"0/b{s.topic}" for n in graph.nodes for s in n.subscribers}
    specs = node_specs(graph, Addresses(listen, {t: [f"0/b{t}"] for t in ids}), 0, 1, 1)
    assert [s["name"] for s in specs] == ["camera", "tap", "monitor"]  # no agent for programs
    assert [s["index"] for s in specs] == [0, 3, 4]
    monitor = specs[2]["subscriptions"][0]
    assert monitor["carried"] == [{"topic": "/image", "id": 0, "via": 2}]
    assert "carried" not in specs[1]["subscriptions"][0]


def test_ros_names_are_the_agents():
    assert ros_name("61/g12ab34t3") == "/mwperf/g12ab34t3/ping"
    assert ros_name("g12ab34t3") == "/mwperf/g12ab34t3/ping"


def test_an_output_that_carried_nothing_makes_the_result_partial_naming_it():
    graph = parse(filter_graph())
    result = {"status": "complete", "status_reason": None,
              "edges": [{"topic": "/filtered", "from": "my_filter", "to": "monitor",
                         "sent": 100, "received": 0}],
              "nodes": [{"name": "camera", "status": "complete", "status_reason": None},
                        {"name": "my_filter", "status": "complete", "status_reason": None,
                         "command": {}}]}
    verdicts(graph, result, {"/filtered": (7, 0)})
    assert result["status"] == "partial"
    assert result["status_reason"] == (
        "command node 'my_filter' published none of the 100 messages mwperf sent it on its "
        "output '/filtered'; it published 7 message(s) there without mwperf's (a node under "
        "test must pass its input's data on)")
    assert result["nodes"][1]["status"] == "partial"
    fine = {**result, "status": "complete", "status_reason": None}
    fine["edges"] = [{**result["edges"][0], "received": 100}]
    fine["nodes"] = [{**n, "status": "complete", "status_reason": None} for n in result["nodes"]]
    verdicts(graph, fine, {})
    assert fine["status"] == "complete"
    # an output read only by another program is judged where that one's output arrives
    inner = {**fine, "edges": [{**result["edges"][0], "received": None,
                                "command_input": True}]}
    verdicts(graph, inner, {})
    assert inner["status"] == "complete"


def test_a_process_groups_cpu_and_memory_count_its_children():
    """A group of a shell and two children, one of them spinning: its CPU is the group's."""
    spin = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n" \
           "time.sleep(30)"
    proc = subprocess.Popen(["sh", "-c", f"{sys.executable} -c '{spin}' & sleep 30 & wait"],
                            process_group=0)
    try:
        deadline = time.monotonic() + 30
        while True:
            now = usage(proc.pid)
            if now.processes == 3 and now.cpu_user_s + now.cpu_sys_s >= 0.3:
                break
            assert time.monotonic() < deadline, now
            time.sleep(0.05)
        assert now.rss_kib > 0 and now.peak_rss_kib >= now.rss_kib
    finally:
        os.killpg(proc.pid, 9)
        proc.wait()


def test_a_replayed_recording_gives_a_publisher_its_times_and_sizes():
    from mwperf.graph.scale import scale

    body = """
nodes:
  - name: player
    publishers: [{topic: /scan, replay: {recording: example, topic: /scan}}]
  - name: monitor
    subscribers: [{topic: /scan}]
"""
    graph = parse(body)
    scan = graph.node("player").publishers[0]
    assert len(scan.offsets_ns) == len(scan.payload_sizes) == 400  # the example's /scan
    assert scan.offsets_ns[0] == 0 and scan.period_ns == round(scan.offsets_ns[-1] / 399)
    assert 24_000_000 < scan.period_ns < 26_000_000  # recorded at 40 Hz
    faster = scale(graph, rate_scale=2).node("player").publishers[0]
    assert faster.offsets_ns[-1] == round(scan.offsets_ns[-1] / 2)
    assert faster.period_ns == round(scan.period_ns / 2)
    with pytest.raises(UsageError, match="g.yaml:3: node 'player', publisher of '/scan': rate "
                                         "with replay"):
        parse(body.replace("replay:", "rate: 10, replay:"))
    with pytest.raises(UsageError, match="replay: topic"):
        parse(body.replace("topic: /scan}}", "topic: /nothing}}"))


def test_an_output_made_of_two_input_topics_is_refused():
    body = """
nodes:
  - name: camera
    publishers: [{topic: /image, rate: 50, payload: 256}, {topic: /imu, rate: 100, payload: 64}]
  - name: fusion
    command: node
    remap: {a: /image, b: /imu, c: /filtered}
    subscribers: [{topic: /image, publish: /filtered}, {topic: /imu, publish: /filtered}]
""" + MONITOR
    with pytest.raises(UsageError, match="node 'fusion' publishes '/filtered' twice"):
        parse(body)


def test_the_edge_into_a_program_is_judged_where_it_comes_out():
    """A peak-search trial and a graph's gates skip the edge into a command node (no figures:
    mwperf does not see it arrive) and judge its messages on the edge out of it."""
    from mwperf.peak.verdict import graph_trial
    from mwperf.soak.gates import parse_gates
    from mwperf.soak.graph_gates import evaluate

    def result(received: int) -> dict:
        latency = {"p50_ns": 6_000_000, "p99_ns": 9_000_000, "max_ns": 9_000_000}
        return {"run_id": "r", "status": "complete", "status_reason": None, "edges": [
            {"topic": "/image", "from": "camera", "to": "my_filter", "period_ns": 20_000_000,
             "sent": 100, "received": None, "lost": None, "latency": None,
             "command_input": True},
            {"topic": "/filtered", "from": "my_filter", "to": "monitor",
             "period_ns": 20_000_000, "sent": 100, "received": received,
             "lost": 100 - received, "latency": latency, "late": 0, "too_late": 0,
             "carried": [{"topic": "/image", "from": "camera"}]}], "nodes": []}
    assert graph_trial(1.0, result(100), 1.0, None).passed
    dropped = graph_trial(1.0, result(90), 1.0, None)
    assert not dropped.passed and dropped.why.startswith("loss 10% > 1%")
    (gate,) = evaluate(parse_gates("loss<=1%"), result(90), 2)
    assert gate["passed"] is False
    (gate,) = evaluate(parse_gates("loss<=1%"), result(100), 2)
    assert gate["passed"] is True


def test_mwperf_graphs_shows_a_command_node(tmp_path):
    from mwperf.graph.listing import detail, render_detail

    graph = parse(filter_graph("python3 node.py --ros-args -r in:={in}",
                               "\n    remap: {out: /filtered}"))
    assert ("  my_filter: publishes -; subscribes /image -> /filtered; command: python3 node.py "
            "--ros-args -r 'in:={in}'; remap out:=/filtered") in render_detail(graph)
    node = next(n for n in detail(graph)["nodes"] if n["name"] == "my_filter")
    assert node["remap"] == {"out": "/filtered"} and node["command"].startswith("python3 ")


def test_each_reader_of_a_programs_output_waits_to_be_matched_to_its_writers():
    """The watcher's graph showing a program's writer does not mean another node's reader
    matched it: each of mwperf's subscriptions of a program's output waits for its own
    match (spec await_publishers) to every writer of it."""
    graph = parse(CAMERA + """
  - name: my_filter
    command: node --ros-args -r in:={in} -r out:={out}
    subscribers: [{topic: /image, publish: /filtered}]
  - name: also
    command: other --ros-args -r in:={in} -r out:={out}
    subscribers: [{topic: /image, publish: /filtered}]
  - name: monitor
    subscribers: [{topic: /filtered}, {topic: /image}]
""")
    specs = [{"name": "monitor", "subscriptions": [{"topic": "/filtered"}, {"topic": "/image"}]},
             {"name": "camera", "publishers": [{"topic": "/image"}]}]
    await_writers(graph, specs)
    assert specs[0]["subscriptions"] == [{"topic": "/filtered", "await_publishers": 2},
                                         {"topic": "/image"}]
    assert "subscriptions" not in specs[1]


def test_every_input_of_a_program_is_awaited_with_the_whole_graphs_subscriptions():
    """my_filter -> second in a row: /image (mwperf's camera into the first program) and
    /filtered (program to program: no matched count of mwperf's would see it) are awaited;
    every program's output (/filtered, /twice) is hoped for (not required: a program may
    publish lazily); /plan (mwperf's alone) is not awaited."""
    graph = parse(CAMERA + """
  - name: my_filter
    command: node --ros-args -r in:={in} -r out:={out}
    subscribers: [{topic: /image, publish: /filtered}]
  - name: second
    command: node --ros-args -r in:={in} -r out:={out}
    subscribers: [{topic: /filtered, publish: /twice}]
  - name: planner
    subscribers: [{topic: /twice, publish: /plan}]
  - name: monitor
    subscribers: [{topic: /twice}, {topic: /plan}]
""")
    names = {t: f"/mwperf/x{i}/ping" for i, t in enumerate(graph.topics())}
    got = sorted((e["topic"], e["publishers"], e["subscribers"], e.get("required", True),
                  e["about"]) for e in awaited(graph, names))
    assert got == sorted([
        (names["/image"], 0, 1, True, "'/image' of the graph: command node 'my_filter' reads it"),
        (names["/filtered"], 0, 1, True,
         "'/filtered' of the graph: command node 'second' reads it"),
        (names["/filtered"], 1, 0, False,
         "'/filtered' of the graph: command node 'my_filter' publishes it"),
        (names["/twice"], 1, 0, False,
         "'/twice' of the graph: command node 'second' publishes it")])
