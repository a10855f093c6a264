"""Ingesting one saved graph run folder (``graph-result.json``) into the catalogue, atomically:
its ``graph_runs`` row, its edges, call edges, chains and nodes, and its run in ``runs`` (kind ``graph``
when it ran alone; its sweep, kind ``sweep``, when it is a sweep's point) in one transaction.
A graph run ingested again replaces its rows."""

from pathlib import Path
from typing import Any

import duckdb

from . import graph_rows, rows
from .catalogue import connect
from .duckerr import ctrl_c_stops
from .graph_tables import GRAPH_TABLES
from .flows import insert
from .ingest import read_result, refresh_run, transaction
from .layout import GRAPH_RESULT_NAME, Placement, place


def ingest_graph(folder: Path, result: dict[str, Any] | None = None, index: int | None = None,
                 repetition: int | None = None) -> None:
    """Catalogue the saved graph run folder ``folder`` (its graph-result.json unless
    ``result``); ``index``/``repetition``: its place in a sweep when known (else the sweep's
    manifest says, once it lists the point)."""
    result = result if result is not None else load_graph_result(folder)
    placement = place(folder)
    with ctrl_c_stops(), connect(placement.root, views=False) as con:
        store_graph(con, placement, folder, result, index, repetition)


def load_graph_result(folder: Path) -> dict[str, Any]:
    """The graph-result.json of ``folder``."""
    return read_result(folder / GRAPH_RESULT_NAME, "graph-result")


def run_kind(placement: Placement) -> str:
    """The ``runs.kind`` of a graph run's run: ``graph`` alone, else its sweep's kind."""
    return "graph" if placement.kind == "point" else placement.kind


def store_graph(con: duckdb.DuckDBPyConnection, placement: Placement, folder: Path,
                result: dict[str, Any], index: int | None = None,
                repetition: int | None = None) -> None:
    """Insert (or replace) the rows of one graph run and refresh its run, in one transaction."""
    graph_id = result["run_id"]
    if index is None:
        index, repetition = placement.manifest_entry(folder)
    where = graph_rows.GraphPlace(placement.run_id, placement.relative(folder),
                                  placement.scenario(), index, repetition)
    with transaction(con, folder):
        for table in GRAPH_TABLES:
            con.execute(f"DELETE FROM {table} WHERE graph_id = ?", [graph_id])
        if not con.execute("SELECT 1 FROM runs WHERE run_id = ?", [placement.run_id]).fetchone():
            insert(con, "runs", [rows.run_row(result, placement.run_id, run_kind(placement),
                                              where.scenario,
                                              placement.relative(placement.run_folder))])
        insert(con, "graph_runs", [graph_rows.graph_run_row(result, where)])
        insert(con, "graph_edges", graph_rows.graph_edge_rows(result))
        insert(con, "graph_chains", graph_rows.graph_chain_rows(result))
        insert(con, "graph_nodes", graph_rows.graph_node_rows(result))
        insert(con, "graph_calls", graph_rows.graph_call_rows(result))
        refresh_run(con, placement.run_id)
