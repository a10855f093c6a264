"""A stream point's flows in the graph tables: its nodes, edges, chains and calls, from its
result read as v3 (result/load.py; the one-path plan's step 5), under a graph_runs row of its
kind. And how a row goes into a catalogue table (``insert``), which ingest, graph_ingest and the
migration share."""

import json
from typing import Any

import duckdb

from ..result.load import NotReadable, parse_result
from . import graph_rows
from .graph_tables import GRAPH_TABLES
from .schema import TABLES


def read_flows(document: dict[str, Any], where: str, owned: bool = False
               ) -> dict[str, Any] | None:
    """A point's result ``document`` (as written, any version) read as v3 (result/load.py); None
    when the upgrade cannot read it (one written by hand, or cut short): that point keeps its
    rows and gets no flow rows."""
    try:
        return parse_result(document, where, owned)
    except NotReadable:
        return None


def store_flows(con: duckdb.DuckDBPyConnection, graph_id: Any, flows: dict[str, Any] | None,
                where: graph_rows.GraphPlace, new: bool = False) -> None:
    """Replace the graph-table rows of stream point ``graph_id`` (its run id) by those of
    ``flows`` (its result as v3, :func:`read_flows`; None: none). ``new``: the caller knows the
    point has no rows yet (nothing to delete: five statements saved)."""
    if not new:
        for table in GRAPH_TABLES:
            con.execute(f"DELETE FROM {table} WHERE graph_id = ?", [graph_id])
    if flows is None:
        return
    row = graph_rows.graph_run_row(flows, where)
    row["result"] = json.dumps({"in": "points.result"})  # the document once, as it was written
    insert(con, "graph_runs", [row])
    insert(con, "graph_edges", graph_rows.graph_edge_rows(flows))
    insert(con, "graph_chains", graph_rows.graph_chain_rows(flows))
    insert(con, "graph_nodes", graph_rows.graph_node_rows(flows))
    insert(con, "graph_calls", graph_rows.graph_call_rows(flows))


def insert(con: duckdb.DuckDBPyConnection, table: str, records: list[dict[str, Any]]) -> None:
    """Insert ``records`` (dicts keyed by column name) into ``table``."""
    if not records:
        return
    names = [name for name, _ in TABLES[table]]
    row = "(" + ", ".join("?" for _ in names) + ")"
    # one statement of all the rows: DuckDB's executemany runs one statement per row (measured:
    # it was the largest part of a point's ingest after the catalogue's open and close)
    con.execute(f"INSERT INTO {table} ({', '.join(names)}) VALUES "
                + ", ".join(row for _ in records),
                [record.get(name) for record in records for name in names])
