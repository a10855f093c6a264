"""Ingesting one saved point folder into the catalogue, atomically.

Order: the Parquet files are written and renamed into place first, then the point's rows (run,
point, topics, subscribers, warnings, its flows) go in as one transaction. A point ingested
again replaces its rows. Its result is read once, any version (``read_point``: its v3 flows and
stream view, result/load.py); the catalogue keeps the document as it was written.
"""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from ..errors import RunError
from ..merge import SEVERITY
from ..result.load import as_stream
from . import graph_rows, rows
from .catalogue import connect
from .duckerr import ctrl_c_stops
from .duckerr import transaction as duck_transaction
from .layout import RESULT_NAME, Placement, place
from .parquet import remove_temporaries, write_point_files
from .flows import insert, read_flows, store_flows


def ingest_point(point_dir: Path, result: dict[str, Any] | None = None,
                 index: int | None = None, repetition: int | None = None) -> None:
    """Catalogue the saved point folder ``point_dir`` (its result.json unless ``result``: the
    document as it was written)."""
    point = read_point(result if result is not None else load_result(point_dir), point_dir,
                       owned=result is None)
    placement = place(point_dir)
    with ctrl_c_stops():
        prepare_files(point_dir, point.fields)
        with connect(placement.root, views=False) as con:
            store_point(con, placement, point_dir, point, index, repetition)


def load_result(point_dir: Path) -> dict[str, Any]:
    """The result.json of ``point_dir``, as it was written."""
    return read_result(point_dir / RESULT_NAME, None)


def read_result(path: Path, kind: str | None) -> dict[str, Any]:
    """The result in ``path``: an object with a run_id and status (and, given ``kind``, that
    ``kind``); a RunError naming the file otherwise."""
    try:
        result = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise RunError(f"cannot read {path}: {exc}") from None
    if not isinstance(result, dict) or "run_id" not in result or "status" not in result \
            or (kind is not None and result.get("kind") != kind):
        raise RunError(f"{path}: not a {kind or 'run-result'} (no "
                       + (f"kind '{kind}', " if kind else "") + "run_id/status)")
    return result


@dataclass(frozen=True)
class ReadPoint:
    """A point's result as the catalogue reads it."""

    document: dict[str, Any]
    """as it was written (any version): the ``points.result`` column"""
    fields: dict[str, Any]
    """what its rows read: a v2 run-result's fields (measurement, per_topic, per_subscriber,
    agents, discovery and the run sections), from its v3 stream view (result/load.py; for a
    v1/v2 result equal to its own); a result the upgrade cannot read: its own"""
    flows: dict[str, Any] | None
    """the result as v3 (the graph tables' rows); None when the upgrade cannot read it"""


def read_point(document: dict[str, Any], where: Path, owned: bool = False) -> ReadPoint:
    """``document`` (a point's result as written) read once for its rows and flows (``owned``:
    just read from its file for this alone; the flows may share its parts, as both are only
    read: result/load.py's ``parse_result``)."""
    flows = read_flows(document, str(where), owned)
    return ReadPoint(document, document if flows is None else as_stream(flows), flows)


def prepare_files(point_dir: Path, result: dict[str, Any]) -> None:
    """Write the point's Parquet files (removing any a killed mwperf left half-written) from
    its fields (``ReadPoint.fields``)."""
    remove_temporaries(point_dir)
    series = (result.get("measurement") or {}).get("series") or []
    topic_samples = [(int(t.get("topic", i)), str(t["samples_file"]))
                     for i, t in enumerate(result.get("per_topic") or []) if t.get("samples_file")]
    write_point_files(point_dir, result["run_id"], series, topic_samples)


def store_point(con: duckdb.DuckDBPyConnection, placement: Placement, point_dir: Path,
                point: ReadPoint, index: int | None, repetition: int | None) -> None:
    """Insert (or replace) the rows of one point and refresh its run, in one transaction."""
    result = point.fields
    point_id = result["run_id"]
    listed_index, listed_rep = placement.manifest_entry(point_dir)
    with transaction(con, point_dir):
        # a point catalogued before has its points and (its flows read) graph_runs rows: its
        # rows go in together, in one transaction; only then are there rows to replace (a
        # point just measured has none; nine DELETEs cost ~4 ms of a point's ~120 ms)
        new = not con.execute("SELECT EXISTS (SELECT 1 FROM points WHERE point_id = $1) OR "
                              "EXISTS (SELECT 1 FROM graph_runs WHERE graph_id = $1)",
                              [point_id]).fetchone()[0]
        for table in () if new else ("warnings", "subscribers", "topics", "points"):
            con.execute(f"DELETE FROM {table} WHERE point_id = ?", [point_id])
        if index is None:
            index = listed_index
        if index is None:  # numbered from 1 in the order the run measured them
            found = con.execute("SELECT count(*) FROM points WHERE run_id = ?",
                                [placement.run_id]).fetchone()
            index = (found[0] if found else 0) + 1
        place_of = rows.PointPlace(placement.run_id, placement.relative(point_dir), index,
                                   repetition or listed_rep or 1)
        run = rows.run_row(result, placement.run_id, placement.kind, placement.scenario(),
                           placement.relative(placement.run_folder))
        exists = con.execute("SELECT 1 FROM runs WHERE run_id = ?", [placement.run_id]).fetchone()
        if not exists:
            insert(con, "runs", [run])
        insert(con, "points", [rows.point_row(result, place_of, point.document)])
        insert(con, "topics", rows.topic_rows(result))
        insert(con, "subscribers", rows.subscriber_rows(result))
        insert(con, "warnings", rows.warning_rows(result))
        store_flows(con, point_id, point.flows, graph_rows.GraphPlace(
            placement.run_id, place_of.folder, placement.scenario(), place_of.index,
            place_of.repetition), new)
        refresh_run(con, placement.run_id)


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection, folder: Path) -> Iterator[None]:
    """One transaction cataloguing ``folder`` (duckerr.transaction)."""
    with duck_transaction(con, f"catalogue {folder}"):
        yield


def refresh_run(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Widen a run's start/end over its points and graph runs; its status is the worst of
    theirs."""
    members = ("(SELECT started_at, finished_at, status FROM points WHERE run_id = $1 UNION ALL "
               "SELECT started_at, finished_at, status FROM graph_runs WHERE run_id = $1)")
    statuses = [row[0] for row in con.execute(f"SELECT status FROM {members}",
                                              [run_id]).fetchall()]
    worst = max(statuses, key=lambda s: SEVERITY.get(s, 0), default="complete")
    con.execute(f"UPDATE runs SET started_at = (SELECT min(started_at) FROM {members}), "
                f"ended_at = (SELECT max(finished_at) FROM {members}), status = $2 "
                "WHERE run_id = $1", [run_id, worst])
