"""The readers of step 6 (docs/one-path-plan.md) read every result through result/load.py: a
sweep's summary digest and progress line, the resume repair, the RUN paths of report and
compare (store/sources.py) and the report's data (report/data.py). Each golden result
(tests/vectors/results/, real runs as mwperf wrote them), read by each of them, gives its own
figures: the stream goldens' p50/p99/loss and histograms as their v2 measurement states them,
the graph golden's worst edge and chains as its edges and chains state them."""

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from mwperf.durations import format_ns
from mwperf.report.data import load_runs
from mwperf.result.load import as_stream, load_result
from mwperf.scenario.digest import digest
from mwperf.scenario.manifest import Entry, Manifest
from mwperf.scenario.repair import repair
from mwperf.scenario.result_line import result_line
from mwperf.store.catalogue import connect
from mwperf.store.layout import GRAPH_RESULT_NAME, RESULT_NAME
from mwperf.store.sources import staged

GOLDEN = Path(__file__).parent / "vectors" / "results"
STREAMS = sorted(p.name for p in GOLDEN.glob("*.json")
                 if json.loads(p.read_text())["kind"] == "run-result")
GRAPHS = sorted(p.name for p in GOLDEN.glob("*.json")
                if json.loads(p.read_text())["kind"] == "graph-result")


def golden(name: str) -> dict[str, Any]:
    return json.loads((GOLDEN / name).read_text())


def loss_pct(accounting: dict[str, Any]) -> float | None:
    return 100 * accounting["lost"] / accounting["sent"] if accounting["sent"] else None


def worst_edge_p99(result: dict[str, Any]) -> int:
    """The p99 of the edge with the largest p99 as a share of its period, from the edges."""
    measured = [e for e in result["edges"] if e.get("latency") and e.get("period_ns")]
    return max(measured, key=lambda e: e["latency"]["p99_ns"] / e["period_ns"])["latency"][
        "p99_ns"]


def test_there_are_goldens_to_read() -> None:
    assert len(STREAMS) == 7 and GRAPHS == ["graph-chain-service.json"]


@pytest.mark.parametrize("name", STREAMS)
def test_the_digest_and_line_of_a_stream_golden_are_its_own_figures(name: str) -> None:
    old = golden(name)
    read = as_stream(load_result(GOLDEN / name))
    kept = digest(read, "points/p")
    response, accounting = old["measurement"]["response"], old["measurement"]["accounting"]
    assert (kept.row.p50_ns, kept.row.p99_ns, kept.row.loss_pct) == (
        response["p50_ns"], response["p99_ns"], loss_pct(accounting))
    assert [(t["response"]["p50_ns"], t["accounting"]["lost"]) for t in kept.per_topic] == [
        (t["response"]["p50_ns"], t["accounting"]["lost"]) for t in old.get("per_topic") or []]
    assert [s["response"]["p99_ns"] for s in kept.per_subscriber] == [
        s["measurement"]["response"]["p99_ns"] for s in old.get("per_subscriber") or []]
    assert kept.warnings == old["warnings"] and kept.graph == []
    line = result_line(Entry(1, "the point", "h", 1, "complete"), read)
    assert f"p50 {format_ns(response['p50_ns'])}  p99 {format_ns(response['p99_ns'])}" in line
    assert ("delivered " in line) == (old["config"]["mode"] == "throughput")


@pytest.mark.parametrize("name", GRAPHS)
def test_the_digest_and_line_of_a_graph_golden_are_its_edges_and_chains(name: str) -> None:
    old = golden(name)
    read = as_stream(load_result(GOLDEN / name))
    kept = digest(read, "points/g")
    assert kept.row.mode == "graph" and kept.row.payload == old["graph"]["name"]
    assert kept.row.p99_ns == worst_edge_p99(old)
    assert [line.split(":")[0] for line in kept.graph if line.startswith("chain ")] == [
        f"chain {c['name']}" for c in old["chains"]]
    line = result_line(Entry(1, "the graph", "h", 1, "complete"), read)
    assert f"worst edge p99 {format_ns(worst_edge_p99(old))}" in line and " p50 " not in line


@pytest.mark.parametrize("name", [*STREAMS, *GRAPHS])
def test_a_golden_file_given_as_a_run_is_reported_with_its_own_figures(
        name: str, tmp_path: Path) -> None:
    old = golden(name)
    with staged(tmp_path, [str(GOLDEN / name)]) as (root, names):
        (run,) = load_runs(root, names, messages=False)
    if old["kind"] == "graph-result":
        assert run.points == [] and len(run.graphs) == 1
        assert sorted(e["topic"] for e in run.graphs[0].edges) == sorted(
            e["topic"] for e in old["edges"])
        return
    (point,) = run.points
    assert point.histogram == [(v, c) for v, c in old["measurement"]["response"]["histogram"]
                               if c]
    assert sorted(point.processes) == sorted({a["role"] for a in old["agents"]})
    assert point.daemons == old.get("daemons", [])
    assert [t["histogram"] for t in point.topics][1:] == [
        [(v, c) for v, c in t["response"]["histogram"] if c] for t in old["per_topic"]][1:]


def test_resume_catalogues_a_saved_stream_point_and_graph_point(tmp_path: Path) -> None:
    """What the repair of a killed sweep catalogues: each kept point by what its result is (a
    stream kind's as a point, an old graph run's graph-result.json as a graph run)."""
    sweep = tmp_path / "20261129T000000Z-mixed-ab12"
    saved = {"points/s": ("roundtrip.json", RESULT_NAME),
             "points/g": ("graph-chain-service.json", GRAPH_RESULT_NAME)}
    for folder, (name, file_name) in saved.items():
        (sweep / folder).mkdir(parents=True)
        shutil.copy(GOLDEN / name, sweep / folder / file_name)
    manifest = Manifest(sweep, "mixed", "", False, [
        Entry(index, folder, "h", 1, "complete", None, folder)
        for index, folder in enumerate(saved, start=1)], "2026-11-29T00:00:00Z")
    manifest.save()
    said = io.StringIO()
    repair(manifest, said)
    assert said.getvalue().count("cataloguing ") == 2
    with connect(tmp_path, read_only=True, views=False) as con:
        points = con.execute("SELECT point_id, point_index, latency_p50_ns FROM points").fetchall()
        graphs = con.execute("SELECT graph_id, point_index FROM graph_runs WHERE kind = 'graph'"
                             ).fetchall()
    stream, graph = golden("roundtrip.json"), golden("graph-chain-service.json")
    assert points == [(stream["run_id"], 1, stream["measurement"]["response"]["p50_ns"])]
    assert graphs == [(graph["run_id"], 2)]
