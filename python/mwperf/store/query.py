"""Reading the catalogue: the list of runs, and SQL given by the user (read-only).

The user's SQL runs on a read-only connection, so it cannot change the catalogue; any DuckDB
error (syntax, unknown table or column, an attempted write) is a usage error in one line.
"""

import csv
import io
import json
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from ..errors import UsageError
from .catalogue import connect
from .duckerr import one_line

RUNS_SQL = """
SELECT r.run_id AS id, strftime(r.started_at, '%Y-%m-%d %H:%M:%S') AS "when", r.kind,
       coalesce(r.scenario, '-') AS scenario,
       (SELECT count(*) FROM points p WHERE p.run_id = r.run_id)
       + (SELECT count(*) FROM graph_runs g WHERE g.run_id = r.run_id AND g.kind = 'graph')
       AS points, r.status
FROM runs r
ORDER BY r.started_at DESC, r.run_id DESC LIMIT ?
"""
"""a graph run counts as one point (of its sweep, or of its own run of kind ``graph``)"""


@dataclass
class Table:
    """A query's column names and rows."""

    columns: list[str]
    rows: list[tuple[Any, ...]]

    def render(self, fmt: str) -> str:
        """The table as aligned text, CSV or a JSON list of objects."""
        if fmt == "csv":
            out = io.StringIO()
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(self.columns)
            writer.writerows([[_plain(v) for v in row] for row in self.rows])
            return out.getvalue()
        if fmt == "json":
            objects = [dict(zip(self.columns, map(_plain, row))) for row in self.rows]
            return json.dumps(objects, indent=2, ensure_ascii=False) + "\n"
        return _aligned(self.columns, [[_cell(v) for v in row] for row in self.rows])


def list_runs(root: Path, limit: int) -> Table:
    """The newest ``limit`` runs of ``root``: id, when, kind, scenario, points, status."""
    with connect(root, read_only=True) as con:
        cursor = con.execute(RUNS_SQL, [limit])
        return Table([d[0] for d in cursor.description], cursor.fetchall())


def run_query(root: Path, sql: str) -> Table:
    """Run ``sql`` over ``root``'s catalogue and its views (samples, series), read-only."""
    with connect(root, read_only=True) as con:
        try:
            cursor = con.execute(sql)
            if cursor.description is None:
                return Table([], [])
            return Table([d[0] for d in cursor.description], cursor.fetchall())
        except duckdb.Error as exc:
            raise UsageError(f"SQL: {one_line(exc)}") from None


def _plain(value: Any) -> Any:
    """``value`` as JSON/CSV can carry it."""
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, (list, dict, tuple)):
        return json.loads(json.dumps(value, default=str))
    return value


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(_plain(value))


def _aligned(columns: list[str], cells: list[list[str]]) -> str:
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(lines) + f"\n({len(cells)} row{'s' if len(cells) != 1 else ''})\n"
