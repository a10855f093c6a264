"""Helpers of the results-store tests (no tests here): measuring points into a results folder
with the fake agent, and cloning a saved point into synthetic runs and sweeps."""

import functools
import json
import shutil
from pathlib import Path
from typing import Any

import duckdb

from conftest import as_v2, read_saved
from mwperf.agent import find_agent
from mwperf.config import build_point
from mwperf.session import measure
from mwperf.store.catalogue import CATALOGUE_NAME


def measure_point(results_dir: Path, **options: Any) -> Path:
    """Measure one point with the agent of $MWPERF_AGENT into ``results_dir``; its folder."""
    raw = {"duration": "100ms", "warmup": "0s", **options}
    _, saved = measure(build_point(raw, find_agent), find_agent(), results_dir)
    assert saved is not None
    return saved


def saved_as_v2(folder: Path) -> Path:
    """``folder`` with its result.json rewritten as the v2 run-result it stands for (a version
    still read), for the tests that make points from it by its v2 fields."""
    path = folder / "result.json"
    path.write_text(json.dumps(as_v2(read_saved(path))))
    return folder


def clone_point(template: Path, dest: Path, run_id: str, **changes: Any) -> Path:
    """Copy point folder ``template`` to ``dest/run_id`` with that run id and ``changes``
    applied to its result, saved as the v2 run-result it stands for (a version still read;
    its fields are what ``changes`` name) (the catalogue's Parquet files are not copied)."""
    target = dest / run_id
    shutil.copytree(template, target, ignore=shutil.ignore_patterns("*.parquet"))
    result = as_v2(read_saved(target / "result.json"))
    result.update(run_id=run_id, **changes)
    (target / "result.json").write_text(json.dumps(result))
    return target


@functools.cache
def _reader() -> duckdb.DuckDBPyConnection:
    """The tests' own DuckDB (not the product's: store/attached.py), each catalogue attached
    read-only to it for one query (an ATTACH costs ~1 ms, a DuckDB of its own ~30 ms)."""
    return duckdb.connect()


def catalogue_rows(root: Path, sql: str, params: list[Any] | None = None) -> list[tuple]:
    """Rows of ``sql`` over ``root``'s catalogue, opened read-only as a user would."""
    path = str(root / CATALOGUE_NAME).replace("'", "''")
    con = _reader().cursor()
    try:
        con.execute(f"ATTACH '{path}' AS catalogue (READ_ONLY)")
        try:
            con.execute("USE catalogue")
            return con.execute(sql, params or []).fetchall()
        finally:
            con.execute("USE memory")
            con.execute("DETACH catalogue")
    finally:
        con.close()
