"""Graph runs in the catalogue: a saved graph-result becomes a graph_runs row with its edges,
chains and nodes (store/graph_ingest.py), its run in ``runs`` (kind graph alone; a sweep's
point otherwise); an older catalogue gains the graph tables; a rebuild finds graph folders alone
and in sweeps; a catalogue problem never loses the saved folder."""

import json
import re
from pathlib import Path

import duckdb
import pytest
from conftest import run_mwperf
from graph_support import FIXTURE_ID, graph_result, graph_sweep, save_graph
from test_store_support import catalogue_rows

from mwperf import store
from mwperf.store import schema
from mwperf.store.catalogue import connect
from mwperf.store.graph_ingest import ingest_graph
from mwperf.store.graph_tables import GRAPH_TABLES
from mwperf.store.record import catalogue_graph


def test_a_graph_run_is_catalogued_with_its_edges_chains_and_nodes(tmp_path: Path) -> None:
    result = graph_result()
    folder = save_graph(tmp_path / FIXTURE_ID, result)
    ingest_graph(folder)
    run = catalogue_rows(tmp_path, "SELECT run_id, kind, scenario, status, folder FROM runs")
    assert run == [(FIXTURE_ID, "graph", None, "complete", FIXTURE_ID)]
    row = catalogue_rows(tmp_path, "SELECT graph_id, run_id, graph_name, transport, nodes, "
                         "topics, edges, chains, baseline, copies, rate_scale, discovery_ns, "
                         "edges_lost, finished_at > started_at FROM graph_runs")
    assert row == [(FIXTURE_ID, FIXTURE_ID, "mobile-robot", "cyclonedds", 11, 8, 8, 1,
                    "chain:scan_to_wheels", 1, 1.0, result["run"]["discovery_ns"], 0, True)]
    edges = catalogue_rows(tmp_path, "SELECT topic, from_node, to_node, period_ns, sent, "
                           "received, lost, latency_p99_ns, p99_share, late, too_late "
                           "FROM graph_edges ORDER BY edge")
    assert len(edges) == 8
    for got, edge in zip(edges, result["edges"]):
        assert got == (edge["topic"], edge["from"], edge["to"], edge["period_ns"], edge["sent"],
                       edge["received"], edge["lost"], edge["latency"]["p99_ns"],
                       pytest.approx(edge["latency"]["p99_ns"] / edge["period_ns"]),
                       edge["late"], edge["too_late"])
    # the baseline's edges have their figures alone and in the graph; the others none
    alone = {(b["topic"], b["from"]): b for b in result["baseline"]["edges"]}
    for topic, source, alone_p99, in_graph_p99 in catalogue_rows(
            tmp_path, "SELECT topic, from_node, alone_p99_ns, in_graph_p99_ns FROM graph_edges"):
        base = alone.get((topic, source))
        assert (alone_p99, in_graph_p99) == ((base["alone"]["p99_ns"], base["in_graph"]["p99_ns"])
                                             if base else (None, None))
    chain = result["chains"][0]
    [(name, topics, e2e_p99, over, hops, alone_p99)] = catalogue_rows(
        tmp_path, "SELECT name, topics, e2e_p99_ns, over_deadline, hops, alone_p99_ns "
        "FROM graph_chains")
    assert (name, topics, e2e_p99, over) == ("scan_to_wheels", " -> ".join(chain["topics"]),
                                             chain["end_to_end"]["p99_ns"], 0)
    assert json.loads(hops) == chain["hops"]
    assert alone_p99 == result["baseline"]["chains"][0]["alone"]["p99_ns"]
    nodes = catalogue_rows(tmp_path, "SELECT name, status, cpu_percent, max_rss_kib FROM "
                           "graph_nodes ORDER BY name")
    assert nodes == sorted((n["name"], n["status"], n["cpu_percent"], n["max_rss_kib"])
                           for n in result["nodes"])


def test_ingesting_again_replaces_the_rows(tmp_path: Path) -> None:
    folder = save_graph(tmp_path / FIXTURE_ID, graph_result())
    ingest_graph(folder)
    ingest_graph(folder, graph_result(status="partial", status_reason="stopped"))
    assert catalogue_rows(tmp_path, "SELECT count(*) FROM graph_edges") == [(8,)]
    assert catalogue_rows(tmp_path, "SELECT status FROM graph_runs") == [("partial",)]
    assert catalogue_rows(tmp_path, "SELECT status FROM runs") == [("partial",)]


def test_a_sweeps_graph_points_make_one_sweep_run(tmp_path: Path) -> None:
    name = "20261126T070000Z-graphs-ab12"
    sweep = graph_sweep(tmp_path, name, ["g1", "g2"])
    for point in ("g1", "g2"):
        ingest_graph(sweep / "points" / point)
    assert catalogue_rows(tmp_path, "SELECT run_id, kind, scenario, status, started_at < "
                          "ended_at FROM runs") == [(name, "sweep", "graphs", "partial", True)]
    assert catalogue_rows(tmp_path, "SELECT graph_id, run_id, point_index, repetition, folder, "
                          "scenario FROM graph_runs ORDER BY graph_id") == [
        ("g1", name, 1, 1, f"{name}/points/g1", "graphs"),
        ("g2", name, 2, 1, f"{name}/points/g2", "graphs")]
    listed = run_mwperf("results", "--results", str(tmp_path))
    assert listed.returncode == 0, listed.stderr
    assert re.search(rf"{name}\s.*\ssweep\s+graphs\s+2\s+partial", listed.stdout), listed.stdout


def test_rebuild_finds_graph_runs_alone_and_in_sweeps(tmp_path: Path) -> None:
    save_graph(tmp_path / FIXTURE_ID, graph_result())
    graph_sweep(tmp_path, "20261126T070000Z-graphs-ab12", ["g1", "g2"])
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "graph-result.json").write_text("{")
    report = store.rebuild(tmp_path)
    assert (report.points, report.graphs) == (0, 3)
    assert report.runs == {FIXTURE_ID, "20261126T070000Z-graphs-ab12"}
    assert [folder.name for folder, _ in report.skipped] == ["broken"]
    assert catalogue_rows(tmp_path, "SELECT count(*) FROM graph_edges") == [(24,)]
    done = run_mwperf("results", "--rebuild", "--results", str(tmp_path))
    assert "2 runs, 0 points, 3 graph runs" in done.stderr, done.stderr


def test_a_version_6_catalogue_gains_the_graph_tables_empty(tmp_path: Path) -> None:
    with connect(tmp_path, views=False):
        pass  # a new catalogue, then made a version 6 one: no graph tables
    with duckdb.connect(str(tmp_path / "catalogue.duckdb")) as con:
        for table in GRAPH_TABLES:
            con.execute(f"DROP TABLE {table}")
        con.execute("UPDATE schema_version SET version = 6")
    with connect(tmp_path, views=False) as con:
        assert schema.version_of(con) == schema.SCHEMA_VERSION >= 7
        for table in GRAPH_TABLES:
            assert con.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
    ingest_graph(save_graph(tmp_path / FIXTURE_ID, graph_result()))
    assert catalogue_rows(tmp_path, "SELECT count(*) FROM graph_nodes") == [(11,)]


def test_a_catalogue_problem_keeps_the_saved_graph_run(tmp_path: Path) -> None:
    folder = save_graph(tmp_path / FIXTURE_ID, graph_result())
    with connect(tmp_path, views=False):
        pass
    with duckdb.connect(str(tmp_path / "catalogue.duckdb")) as con:
        con.execute("UPDATE schema_version SET version = 99")
    said: list[str] = []
    catalogue_graph(folder, graph_result(), notify=said.append)
    assert said and "is saved but not in the catalogue" in said[0] and "version 99" in said[0]
    assert (folder / "graph-result.json").is_file()
    (tmp_path / "catalogue.duckdb").write_bytes(b"not a database")
    said.clear()
    catalogue_graph(folder, graph_result(), notify=said.append)
    assert "rebuilding it from the point folders now" in said[0]
    assert catalogue_rows(tmp_path, "SELECT graph_id FROM graph_runs") == [(FIXTURE_ID,)]
