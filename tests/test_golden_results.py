"""The golden results (tests/vectors/results/: real runs of each run kind, saved as mwperf wrote
them) stay readable: each validates against the schema, and each is shown with its own figures
(`mwperf show` for a stream result; the graph table a graph run prints for a graph result)."""

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import run_mwperf
from mwperf.show.graph import render as render_graph
from mwperf.schema import validation_error

GOLDEN = Path(__file__).parent / "vectors" / "results"
STREAMS = sorted(p.name for p in GOLDEN.glob("*.json")
                 if json.loads(p.read_text())["kind"] == "run-result")
GRAPHS = sorted(p.name for p in GOLDEN.glob("*.json")
                if json.loads(p.read_text())["kind"] == "graph-result")
KINDS = {"roundtrip.json": "roundtrip", "oneway-3-subscribers.json": "oneway",
         "oneway-3-subscribers-2-topics.json": "oneway",
         "service.json": "service", "throughput.json": "throughput", "topics.json": "roundtrip",
         "replay.json": "roundtrip"}
"""each stream golden and the run kind it must be (the step's list: one of each)"""


def load(name: str) -> dict[str, Any]:
    return json.loads((GOLDEN / name).read_text())


def test_one_golden_of_each_run_kind_each_named_in_the_readme() -> None:
    assert STREAMS == sorted(KINDS) and GRAPHS == ["graph-chain-service.json"]
    for name, kind in KINDS.items():
        assert load(name)["config"]["mode"] == kind, name
    config = {name: load(name)["config"] for name in STREAMS}
    assert config["topics.json"]["topics"] == 3 and config["replay.json"]["replay"]
    assert len(load("oneway-3-subscribers.json")["per_subscriber"]) == 3
    both = load("oneway-3-subscribers-2-topics.json")
    assert len(both["per_subscriber"]) == 3 and len(both["per_topic"]) == 2
    readme = (GOLDEN / "README.md").read_text()
    for name in (*STREAMS, *GRAPHS):
        assert re.search(rf"^\| `{re.escape(name)}` \|.*\| `mwperf run .*` \|$", readme, re.M), \
            f"README.md gives no command for {name}"


def test_the_goldens_carry_the_sections_their_run_kinds_can_have() -> None:
    sections = {name: {k for k in ("layers", "restarts", "resilience", "wire", "resources")
                       if load(name).get(k)} for name in STREAMS}
    every = {"layers", "restarts", "resilience", "wire", "resources"}
    for name in ("roundtrip.json", "topics.json", "replay.json"):
        assert sections[name] == every, name
    assert sections["oneway-3-subscribers.json"] == every - {"restarts"}
    assert sections["throughput.json"] == every - {"layers", "restarts"}
    assert sections["service.json"] == {"resilience", "resources"}
    graph = load("graph-chain-service.json")
    assert graph["chains"] and graph["calls"] and graph["layers"]["method"] == "ld_preload"


@pytest.mark.parametrize("name", [*STREAMS, *GRAPHS])
def test_each_golden_validates(name: str) -> None:
    result = load(name)
    assert validation_error(result, result["kind"]) is None
    for agent in result.get("agents", []):
        assert validation_error(agent, "agent-report") is None


@pytest.mark.parametrize("name", STREAMS)
def test_mwperf_show_prints_each_stream_golden_with_its_figures(name: str, fake_env: dict[str, str]
                                                                ) -> None:
    result = load(name)
    done = run_mwperf("show", str(GOLDEN / name), env=fake_env)
    assert done.returncode == 0, done.stderr
    shown = done.stdout
    acc = result["measurement"]["accounting"]
    assert (f"accounting    sent {acc['sent']}  received {acc['received']}  lost {acc['lost']} "
            in shown)
    row = shown.splitlines()[1].split()
    assert row[0] == result["config"]["transport"] and row[1] == result["config"]["mode"]
    assert str(result["measurement"]["response"]["count"]) in row
    if result.get("layers"):
        assert f"{result['layers']['split']:,} of {result['layers']['messages']:,} measured" in shown
    if result.get("wire"):
        assert "\nwire          a→b " in shown
    outage = (result.get("resilience") or {}).get("outage")
    if outage:
        assert f"outage      300 ms: sent {outage['sent']}  lost {outage['lost']}" in shown
    for topic in result.get("per_topic") or []:  # a service's clients are its topics
        line = (rf"^{topic['name']} +answered {topic['calls']['answered']} " if topic.get("calls")
                else rf"^topic {topic['topic']} .*count {topic['response']['count']} ")
        assert re.search(line, shown, re.M), topic["name"]
    for sub in result.get("per_subscriber") or []:
        assert re.search(rf"^subscriber {sub['subscriber']}  count "
                         rf"{sub['measurement']['response']['count']} .*\({sub['name']}, ",
                         shown, re.M)
    if result["measurement"].get("calls"):
        assert f"calls         answered {result['measurement']['calls']['answered']} " in shown


def test_the_graph_golden_renders_every_edge_chain_and_call() -> None:
    result = load("graph-chain-service.json")
    shown = render_graph(result)
    for edge in result["edges"]:
        assert re.search(rf"^{re.escape(edge['topic'])} {edge['from']} -> {edge['to']} ", shown,
                         re.M), edge
    for chain in result["chains"]:
        assert (f"chain {chain['name']}: end to end" in shown
                and f"({chain['end_to_end']['count']} messages" in shown)
    for call in result["calls"]:
        assert f"{call['service']} {call['client']} -> {call['server']} " in shown
