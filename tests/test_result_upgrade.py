"""Schema v3, the upgrade and the stream view (python/mwperf/result/): every golden result
(tests/vectors/results/) upgrades to a valid v3 result, and a stream result's view gives back
exactly its own figures — derived from the v3 flows, not stored beside them."""

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from mwperf.result.json_copy import json_copy
from mwperf.result.stream import CLAIMS, stream_view
from mwperf.result.upgrade import NotAResult, upgrade
from mwperf.schema import validation_error

GOLDEN = Path(__file__).parent / "vectors" / "results"
RESULTS = sorted(p.name for p in GOLDEN.glob("*.json"))
STREAMS = [n for n in RESULTS if json.loads((GOLDEN / n).read_text())["kind"] == "run-result"]
ABSENT = object()


def load(name: str) -> dict[str, Any]:
    return json.loads((GOLDEN / name).read_text())


def differences(old: Any, new: Any, path: str = "$") -> list[str]:
    """Every path where ``new`` is not exactly ``old`` (a key missing on either side counts)."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [d for key in old.keys() | new.keys()
                for d in differences(old.get(key, ABSENT), new.get(key, ABSENT), f"{path}.{key}")]
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [d for i, (a, b) in enumerate(zip(old, new)) for d in differences(a, b, f"{path}[{i}]")]
    same = type(old) is type(new) and old == new
    return [] if same else [f"{path}: {str(old)[:60]} != {str(new)[:60]}"]


@pytest.mark.parametrize("name", RESULTS)
def test_every_golden_upgrades_to_a_valid_v3_result(name: str) -> None:
    old = load(name)
    kept = copy.deepcopy(old)
    new = upgrade(old)
    assert old == kept, "upgrade changed its input"
    assert (new["schema_version"], new["kind"]) == (3, "result")
    assert upgrade(new) == new, "a v3 result upgrades to itself"
    # a stream result with the section a writer will add (step 7): the view's shape validates too
    shown = {**new, "stream": stream_view(new)} if name in STREAMS else new
    assert validation_error(shown, "result") is None


@pytest.mark.parametrize("name", STREAMS)
def test_the_stream_view_of_an_upgraded_result_is_its_own_figures(name: str) -> None:
    old = load(name)
    view = stream_view(upgrade(old))
    assert set(view) <= set(CLAIMS)
    for field in CLAIMS:
        assert differences(old.get(field, ABSENT), view.get(field, ABSENT), field) == []


def test_the_view_is_derived_from_the_flows_not_copied_beside_them() -> None:
    new = upgrade(load("roundtrip.json"))
    new["chains"][0]["end_to_end"]["p50_ns"] += 1
    new["chains"][0]["lost"] += 1
    view = stream_view(new)
    old = load("roundtrip.json")["measurement"]
    assert view["measurement"]["response"]["p50_ns"] == old["response"]["p50_ns"] + 1
    assert view["measurement"]["accounting"]["lost"] == old["accounting"]["lost"] + 1
    pooled = upgrade(load("topics.json"))
    pooled["pools"][0]["end_to_end_sent"]["max_ns"] = 7
    pooled["chains"][2]["received"] = 1
    view = stream_view(pooled)
    assert view["measurement"]["service"]["max_ns"] == 7
    assert view["per_topic"][2]["accounting"]["received"] == 1


def test_a_round_trip_is_its_chain_and_its_edges_have_no_figures() -> None:
    old = load("roundtrip.json")
    new = upgrade(old)
    assert [(e["topic"], e["from"], e["to"]) for e in new["edges"]] == [
        ("ping", "ping", "pong"), ("pong", "pong", "ping")]
    assert all(set(e) == {"topic", "from", "to"} for e in new["edges"])
    (chain,) = new["chains"]
    assert chain["name"] == "rt" and chain["topics"] == ["ping", "pong"]
    assert chain["end_to_end"] == old["measurement"]["response"]
    assert chain["end_to_end_sent"] == old["measurement"]["service"]
    assert "its edges (each direction alone) have none" in new["upgraded_from"]["notes"][0]
    assert [n["name"] for n in new["nodes"]] == ["pong", "ping"]
    assert new["nodes"][1]["discovery"] == old["discovery"]
    for section in ("layers", "restarts", "resilience", "wire", "resources", "link", "gates"):
        assert new[section] == old[section], section


def test_several_subscribers_are_edges_and_their_pool_is_kept_as_pooled() -> None:
    old = load("oneway-3-subscribers.json")
    new = upgrade(old)
    assert [(e["from"], e["to"]) for e in new["edges"]] == [
        ("pub", "sub.0"), ("pub", "sub.1"), ("pub", "sub.2")]
    assert [e["age"] for e in new["edges"]] == [
        s["measurement"]["response"] for s in old["per_subscriber"]]
    (pool,) = new["pools"]
    assert pool["name"] == "all" and pool["of"] == ["sub.0", "sub.1", "sub.2"]
    assert pool["latency"] == old["measurement"]["service"]
    assert [n["name"] for n in new["nodes"]] == ["sub.0", "sub.1", "sub.2", "pub"]


def test_a_service_is_one_call_edge_per_client() -> None:
    old = load("service.json")
    new = upgrade(old)
    assert [(c["name"], c["client"], c["server"]) for c in new["calls"]] == [
        ("client 1", "client", "server"), ("client 2", "client", "server")]
    assert [c["latency"] for c in new["calls"]] == [t["response"] for t in old["per_topic"]]
    assert new["pools"][0]["calls"] == old["measurement"]["calls"]
    assert new["edges"] == [] and new["chains"] == []


def test_a_graph_result_keeps_its_shape_and_has_no_stream_view() -> None:
    old = load("graph-chain-service.json")
    new = upgrade(old)
    for key in ("nodes", "edges", "chains", "calls", "graph", "run", "layers", "daemons"):
        assert new[key] == old[key], key
    assert new["config"] == {**old["config"], "kind": "graph"}
    assert new["warnings"] == [] and "version" not in new
    assert new["upgraded_from"] == {"kind": "graph-result", "version": 1, "notes": []}
    with pytest.raises(ValueError, match="a graph result has no stream view"):
        stream_view(new)


def test_every_section_a_graph_result_may_have_is_kept() -> None:
    """A graph run is saved as its upgrade (graph/measure.py): a section the graph-result schema
    allows and the upgrade does not carry would be lost from every saved graph run."""
    from mwperf.result.upgrade import GRAPH_KEPT
    from mwperf.schema import SCHEMA_PATH
    schema = json.loads(SCHEMA_PATH.read_text())
    allowed = set(schema["$defs"]["graph_result"]["properties"])
    assert allowed - {"kind", "version", "config", "warnings"} == set(GRAPH_KEPT)


def test_a_version_1_run_result_upgrades_as_version_2_does() -> None:
    old = dict(load("roundtrip.json"), schema_version=1)
    new = upgrade(old)
    assert new["upgraded_from"]["version"] == 1
    assert stream_view(new)["measurement"] == old["measurement"]
    # version 1's agent memory was the control plane's (getrusage through fork): not a node's
    assert all("max_rss_kib" not in n and n["cpu_s"] > 0 for n in new["nodes"])
    assert all(n["max_rss_kib"] > 0 for n in upgrade(load("roundtrip.json"))["nodes"])


@pytest.mark.parametrize("document, says", [
    ({"kind": "run-result", "schema_version": 7}, "kind 'run-result' version 7"),
    ({"kind": "agent-report", "schema_version": 2}, "kind 'agent-report' version 2"),
    ({}, "kind None version None"),
    ([], "not a JSON object"),
])
def test_what_is_not_a_result_is_refused_naming_what_it_is(document: Any, says: str) -> None:
    with pytest.raises(NotAResult, match=says):
        upgrade(document)


def test_the_v3_schema_refuses_what_it_does_not_know() -> None:
    new = upgrade(load("roundtrip.json"))
    for where, change in (("chains", {"bogus": 1}), ("edges", {"latency": 5}),
                          ("nodes", {"status": "fine"})):
        broken = copy.deepcopy(new)
        broken[where][0].update(change)
        assert validation_error(broken, "result") is not None, (where, change)
    assert validation_error(dict(new, schema_version=2), "result") is not None
    assert validation_error(dict(new, config={"mode": "roundtrip"}), "result") is not None


def test_with_several_subscribers_and_topics_each_topic_keeps_its_pool() -> None:
    old = load("oneway-3-subscribers-2-topics.json")
    new = upgrade(old)
    assert [(e["topic"], e["to"]) for e in new["edges"]] == [
        ("*", "sub.0"), ("*", "sub.1"), ("*", "sub.2")]
    assert [(p["name"], p.get("topic_index")) for p in new["pools"]] == [
        ("all", None), ("topic 0", 0), ("topic 1", 1)]
    assert [p["age"] for p in new["pools"][1:]] == [t["response"] for t in old["per_topic"]]


def test_a_run_that_measured_nothing_gives_no_measurement_back() -> None:
    old = load("roundtrip.json")
    old.update(measurement=None, discovery=None, status="failed",
               agents=[a for a in old["agents"] if a["role"] == "pong"])
    new = upgrade(old)
    assert set(new["chains"][0]) == {"name", "topics"}
    assert validation_error(new, "result") is None
    view = stream_view(new)
    assert view["measurement"] is None and view["discovery"] is None
    assert view["agents"] == old["agents"]
    assert [n["name"] for n in new["nodes"]] == ["pong", "ping"]  # the sender, reportless


def test_a_subscriber_without_a_report_keeps_every_subscriber_in_place() -> None:
    old = load("oneway-3-subscribers.json")
    gone = old["agents"].pop(1)
    assert gone["role"] == "sub"
    old["per_subscriber"][1].update(status="failed", status_reason="sub.1: no report",
                                    measurement=None)
    new = upgrade(old)
    assert validation_error(new, "result") is None
    assert "sent" not in new["edges"][1] and new["edges"][1]["to"] == "sub.1"
    view = stream_view(new)
    for field in CLAIMS:
        assert differences(old.get(field, ABSENT), view.get(field, ABSENT), field) == []


def test_a_graph_results_profile_and_warnings_are_kept() -> None:
    old = json.loads((GOLDEN / "graph-chain-service.json").read_text())
    profile = {"tool": "perf", "frequency_hz": 299, "processes": [
        {"name": "sensor", "pid": 7, "samples": 3, "svg": "profile/sensor.svg", "top": []}]}
    warning = {"code": "profile-failed", "message": "perf stopped", "hint": None}
    new = upgrade({**old, "profile": profile, "warnings": [warning]})
    assert new["profile"] == profile and new["warnings"] == [warning]
    assert validation_error(new, "result") is None


def test_json_copy_is_equal_and_shares_no_container() -> None:
    document = {"a": [1, {"b": [2.5, None, "x"]}], "t": ({"c": True},), "n": 3}
    copied = json_copy(document)
    assert copied == document
    assert copied is not document and copied["a"] is not document["a"]
    assert copied["a"][1] is not document["a"][1] and copied["t"][0] is not document["t"][0]
    copied["a"][1]["b"].append(4)
    assert document["a"][1]["b"] == [2.5, None, "x"]
