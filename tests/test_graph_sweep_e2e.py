"""Graph points with the real agent: a scenario sweeping a graph's transport and scale, and a
node's CPU quota throttling it (the kernel's own cgroup counters as ground truth)."""

import json
import textwrap
from pathlib import Path
from typing import Any

from conftest import run_mwperf


def test_a_scenario_sweeps_a_graph_and_counts_each_point_against_its_publishers(
        real_env: dict[str, str], tmp_path: Path) -> None:
    scenario = tmp_path / "graph-sweep.yaml"
    scenario.write_text(textwrap.dedent("""\
        description: Sierra Nevada at one and two copies
        graph: sierra_nevada
        transport: udp
        copies: [1, 2]
        rate_scale: 2
        duration: 1s
        warmup: 200ms
        """))
    done = run_mwperf("run", str(scenario), "--results", str(tmp_path / "results"),
                      env=real_env, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "udp graph sierra_nevada copies=2: complete  worst edge p99" in done.stderr
    sweep = next(p for p in (tmp_path / "results").iterdir() if p.is_dir())
    summary = json.loads((sweep / "summary.json").read_text())
    assert [r["mode"] for r in summary["rows"]] == ["graph", "graph"]
    results = sorted(sweep.glob("points/*/result.json"))
    assert len(results) == 2
    by_copies = {}
    for path in results:
        result = json.loads(path.read_text())
        by_copies[result["config"]["graph"]["copies"]] = result
    for copies, result in by_copies.items():
        assert result["status"] == "complete", result["status_reason"]
        assert result["graph"]["nodes"] == 10 * copies
        for edge in result["edges"]:  # ground truth: the schedule at twice the rate, 1 s
            assert abs(edge["sent"] - 1e9 / edge["period_ns"]) <= 1, edge
            assert edge["received"] == edge["sent"], edge
    # every topic has `copies` publishers and each subscriber node `copies` copies: copies^2
    assert len(by_copies[2]["edges"]) == 4 * len(by_copies[1]["edges"])
    row = summary["rows"][1]
    assert row["count"] == sum(e["received"] for e in by_copies[2]["edges"])
    assert "Graphs (a graph point's row" in (sweep / "summary.md").read_text()


def busy_graph(tmp_path: Path) -> str:
    path = tmp_path / "busy.yaml"
    path.write_text(textwrap.dedent("""\
        name: busy
        nodes:
          - name: sensor
            publishers: [{topic: /data, rate: 100, payload: 64}]
          - name: worker
            subscribers: [{topic: /data, busy_loop: 4ms}]
        """))
    return str(path)


def graph_json(env: dict[str, str], tmp_path: Path, *args: str) -> dict[str, Any]:
    out = tmp_path / "g.json"
    done = run_mwperf("run", "--graph", busy_graph(tmp_path), "--transport", "udp",
                      "--duration", "2s", "--warmup", "300ms", "--no-save", "--json-out",
                      str(out), *args, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def test_a_nodes_cpu_quota_throttles_it_and_only_it(real_env: dict[str, str],
                                                    tmp_path: Path) -> None:
    # the worker needs 40 % of a CPU (4 ms per message at 100 Hz); held to 10 % it is throttled
    # in most 100 ms periods and its messages wait in its queue
    free = graph_json(real_env, tmp_path)
    held = graph_json(real_env, tmp_path, "--cpu-quota", "worker=10%")
    assert free["cpu"] is None
    agents = held["cpu"]["agents"]
    assert agents["worker"]["quota_pct"] == 10.0 and agents["sensor"]["quota_pct"] is None
    throttling = agents["worker"]["throttling"]  # the cgroup's own cpu.stat
    assert throttling["throttled_periods"] >= 0.5 * throttling["periods"], throttling
    edge_free, edge_held = free["edges"][0], held["edges"][0]
    # held: it works off a quarter of its input per second, its queue grows for the whole run
    assert edge_held["latency"]["p99_ns"] > 100_000_000, edge_held
    assert edge_free["latency"]["p99_ns"] < edge_held["latency"]["p99_ns"] / 5, edge_free
    nodes = {n["name"]: n for n in held["nodes"]}
    assert nodes["worker"]["cpu_percent"] < 15, nodes["worker"]  # its CPU, as the kernel counts
    assert nodes["sensor"]["sent"] == {"/data": 200}  # the publisher was not held
