"""Nodes sharing an OS process, run with the real agent (graph/processes.py,
crates/mwperf-agent/src/node/process.rs): a talker and a listener in one process (one
middleware session: the in-process path), a second listener in a process of its own, on the
transports with a session to share and on plain sockets.

Ground truth, independent of the nodes' reports: the processes the control plane itself
sampled from /proc while the graph ran (the result's ``resources``: one process for the two
nodes, one for the other, each its own pid), and the talker's own count of what it sent, which
each edge must have received whole (a deep keep-last queue)."""

import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import REAL_AGENT, run_mwperf

PAIR = """nodes:
  - {name: talker, process: robot, publishers: [{topic: /t, rate: 100, payload: 256}]}
  - {name: near, process: robot, subscribers: [{topic: /t}]}
  - {name: far, subscribers: [{topic: /t}]}
"""


@pytest.mark.parametrize("transport", ["udp", "cyclonedds", "fastdds", "zenoh", "iceoryx2"])
def test_two_nodes_in_one_process_and_one_apart_each_get_every_message(
        real_env: dict[str, str], tmp_path: Path, transport: str) -> None:
    graph = tmp_path / "pair.yaml"
    graph.write_text(PAIR)
    out = tmp_path / "result.json"
    done = run_mwperf("run", "--graph", str(graph), "--transport", transport, "--duration",
                      "1s", "--warmup", "200ms", "--depth", "1000", "--no-save", "--json-out",
                      str(out), env=real_env, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["status"] == "complete", result["status_reason"]
    nodes = {n["name"]: n for n in result["nodes"]}
    assert (nodes["talker"].get("process"), nodes["near"].get("process"),
            nodes["far"].get("process")) == ("robot", "robot", None)
    sent = nodes["talker"]["sent"]["/t"]
    assert sent == 100
    for edge in result["edges"]:
        assert edge["received"] == sent and edge["lost"] == 0, edge
    assert {e["to"] for e in result["edges"]} == {"near", "far"}
    # the control plane's own view: two processes, not three
    sampled = {p["name"]: p["pid"] for p in result["resources"]["processes"]}
    assert set(sampled) == {"process robot", "far"}, sampled
    assert len(set(sampled.values())) == 2
    # the summary names the process once, with its nodes (ordered by CPU, which varies)
    busiest = re.search(r"^busiest nodes: (.*)$", done.stdout, re.MULTILINE)
    assert busiest and "process robot (talker, near) " in busiest.group(1), done.stdout


def test_the_agent_refuses_reports_that_do_not_pair_with_the_specs(tmp_path: Path) -> None:
    spec = {"name": "a", "index": 1, "executor": "single", "warmup_ns": 0, "duration_ns": 1,
            "linger_ns": 1, "subscriptions": [{"topic": "/t", "id": 0, "address": "127.0.0.1:0",
                                               "period_ns": 1_000_000}]}
    one, two = tmp_path / "a.json", tmp_path / "b.json"
    one.write_text(json.dumps(spec))
    two.write_text(json.dumps({**spec, "name": "b", "index": 2}))
    base = [str(REAL_AGENT), "node", "--transport", "udp", "--node-spec", str(one),
            "--node-spec", str(two), "--go-file", str(tmp_path / "go")]
    for extra, expected in (
            ([], "--node-json: with 2 --node-spec, one report path per spec"),
            (["--node-json", "x.json"], "--node-json: one per --node-spec, in the same order "
                                        "(2 specs, 1 reports)"),
            (["--node-json", "x", "--node-json", "y", "--count-allocs"],
             "--count-allocs: counts a whole process, not one of its nodes")):
        done = subprocess.run(base + extra, capture_output=True, text=True, timeout=30,
                              check=False)
        assert done.returncode == 2 and expected in done.stderr, (extra, done.stderr)


def test_an_irobot_topology_and_its_debug_listeners_run_as_irobot_runs_them(
        real_env: dict[str, str], tmp_path: Path) -> None:
    """Two graph files, one process each (--processes one): the topology's ten nodes in one,
    the listener file's in another; the listener gets all the topology's node sent on the
    topics it takes."""
    debug = tmp_path / "debug_sierra.json"
    debug.write_text(json.dumps({"nodes": [{"node_name": "debug_listener", "subscribers": [
        {"topic_name": "amazon", "msg_type": "stamped9_float32"},
        {"topic_name": "nile", "msg_type": "stamped4_int32"}]}]}))
    out = tmp_path / "result.json"
    done = run_mwperf("run", "--graph", "sierra_nevada", "--graph", str(debug), "--processes",
                      "one", "--transport", "udp", "--duration", "1s", "--warmup", "200ms",
                      "--depth", "1000", "--no-save", "--json-out", str(out), env=real_env,
                      timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["status"] == "complete", result["status_reason"]
    sent = {t: n["sent"][t] for n in result["nodes"] for t in n["sent"]}
    listened = [e for e in result["edges"] if e["to"] == "debug_listener"]
    assert sorted(e["topic"] for e in listened) == ["amazon", "nile"]
    for edge in result["edges"]:
        assert edge["received"] == sent[edge["topic"]] > 0, edge
    sampled = {p["name"] for p in result["resources"]["processes"]}
    assert sampled == {"process sierra_nevada", "debug_listener"}, sampled
