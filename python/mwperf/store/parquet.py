"""A point's Parquet files: samples.parquet (from samples.csv, or with several topics from each
topic's samples.<topic>.csv, with a ``topic`` column) and series.parquet (from the result's
per-second series), each with a ``point_id`` column so the views over all of them can be joined
to ``points`` (and ``topics``).

The samples conversion is one DuckDB ``COPY (SELECT ... FROM read_csv(...)) TO ... (FORMAT
parquet)``: DuckDB streams the rows, none of them becomes a Python object, so 10^7 samples
convert in bounded memory. Each file is written under a temporary name and renamed into place.
"""

import atexit
import contextlib
import functools
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import duckdb

from ..errors import RunError
from .duckerr import one_line, raise_if_interrupted

SAMPLES_CSV = "samples.csv"
SAMPLES_PARQUET = "samples.parquet"
SERIES_PARQUET = "series.parquet"
SERIES_COLUMNS = (("t_s", "BIGINT"), ("sent", "BIGINT"), ("received", "BIGINT"),
                  ("min_ns", "BIGINT"), ("p50_ns", "BIGINT"), ("p90_ns", "BIGINT"),
                  ("p99_ns", "BIGINT"), ("max_ns", "BIGINT"), ("mean_ns", "DOUBLE"))
TEMP_PREFIX = ".parquet-"
"""temporary files are ``.parquet-<pid>-<name>``: never matched by the views' globs"""
MEMORY_LIMIT = "256MB"
"""DuckDB's own buffer limit while converting (it spills to disk beyond it)"""


def sql_string(text: str | Path) -> str:
    """``text`` as an SQL string literal."""
    return "'" + str(text).replace("'", "''") + "'"


def write_point_files(point_dir: Path, point_id: str, series: list[dict[str, Any]],
                      topic_samples: Sequence[tuple[int, str]] = ()) -> None:
    """Write samples.parquet (when samples.csv, or each topic's file of ``topic_samples``
    (topic, file name in the folder), exists and is newer) and series.parquet."""
    csv = point_dir / SAMPLES_CSV
    target = point_dir / SAMPLES_PARQUET
    topics = [(topic, point_dir / Path(name).name) for topic, name in topic_samples]
    topics = [(topic, path) for topic, path in topics if path.is_file()]
    try:
        with _connection(None) as con:
            if csv.is_file() and not _up_to_date(target, csv):
                convert_samples(csv, target, point_id, con)
            elif not csv.is_file() and topics and not all(
                    _up_to_date(target, path) for _, path in topics):
                convert_topic_samples(topics, target, point_id, con)
            write_series(point_dir / SERIES_PARQUET, point_id, series, con)
    except duckdb.Error as exc:
        raise_if_interrupted(exc)
        raise RunError(f"cannot write the Parquet files of {point_dir}: {one_line(exc)}") from None


def convert_samples(csv: Path, target: Path, point_id: str,
                    con: duckdb.DuckDBPyConnection | None = None) -> None:
    """Stream ``csv`` into the Parquet file ``target`` with a leading ``point_id`` column."""
    query = (f"SELECT {sql_string(point_id)} AS point_id, * "
             f"FROM read_csv({sql_string(csv)}, header = true)")
    with _connection(con) as db:
        _publish(db, target, query)


def convert_topic_samples(topics: Sequence[tuple[int, Path]], target: Path, point_id: str,
                          con: duckdb.DuckDBPyConnection | None = None) -> None:
    """Stream each topic's CSV into the one Parquet file ``target``, with leading ``point_id``
    and ``topic`` columns (streamed as ``convert_samples``)."""
    query = " UNION ALL ".join(
        f"SELECT {sql_string(point_id)} AS point_id, {int(topic)}::INTEGER AS topic, * "
        f"FROM read_csv({sql_string(csv)}, header = true)" for topic, csv in topics)
    with _connection(con) as db:
        _publish(db, target, query)


def write_series(target: Path, point_id: str, series: list[dict[str, Any]],
                 con: duckdb.DuckDBPyConnection | None = None) -> None:
    """Write the per-second series (small: one row per second) as Parquet."""
    names = [name for name, _ in SERIES_COLUMNS]
    columns = ", ".join(f"NULL::{kind} AS {name}" for name, kind in SERIES_COLUMNS)
    with _connection(con) as db:
        db.execute(f"CREATE OR REPLACE TEMP TABLE series AS SELECT {columns} WHERE false")
        if series:
            values = ", ".join(f"?::{kind}" for _, kind in SERIES_COLUMNS)
            db.executemany(f"INSERT INTO series VALUES ({values})",
                           [[point.get(name) for name in names] for point in series])
        _publish(db, target,
                 f"SELECT {sql_string(point_id)} AS point_id, * FROM series ORDER BY t_s")


def remove_temporaries(point_dir: Path) -> None:
    """Remove Parquet files a killed mwperf left half-written in ``point_dir``."""
    for stale in point_dir.glob(f"{TEMP_PREFIX}*"):
        with contextlib.suppress(OSError):
            stale.unlink()


@contextlib.contextmanager
def _connection(con: duckdb.DuckDBPyConnection | None) -> Iterator[duckdb.DuckDBPyConnection]:
    """``con``, or this process's scratch DuckDB (in memory; opening one costs ~40 ms, so a
    sweep reuses it)."""
    yield con if con is not None else _scratch_connection()


@functools.cache
def _scratch_connection() -> duckdb.DuckDBPyConnection:
    """The in-memory DuckDB of this process. Should it ever need to spill (a streamed COPY
    does not), it does so into a temporary folder removed when the process exits."""
    spill = Path(tempfile.gettempdir()) / f"mwperf-duckdb-{os.getpid()}"
    atexit.register(shutil.rmtree, spill, ignore_errors=True)
    con = duckdb.connect(config={"memory_limit": MEMORY_LIMIT, "temp_directory": str(spill)})
    con.execute("SET enable_progress_bar = false")
    return con


def _publish(con: duckdb.DuckDBPyConnection, target: Path, query: str) -> None:
    """COPY ``query`` into a temporary Parquet file beside ``target``, then rename it."""
    tmp = target.with_name(f"{TEMP_PREFIX}{os.getpid()}-{target.name}")
    try:
        con.execute(f"COPY ({query}) TO {sql_string(tmp)} (FORMAT parquet)")
        sync_file(tmp)  # whole on the disk before its name is
        os.replace(tmp, target)
    except (duckdb.Error, OSError) as exc:
        raise_if_interrupted(exc)
        raise RunError(f"cannot write {target}: {one_line(exc)}") from None
    finally:  # also on Ctrl-C: no half-written file stays behind
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def _up_to_date(target: Path, source: Path) -> bool:
    try:
        return target.stat().st_mtime_ns >= source.stat().st_mtime_ns
    except OSError:
        return False


def sync_file(path: Path) -> None:
    """Flush ``path``'s content to the disk (a power cut after a rename finds it whole)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
