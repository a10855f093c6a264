"""The graph runs of a report's run, read from the catalogue's graph tables (never from their
folders): each graph run's row, its edges, chains (hops parsed from their JSON) and nodes."""

import json
from dataclasses import dataclass, field
from typing import Any

import duckdb

from ..graph.drawing import EdgeMark, NodeMark, call_mark, failed
from ..store.catalogue import dict_rows as _rows
from ..store.graph_tables import GRAPH_RUN_COLUMNS

RUN_FIELDS = ", ".join(name for name, _ in GRAPH_RUN_COLUMNS if name != "result")
"""every graph_runs column but the whole result (a report needs none of it)"""


@dataclass
class GraphRun:
    """One graph run: its ``graph_runs`` row and its edges, chains, nodes and call edges
    rows."""

    row: dict[str, Any]
    edges: list[dict[str, Any]] = field(default_factory=list)
    chains: list[dict[str, Any]] = field(default_factory=list)
    nodes: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)

    @property
    def graph_id(self) -> str:
        return str(self.row["graph_id"])

    @property
    def status(self) -> str:
        return str(self.row["status"])

    def marks(self) -> tuple[list[NodeMark], list[EdgeMark]]:
        """Its nodes, edges and call edges as the graph drawing takes them."""
        nodes = [NodeMark(n["name"], n["status"], n["cpu_percent"]) for n in self.nodes]
        edges = [EdgeMark(e["topic"], e["from_node"], e["to_node"], e["period_ns"],
                          e["received"], e["lost"], e["latency_p50_ns"], e["latency_p99_ns"])
                 for e in self.edges]
        edges += [call_mark(c["service"], c["client"], c["server"], c["period_ns"],
                            c["answered"], failed(c), c["latency_p50_ns"], c["latency_p99_ns"])
                  for c in self.calls if c["server"] is not None]
        return nodes, edges


def load_graphs(con: duckdb.DuckDBPyConnection, run_id: str) -> list[GraphRun]:
    """The graph runs of run ``run_id`` in measuring order."""
    found = [GraphRun(row) for row in _rows(
        con, f"SELECT {RUN_FIELDS} FROM graph_runs WHERE run_id = ? AND kind = 'graph' ORDER BY point_index NULLS "
        "LAST, repetition, started_at, graph_id", [run_id])]
    if not found:
        return []
    by_id = {g.graph_id: g for g in found}
    ids = list(by_id)
    for row in _rows(con, "SELECT * FROM graph_edges WHERE graph_id IN (SELECT unnest(?)) "
                     "ORDER BY graph_id, edge", [ids]):
        row["layers"] = _parsed(row.get("layers"))
        by_id[row["graph_id"]].edges.append(row)
    for row in _rows(con, "SELECT * FROM graph_chains WHERE graph_id IN (SELECT unnest(?)) "
                     "ORDER BY graph_id, chain", [ids]):
        row["hops"] = json.loads(row["hops"]) if row["hops"] else []
        row["layers"] = _parsed(row.get("layers"))
        by_id[row["graph_id"]].chains.append(row)
    for row in _rows(con, "SELECT * FROM graph_nodes WHERE graph_id IN (SELECT unnest(?)) "
                     "ORDER BY graph_id, name", [ids]):
        by_id[row["graph_id"]].nodes.append(row)
    for row in _rows(con, "SELECT * FROM graph_calls WHERE graph_id IN (SELECT unnest(?)) "
                     "ORDER BY graph_id, call", [ids]):
        by_id[row["graph_id"]].calls.append(row)
    return found


def _parsed(text: str | None) -> Any:
    """A JSON column's value (a ``layers`` section), None where NULL."""
    return json.loads(text) if text else None
