"""Nodes sharing an OS process (graph/processes.py): the graph file's ``process:`` key,
``--processes``, and what a shared process cannot give refused before anything runs, naming
the flag or field. The runs themselves: tests/test_graph_processes_e2e.py."""

from pathlib import Path
from typing import Any

import pytest

from mwperf.config import build_point
from mwperf.errors import UsageError
from mwperf.graph.builtin import load_graph
from mwperf.graph.processes import groups, process_of
from mwperf.graph.result import _client
from mwperf.graph.scale import scale
from mwperf.show.graph import _processes

PAIR = """nodes:
  - {name: talker, process: robot, publishers: [{topic: /t, rate: 100, payload: 64}]}
  - {name: near, process: robot, subscribers: [{topic: /t}]}
  - {name: far, subscribers: [{topic: /t}]}
"""


class Catalogue:
    def transports(self) -> list[str]:
        return ["udp", "uds", "cyclonedds", "rustdds", "ros2"]

    def payloads(self) -> dict[str, int]:
        return {"Array1k": 1024}


def graph_file(tmp_path: Path, text: str = PAIR) -> str:
    path = tmp_path / "g.yaml"
    path.write_text(text)
    return str(path)


def build(**options: Any) -> Any:
    return build_point({"transport": "udp", **options}, Catalogue)


def test_a_graph_files_process_key_groups_its_nodes(tmp_path: Path) -> None:
    graph = load_graph(graph_file(tmp_path))
    assert [n.process for n in graph.nodes] == ["robot", "robot", None]
    assert groups(graph) == {"robot": ("talker", "near")}
    assert process_of(graph) == {"talker": "robot", "near": "robot"}
    # the result names each node's process (its CPU and memory are that process's)
    assert _client(graph, "near") == {"process": "robot"} and _client(graph, "far") == {}


def test_a_process_of_one_node_runs_as_any_node(tmp_path: Path) -> None:
    graph = load_graph(graph_file(tmp_path, PAIR.replace("near, process: robot", "near")))
    assert groups(graph) == {}


@pytest.mark.parametrize("mode,expected", [
    ("one", ["all", "all", "all"]), ("per-node", [None, None, None]),
    ("file", ["robot", "robot", None])])
def test_processes_overrides_the_file(tmp_path: Path, mode: str, expected: list[Any]) -> None:
    point = build(graph=graph_file(tmp_path), processes=mode)
    assert [n.process for n in point.graph.graph.nodes] == expected
    assert point.graph.to_dict().get("processes", "file") == mode


def test_an_irobot_topology_runs_in_one_process_as_irobot_runs_it() -> None:
    point = build(graph="sierra_nevada", processes="one")
    graph = point.graph.graph
    assert groups(graph) == {"all": tuple(n.name for n in graph.nodes)}
    assert groups(build(graph="sierra_nevada").graph.graph) == {}


def test_each_copy_of_a_graph_shares_a_process_of_its_own(tmp_path: Path) -> None:
    graph = scale(load_graph(graph_file(tmp_path)), copies=2)
    assert groups(graph) == {"robot_c1": ("talker_c1", "near_c1"),
                             "robot_c2": ("talker_c2", "near_c2")}


@pytest.mark.parametrize("text,expected", [
    (PAIR.replace("process: robot,", "process: 'a b',", 1), "process 'a b': letters, digits"),
    (PAIR.replace("{name: far,", "{name: far, client: rclpy, process: robot,"),
     "node 'far': process: only mwperf's nodes (client: agent) share a process"),
    (PAIR.replace("process: robot, publishers", "process: robot, cpu_quota: 50%, publishers"),
     "node 'talker': cpu_quota: not on a node of a process ('robot')"),
])
def test_a_bad_process_key_names_the_node_and_the_field(tmp_path: Path, text: str,
                                                        expected: str) -> None:
    with pytest.raises(UsageError) as caught:
        load_graph(graph_file(tmp_path, text))
    assert expected in str(caught.value)


@pytest.mark.parametrize("options,expected", [
    ({"processes": "two"}, "--processes: 'two'; allowed: file, one, per-node"),
    ({"count_allocs": True}, "--count-allocs: counts a whole process, and process 'robot' "
                             "(talker, near) holds several nodes"),
    ({"layers": True}, "--layers: counts a whole process"),
    ({"alloc_sites": True}, "--alloc-sites: counts a whole process"),
    ({"transport": "ros2"}, "--transport ros2: nodes sharing a process"),
    ({"transport": "cyclonedds", "secure": "auth"}, "--secure auth: one DDS participant per "
                                                    "process has one identity"),
    ({"restart": ("near@1s",)}, "--restart near@...: node 'near' shares process 'robot'"),
    ({"cpu_quota": "near=50%"}, "--cpu-quota/--cpu-pin near=...: node 'near' shares process"),
])
def test_what_a_shared_process_cannot_give_is_refused_naming_the_flag(
        tmp_path: Path, options: dict[str, Any], expected: str) -> None:
    with pytest.raises(UsageError) as caught:
        build(graph=graph_file(tmp_path), **options)
    assert expected in str(caught.value)
    # the same run with a process per node is fine (or refused for its own reason only)
    if "processes" not in options:
        try:
            build(graph=graph_file(tmp_path), processes="per-node", **options)
        except UsageError as exc:
            assert "process" not in str(exc), exc


def test_rustdds_refuses_a_process_that_publishes_and_subscribes_one_topic(
        tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="process 'robot' publishes and subscribes '/t'"):
        build(graph=graph_file(tmp_path), transport="rustdds")
    apart = PAIR.replace("{name: far,", "{name: far, process: robot,").replace(
        "{name: near, process: robot,", "{name: near,")
    build(graph=graph_file(tmp_path, apart.replace("process: robot, publishers",
                                                   "publishers")), transport="rustdds")


def test_a_process_runs_on_one_host(tmp_path: Path) -> None:
    text = PAIR.replace("{name: near, process: robot,", "{name: near, process: robot, host: b,")
    text = text.replace("{name: talker, process: robot,", "{name: talker, process: robot, host: a,")
    with pytest.raises(UsageError, match="process 'robot': its nodes are placed on hosts a, b"):
        build(graph=graph_file(tmp_path, text), link="delay=1ms")


def test_the_summary_counts_a_shared_process_once() -> None:
    nodes = [{"name": "talker", "process": "robot", "cpu_percent": 3.0, "max_rss_kib": 1024},
             {"name": "near", "process": "robot", "cpu_percent": 3.0, "max_rss_kib": 1024},
             {"name": "far", "cpu_percent": 1.0, "max_rss_kib": 512}]
    assert [n["name"] for n in _processes(nodes)] == ["process robot (talker, near)", "far"]


def test_a_topology_in_one_process_runs_saves_and_shows_as_one(fake_env: dict[str, str],
                                                             tmp_path: Path) -> None:
    """The run path with the fake agent (tests/fakes/fake_node.py run_several): one agent
    process for every node, each node's report paired with its spec, the result valid v3."""
    import json

    from conftest import run_mwperf
    from mwperf.schema import validation_error

    trace = Path(fake_env["FAKE_AGENT_TRACE"])
    done = run_mwperf("run", "--graph", "sierra_nevada", "--transport", "udp", "--duration",
                      "1s", "--processes", "one", "--results", str(tmp_path / "r"),
                      env=fake_env)
    assert done.returncode == 0, done.stderr
    result = json.loads(next((tmp_path / "r").glob("*/result.json")).read_text())
    assert validation_error(result, "result") is None
    graph = load_graph("sierra_nevada")
    assert {n["name"]: n.get("process") for n in result["nodes"]} == {
        n.name: "all" for n in graph.nodes}
    for edge in result["edges"]:
        assert edge["received"] == edge["sent"] > 0, edge
    # one agent started, with every node's spec and its report path, in the graph's order
    (argv_file,) = trace.glob("*.argv.json")
    argv = json.loads(argv_file.read_text())
    specs = [argv[i + 1] for i, a in enumerate(argv) if a == "--node-spec"]
    reports = [argv[i + 1] for i, a in enumerate(argv) if a == "--node-json"]
    assert len(specs) == len(reports) == len(graph.nodes) and "--json" not in argv
    assert [Path(r).name for r in reports] == [Path(s).name.replace(".spec", "")
                                               for s in specs]
    assert "busiest nodes: process all (" in done.stdout
    assert result["config"]["graph"]["processes"] == "one"


DEBUG = """{"nodes": [{"node_name": "debug_listener", "subscribers": [
  {"topic_name": "amazon", "msg_type": "stamped9_float32"},
  {"topic_name": "nile", "msg_type": "stamped4_int32"}]}]}"""


def test_several_graph_files_run_side_by_side_on_shared_topics(tmp_path: Path) -> None:
    """iRobot's debug listeners beside a topology: a file of listeners alone would be refused
    (nobody publishes its topics), together they are one graph."""
    debug = tmp_path / "debug_sierra.json"
    debug.write_text(DEBUG)
    with pytest.raises(UsageError, match="which no node publishes"):
        load_graph(str(debug))
    point = build(graph=f"sierra_nevada,{debug}")
    graph = point.graph.graph
    sierra = load_graph("sierra_nevada")
    assert [n.name for n in graph.nodes] == [n.name for n in sierra.nodes] + ["debug_listener"]
    assert graph.name == "sierra_nevada + debug_sierra"
    assert {e.subscriber for e in graph.edges() if e.topic == "amazon"} >= {"debug_listener"}
    assert groups(graph) == {}
    # as iRobot runs them: one process per file, named after it
    one = build(graph=f"sierra_nevada,{debug}", processes="one").graph
    assert groups(one.graph) == {"sierra_nevada": tuple(n.name for n in sierra.nodes)}
    assert process_of(one.graph).get("debug_listener") is None  # a process of one node
    assert one.graph.node("debug_listener").process == "debug_sierra"
    assert one.to_dict()["processes"] == "one"


@pytest.mark.parametrize("second,expected", [
    ("sierra_nevada", "--graph: sierra_nevada given twice"),
    ("same_names", "node 'montreal' is defined twice"),
    ("late", "set different late:, too_late: or phase:"),
])
def test_several_graph_files_that_cannot_run_as_one_are_refused(
        tmp_path: Path, second: str, expected: str) -> None:
    files = {"same_names": '{"nodes": [{"node_name": "montreal", "subscribers": '
                           '[{"topic_name": "amazon", "msg_type": "stamped9_float32"}]}]}',
             "late": "late: {percent: 50, absolute: 1ms}\nnodes:\n"
                     "  - {name: x, subscribers: [{topic: amazon}]}\n"}
    spec = second
    if second in files:
        path = tmp_path / (f"{second}.json" if second == "same_names" else f"{second}.yaml")
        path.write_text(files[second])
        spec = str(path)
    with pytest.raises(UsageError) as caught:
        build(graph=f"sierra_nevada,{spec}")
    assert expected in str(caught.value)
