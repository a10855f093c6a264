"""A stream point's flows in the graph tables (one-path plan, step 5, the catalogue half): its
result read as v3 gives its nodes, edges, chains and calls rows under a graph_runs row of its
kind; the graph runs' own readers (the report's graph section, compare, the runs listing) see
graph runs only; a version-12 catalogue gains the column and its points' flows."""

from pathlib import Path

import duckdb
from test_store_support import catalogue_rows, measure_point

from mwperf import store
from mwperf.store import schema


def test_a_round_trip_point_is_a_chain_whose_figures_are_the_points(
        fake_env: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "results"
    folder = measure_point(root)
    point_id = folder.name
    (kind, name), = catalogue_rows(root, "SELECT kind, graph_name FROM graph_runs "
                                         "WHERE graph_id = ?", [point_id])
    assert (kind, name) == ("roundtrip", "roundtrip")
    chain = catalogue_rows(root, "SELECT name, e2e_count, e2e_p50_ns, e2e_p99_ns, e2e_max_ns "
                                 "FROM graph_chains WHERE graph_id = ?", [point_id])
    point = catalogue_rows(root, "SELECT latency_count, latency_p50_ns, latency_p99_ns, "
                                 "latency_max_ns "
                                 "FROM points WHERE point_id = ?", [point_id])
    assert chain == [("rt", *point[0])]  # the same figures, one place each
    nodes = catalogue_rows(root, "SELECT name FROM graph_nodes WHERE graph_id = ? ORDER BY 1",
                           [point_id])
    assert nodes == [("ping",), ("pong",)]
    # the graph runs' readers do not count it as a graph run
    assert catalogue_rows(root, "SELECT count(*) FROM graph_runs WHERE kind = 'graph'") == [(0,)]
    done = store.ingest_point(folder)  # again: replaced, not doubled
    assert done is None
    assert catalogue_rows(root, "SELECT count(*) FROM graph_chains WHERE graph_id = ?",
                          [point_id]) == [(1,)]


def test_a_version_12_catalogue_gains_the_flows_of_its_points(fake_env: dict[str, str],
                                                              tmp_path: Path) -> None:
    root = tmp_path / "results"
    first = measure_point(root)
    with duckdb.connect(str(root / "catalogue.duckdb")) as con:
        for table in ("graph_edges", "graph_chains", "graph_nodes", "graph_calls", "graph_runs"):
            con.execute(f"DELETE FROM {table}")
        con.execute("ALTER TABLE graph_runs DROP COLUMN kind")
        con.execute("UPDATE schema_version SET version = 12")
    second = measure_point(root)  # any write migrates; the older point's flows are filled in
    assert catalogue_rows(root, "SELECT version FROM schema_version") == [(schema.SCHEMA_VERSION,)]
    assert catalogue_rows(root, "SELECT graph_id, kind FROM graph_runs ORDER BY 1") == sorted(
        [(first.name, "roundtrip"), (second.name, "roundtrip")])
    assert catalogue_rows(root, "SELECT count(*) FROM graph_chains") == [(2,)]
