"""A graph run end to end in the unit tier (one-path plan, step 2): the fake agent speaks
``node`` (tests/fakes/fake_node.py: its counts follow from the graph's periods), so
graph/run.py's planning, start, go file, collection, merge and saving are tested without a
middleware: every edge delivers what its publisher sent, a node that fails makes the run partial
naming it, a node's losses reach its edges and the graph's gates, and a peak search walks
graph trials."""

import json
from pathlib import Path

from conftest import run_mwperf
from mwperf.graph.builtin import load_graph
from mwperf.schema import validation_error


def test_every_edge_of_a_built_in_graph_delivers_what_was_sent(fake_env, tmp_path: Path):
    done = run_mwperf("run", "--graph", "sierra_nevada", "--transport", "udp", "--duration",
                      "2s", "--results", str(tmp_path), env=fake_env)
    assert done.returncode == 0, done.stderr
    result = json.loads(next(tmp_path.glob("*/result.json")).read_text())
    graph = load_graph("sierra_nevada")
    # saved as every run is: the v3 document, no graph-result.json (result/save.py)
    assert (result["kind"], result["schema_version"], result["config"]["kind"]) == (
        "result", 3, "graph")
    assert validation_error(result, "result") is None
    assert not list(tmp_path.glob("*/graph-result.json"))
    assert result["status"] == "complete"
    assert len(result["edges"]) == sum(len(n.subscribers) for n in graph.nodes)
    for edge in result["edges"]:
        assert edge["received"] == edge["sent"] == 2_000_000_000 // edge["period_ns"], edge
        assert edge["lost"] == 0
    assert {n["name"] for n in result["nodes"]} == {n.name for n in graph.nodes}
    assert (tmp_path / result["run_id"] / "graph.html").is_file()
    # shown from its folder as the run printed it, and catalogued as a graph run
    folder = tmp_path / result["run_id"]
    shown = run_mwperf("show", str(folder), env=fake_env)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.rstrip().endswith(f"from {folder / 'result.json'}")
    assert done.stdout.split("saved in")[0] in shown.stdout
    listed = run_mwperf("show", result["run_id"], "--results", str(tmp_path), env=fake_env)
    assert listed.returncode == 0 and "sierra_nevada" in listed.stdout, listed.stderr


def test_a_failed_node_makes_the_run_partial_and_is_named(fake_env):
    done = run_mwperf("run", "--graph", "sierra_nevada", "--transport", "udp", "--duration",
                      "1s", "--no-save", "--json",
                      env={**fake_env, "FAKE_AGENT": "node-montreal:fail"})
    result = json.loads(done.stdout)
    assert done.returncode == 3 and result["status"] == "partial", done.stderr
    assert result["kind"] == "result" and validation_error(result, "result") is None
    assert result["status_reason"] == "node 'montreal' failed: peer unreachable"
    montreal = next(n for n in result["nodes"] if n["name"] == "montreal")
    assert montreal["status"] == "failed" and "peer unreachable" in montreal["status_reason"]


def test_a_nodes_losses_reach_its_edges_and_the_gates(fake_env):
    done = run_mwperf("run", "--graph", "sierra_nevada", "--transport", "udp", "--duration",
                      "1s", "--gate", "lost<=0", "--no-save", "--json",
                      env={**fake_env, "FAKE_AGENT": "node-lyon:lost=3"})
    result = json.loads(done.stdout)
    assert done.returncode == 1, done.stderr  # the gate failed
    into_lyon = [e for e in result["edges"] if e["to"] == "lyon"]
    assert into_lyon and all(e["lost"] == 3 for e in into_lyon)
    assert sum(e["lost"] for e in result["edges"]) == 3 * len(into_lyon)
    (gate,) = result["gates"]
    assert gate["figure"] == 3 * len(into_lyon) and not gate["passed"]


def test_a_peak_search_walks_graph_trials(fake_env, tmp_path: Path):
    done = run_mwperf("run", "--graph", "sierra_nevada", "--transport", "udp", "--duration",
                      "1s", "--peak-search", "--peak-range", "0.5..2", "--results",
                      str(tmp_path), env=fake_env)
    peak = json.loads(next(tmp_path.glob("*-peak-sierra_nevada-*/peak.json")).read_text())
    trials = peak["walks"][0]["trials"]
    assert [t["rate"] for t in trials] == [0.5, 2.0]  # the fake keeps every rate
    assert peak["walks"][0]["verdict"].startswith("above the range")
    assert done.returncode == 1  # no peak inside the range
    for trial in trials:
        saved = json.loads((tmp_path / trial["run_id"] / "result.json").read_text())
        assert saved["config"]["graph"]["rate_scale"] == trial["rate"]


def test_min_samples_stretches_every_node_to_n_periods_of_the_slowest_topic(fake_env,
                                                                            tmp_path: Path):
    graph = load_graph("sierra_nevada")
    longest = max(p.period_ns for n in graph.nodes for p in n.publishers)
    done = run_mwperf("run", "--graph", "sierra_nevada", "--transport", "udp", "--duration",
                      "1s", "--min-samples", "30", "--results", str(tmp_path), env=fake_env)
    assert done.returncode == 0, done.stderr
    result = json.loads(next(tmp_path.glob("*/result.json")).read_text())
    measure_ns = 30 * longest
    assert measure_ns > 1_000_000_000  # the slowest topic needs longer than the duration
    assert (result["config"]["min_samples"], result["config"]["measure_ns"]) == (30, measure_ns)
    counts = [edge["received"] for edge in result["edges"]]
    assert counts == [measure_ns // edge["period_ns"] for edge in result["edges"]]
    assert min(counts) == 30  # the slowest topic's edges: exactly N, the rest more


def test_min_samples_is_refused_with_a_publisher_that_is_not_paced(fake_env, tmp_path: Path):
    graph = tmp_path / "g.yaml"
    graph.write_text("name: flood\nnodes:\n  - name: a\n    publishers: [{topic: /f, rate: max, "
                     "payload: 64}]\n  - name: b\n    subscribers: [{topic: /f}]\n")
    done = run_mwperf("run", "--graph", str(graph), "--transport", "udp", "--min-samples", "10",
                      "--no-save", env=fake_env)
    assert done.returncode == 2
    assert "--min-samples: not with a publisher that is not paced (a /f: rate: max" in done.stderr
