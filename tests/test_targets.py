"""Target files (issue 40, item 4): iRobot's own mont_blanc_rpi3.json read as it is and mwperf's
{gates: [...]} file become gates naming their source; every malformed file is one usage error
naming --targets and the file; a graph's gates are checked over all its edges and nodes
(figures recomputed here by hand from a result with known counts); a single stream's cpu and
rss gates from its agents' and daemons' own process figures; the gates a run kind cannot
measure are refused before anything runs (exit 2); a miss exits 1 with the figure and limit."""

import json
from pathlib import Path

import pytest

from conftest import read_saved, run_mwperf
from mwperf.errors import UsageError
from mwperf.soak.gates import evaluate as point_evaluate
from mwperf.soak.gates import parse_gates
from mwperf.soak.graph_gates import evaluate as graph_evaluate
from mwperf.show.soak import gate_lines
from mwperf.soak.targets import load_targets

VECTORS = Path(__file__).parent / "vectors" / "targets"
MONT_BLANC = VECTORS / "mont_blanc_rpi3.json"  # irobot-ros/ros2-performance, as published
MiB = 1 << 20


def test_irobots_target_file_is_read_as_it_is():
    assert load_targets(MONT_BLANC) == (
        ("cpu<=20%", "mont_blanc_rpi3.json resources.cpu[%]"),
        ("rss<=20480KiB", "mont_blanc_rpi3.json resources.rss[KB]"),
        ("late<=1.9%", "mont_blanc_rpi3.json latency_total.late[%]"),
        ("too-late<=0.1%", "mont_blanc_rpi3.json latency_total.too_late[%]"),
        ("loss<=0%", "mont_blanc_rpi3.json latency_total.lost[%]"))
    gates = parse_gates((), load_targets(MONT_BLANC))
    assert [(g.metric, g.limit) for g in gates] == [
        ("cpu", 20), ("rss", 20 * MiB), ("late", 1.9), ("too-late", 0.1), ("loss", 0)]


def test_mwperfs_own_target_file_in_yaml(tmp_path: Path):
    file = tmp_path / "robot.yaml"
    file.write_text("comments: the arm controller\ngates: [p99<=2ms, 'loss<=1%']\n")
    assert load_targets(file) == (("p99<=2ms", "robot.yaml gates[0]"),
                                  ("loss<=1%", "robot.yaml gates[1]"))


@pytest.mark.parametrize("name,text,says", [
    ("a.json", "{", "not valid JSON"),
    ("a.json", "[1, 2]", "expected an object"),
    ("a.json", '{"resources": {"cpu[%]": 20}, "latency": {}}', "unknown key 'latency'"),
    ("a.json", '{"resources": {"cpu": 20}}', "resources.cpu is not a target; allowed in "
                                             "resources: cpu[%], rss[KB]"),
    ("a.json", '{"resources": {"cpu[%]": "20"}}', "resources.cpu[%] must be a number >= 0"),
    ("a.json", '{"resources": {"cpu[%]": -1}}', "must be a number >= 0"),
    ("a.json", '{"resources": 20}', "resources must be an object"),
    ("a.json", '{"platform": "rpi3"}', "no targets in it"),
    ("a.yaml", "gates: []\n", "gates must be a non-empty list"),
    ("a.yaml", "gates: [p99<=2ms]\nplatform: x\n", "unknown key 'platform'"),
])
def test_a_malformed_target_file_is_one_usage_error(tmp_path: Path, name, text, says):
    file = tmp_path / name
    file.write_text(text)
    with pytest.raises(UsageError) as caught:
        load_targets(file)
    assert str(caught.value).startswith(f"--targets {file}: ") and says in str(caught.value)


def test_a_missing_target_file_is_a_usage_error(tmp_path: Path):
    with pytest.raises(UsageError, match=r"--targets .*nothing.json: cannot read it"):
        load_targets(tmp_path / "nothing.json")


def edge(topic, sent, received, lost, late, too_late, p99_ns):
    return {"topic": topic, "from": "a", "to": "b", "sent": sent, "received": received,
            "lost": lost, "late": late, "too_late": too_late,
            "latency": {"p50_ns": p99_ns // 2, "p99_ns": p99_ns, "max_ns": p99_ns * 2}}


def node(name, cpu_s, cpu_percent, rss_kib):
    return {"name": name, "status": "complete", "cpu_s": cpu_s, "cpu_percent": cpu_percent,
            "max_rss_kib": rss_kib}


GRAPH = {"edges": [edge("imu", 1000, 990, 10, 30, 2, 400_000),
                   edge("scan", 100, 100, 0, 0, 0, 2_000_000)],
         "nodes": [node("driver", 1.0, 10.0, 8192), node("planner", 3.0, 30.0, 12288)],
         "daemons": [{"name": "router", "cpu_user_s": 0.5, "cpu_sys_s": 0.5, "wall_s": 10.0,
                      "peak_rss_kib": 4096}]}


def test_graph_gates_are_figures_over_every_edge_and_process():
    texts = ("late<=3%", "too-late<=0.1%", "loss<=1%", "lost<=9", "p99<=1ms", "min-samples=100",
             "cpu<=24.9%", "rss<=23MiB")
    found = {g["gate"]: g for g in graph_evaluate(parse_gates(texts), GRAPH, cores=2)}
    # late: 30 of 1090 received; too late 2 of 1090; loss 10 of 1100 (iRobot's lost/(received
    # + lost)); the worst p99 is scan's; the fewest received is scan's 100
    assert found["late<=3%"]["figure"] == pytest.approx(100 * 30 / 1090)
    assert found["late<=3%"]["passed"]
    assert found["too-late<=0.1%"]["figure"] == pytest.approx(100 * 2 / 1090)
    assert not found["too-late<=0.1%"]["passed"]
    assert found["loss<=1%"]["figure"] == pytest.approx(100 * 10 / 1100)
    assert found["loss<=1%"]["passed"]
    assert (found["lost<=9"]["figure"], found["lost<=9"]["passed"]) == (10, False)
    assert found["p99<=1ms"]["figure"] == 2_000_000 and "scan a->b" in found["p99<=1ms"]["what"]
    assert found["min-samples=100"]["figure"] == 100 and found["min-samples=100"]["passed"]
    # cpu: (10 % + 30 % of one core) + the router's 1 s in 10 s, over 2 cores
    assert found["cpu<=24.9%"]["figure"] == pytest.approx((10 + 30 + 10) / 2)
    assert not found["cpu<=24.9%"]["passed"]
    assert found["rss<=23MiB"]["figure"] == (8192 + 12288 + 4096) * 1024
    assert not found["rss<=23MiB"]["passed"]
    assert [p["name"] for p in found["rss<=23MiB"]["processes"]] == [
        "driver", "planner", "daemon router"]


def test_a_graph_figure_not_measured_fails():
    silent = {**GRAPH, "edges": [*GRAPH["edges"], {**edge("cam", 30, None, None, None, None, 1),
                                                   "latency": None}],
              "nodes": [*GRAPH["nodes"], {"name": "camera", "status": "failed"}]}
    gates = parse_gates(("late<=100%", "cpu<=100%"))
    late, cpu = graph_evaluate(gates, silent, cores=2)
    assert not late["passed"] and late["figure"] is None and "cam a->b" in late["what"]
    assert not cpu["passed"] and "no report from camera" in cpu["what"]
    unknown = graph_evaluate(parse_gates(("cpu<=100%",)), GRAPH, cores=None)[0]
    assert not unknown["passed"] and "core count is unknown" in unknown["what"]


def test_a_single_streams_cpu_and_rss_are_its_agents_and_daemons():
    def agent(role, user, system, wall, rss_kib):
        return {"role": role, "process": {"cpu_user_s": user, "cpu_sys_s": system,
                                          "wall_s": wall, "max_rss_kib": rss_kib}}
    result = {"host": {"cores": 2}, "agents": [agent("ping", 0.2, 0.3, 5.0, 3000),
                                               agent("pong", 0.1, 0.1, 4.0, 2000)],
              "daemons": [{"name": "mosquitto", "cpu_user_s": 0.05, "cpu_sys_s": 0.05,
                           "wall_s": 2.0, "peak_rss_kib": 1000}]}
    cpu, rss = point_evaluate(parse_gates(("cpu<=9.9%", "rss<=6000KiB")), result)
    assert cpu["figure"] == pytest.approx((10 + 5 + 5) / 2) and not cpu["passed"]
    assert rss["figure"] == 6000 * 1024 and rss["passed"]


def test_a_target_files_gate_line_names_its_source():
    gates = parse_gates((), load_targets(MONT_BLANC))
    line = gate_lines(graph_evaluate(gates[:1], GRAPH, cores=2))[0]
    assert line.startswith("gate cpu<=20% (mont_blanc_rpi3.json resources.cpu[%]): FAILED  "
                           "cpu 25% (of 2 cores")


@pytest.mark.parametrize("args,says", [
    (("--transport", "udp", "--gate", "late<=1%"),
     "--gate: late<=1%: graph runs only"),
    (("--transport", "udp", "--targets", str(MONT_BLANC)),
     "--targets mont_blanc_rpi3.json latency_total.late[%]: late<=1.9%: graph runs only"),
    (("--graph", "mont_blanc", "--transport", "tcp", "--gate", "matched-within=1s"),
     "--gate: matched-within=1s: single streams only"),
    (("--transport", "udp", "--targets", "/nonexistent/t.json"),
     "--targets /nonexistent/t.json: cannot read it"),
])
def test_what_a_run_cannot_measure_is_refused_before_it_starts(fake_env, args, says):
    done = run_mwperf("run", *args, "--duration", "1s", "--no-save", env=fake_env)
    assert done.returncode == 2, done.stderr
    assert says in done.stderr
    assert not list(Path(fake_env["FAKE_AGENT_TRACE"]).glob("*.pid"))  # no agent started


def test_a_missed_target_exits_one_and_is_saved_with_its_source(fake_env, tmp_path: Path):
    file = tmp_path / "targets.json"
    file.write_text(json.dumps({"gates": ["min-samples=1", "p50<=1ns"]}))
    done = run_mwperf("run", "--transport", "udp", "--rate", "100", "--duration", "1s",
                      "--targets", str(file), "--results", str(tmp_path / "r"), env=fake_env)
    assert done.returncode == 1, done.stderr
    assert "gate p50<=1ns (targets.json gates[1]): FAILED  p50 " in done.stdout
    saved = read_saved(next((tmp_path / "r").glob("*/result.json")))
    assert [(g["gate"], g["source"], g["passed"]) for g in saved["gates"]] == [
        ("min-samples=1", "targets.json gates[0]", True),
        ("p50<=1ns", "targets.json gates[1]", False)]
    assert saved["config"]["targets"] == [["min-samples=1", "targets.json gates[0]"],
                                          ["p50<=1ns", "targets.json gates[1]"]]
