"""`mwperf compare` of graph runs (one-path plan, step 8) in the unit tier: the fake agent's
nodes (tests/fakes/fake_node.py) run a built-in graph twice; the runs match by graph and
settings, every edge and chain gets its rows, an injected loss on one node's edges is a
regression of exactly those edges, and a graph NEW ran differently is not compared."""

import json
from pathlib import Path

import pytest
from conftest import run_mwperf

RUN = ("run", "--graph", "sierra_nevada", "--transport", "udp", "--duration", "1s")


def graph_run(env: dict[str, str], results: Path, *extra: str) -> str:
    """Run the graph into ``results``; the new graph run's id."""
    before = {p.parent.name for p in results.glob("*/result.json")}
    done = run_mwperf(*RUN, *extra, "--results", str(results), env=env)
    assert done.returncode == 0, done.stderr
    (made,) = {p.parent.name for p in results.glob("*/result.json")} - before
    return json.loads((results / made / "result.json").read_text())["run_id"]


def test_graph_runs_are_compared_edge_by_edge_and_a_nodes_loss_is_a_regression(
        fake_env: dict[str, str], tmp_path: Path) -> None:
    base = graph_run(fake_env, tmp_path)
    new = graph_run({**fake_env, "FAKE_AGENT": "node-lyon:lost=20"}, tmp_path)
    done = run_mwperf("compare", base, new, "--results", str(tmp_path), "--format", "json",
                      env=fake_env)
    assert done.returncode == 1, done.stderr  # a regression
    document = json.loads(done.stdout)
    rows = document["rows"]
    result = json.loads(next(p for p in tmp_path.glob(f"{new}/result.json")).read_text())
    edges = [f"{e['topic']} {e['from']} -> {e['to']}" for e in result["edges"]]
    label = "graph sierra_nevada over udp"
    for metric in ("edge.p50", "edge.p99", "edge.max", "edge.loss"):
        assert sorted(r["config"] for r in rows if r["metric"] == metric) == sorted(
            f"{label}: edge {e}" for e in edges)
    lossy = {r["config"] for r in rows if r["metric"] == "edge.loss"
             and r["verdict"] == "regression"}
    assert lossy == {f"{label}: edge {e['topic']} {e['from']} -> {e['to']}"
                     for e in result["edges"] if e["to"] == "lyon"}
    assert all(r["method"] == "two-proportion z-test on lost/sent"
               for r in rows if r["metric"] == "edge.loss")
    # the latencies are the fake's own, equal on both sides: within budget
    assert {r["verdict"] for r in rows if r["metric"] == "edge.p99"} == {"ok"}


def test_a_graph_run_differently_is_not_compared_and_says_so(fake_env: dict[str, str],
                                                             tmp_path: Path) -> None:
    base = graph_run(fake_env, tmp_path)
    new = graph_run(fake_env, tmp_path, "--depth", "7")
    done = run_mwperf("compare", base, new, "--results", str(tmp_path), env=fake_env)
    assert done.returncode == 2
    assert "a graph run: the graph, transport, link, QoS" in done.stderr


def test_graph_budgets_are_parsed_and_bad_ones_named() -> None:
    from mwperf.compare.budget import from_flags
    from mwperf.errors import UsageError

    found = from_flags(("edge.p99=+2ms", "chain.p50=+10%", "edge.loss=+1pp"))
    assert found["edge.p99"].absolute == 2_000_000 and found["chain.p50"].relative == 0.1
    assert found["edge.loss"].absolute == 1.0
    with pytest.raises(UsageError, match="percentage points"):
        from_flags(("chain.p99=+1pp",))
    with pytest.raises(UsageError, match="for graph runs edge.p50"):
        from_flags(("edges.p99=+1%",))
