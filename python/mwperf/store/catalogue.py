"""Opening the catalogue ``<results>/catalogue.duckdb``: one writer at a time, clear errors.

DuckDB lets one process write a database file; another mwperf writing into the same results
folder waits up to ``LOCK_WAIT_S`` for the lock, then fails naming the folder. A file DuckDB
cannot open is reported as unreadable with the command that recreates it from the point folders.
Every connection gets the views ``samples`` and ``series`` over the Parquet files of the
results folder, wherever that folder now is (nothing stored in the catalogue names a path
outside it).
"""

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from ..errors import RunError
from . import migrate, schema
from .attached import attach, release
from .duckerr import disk_problem, one_line, raise_if_interrupted, transaction
from .layout import POINTS_DIR
from .parquet import SAMPLES_PARQUET, SERIES_COLUMNS, SERIES_PARQUET, sql_string

CATALOGUE_NAME = "catalogue.duckdb"
LOCK_WAIT_S = 10.0
LOCK_POLL_S = 0.05
SAMPLE_COLUMNS = ("seq", "intended_ns", "sent_ns", "peer_rx_ns", "recv_ns", "response_ns",
                  "service_ns")
"""the columns of samples.csv (for the empty ``samples`` view of a folder without samples;
``topic`` is there only for points with several topics, each with its own file)"""


class CatalogueUnreadable(RunError):
    """DuckDB cannot open the catalogue file (damaged, or not a catalogue)."""


class CatalogueBusy(RunError):
    """Another process holds the catalogue's write lock."""


class NoCatalogue(RunError):
    """The results folder has no catalogue yet."""


def catalogue_path(root: Path) -> Path:
    """Where the catalogue of results folder ``root`` lives."""
    return root / CATALOGUE_NAME


def rebuild_hint(root: Path) -> str:
    """The command that recreates the catalogue of ``root``."""
    return f"mwperf results --rebuild --results {root}"


@contextmanager
def connect(root: Path, read_only: bool = False, path: Path | None = None, views: bool = True
            ) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to the catalogue of ``root`` (or to ``path``), tables ready, and (unless
    ``views`` is False: writers need none) the views over the Parquet files."""
    path = path or catalogue_path(root)
    if read_only and not path.is_file():
        raise NoCatalogue(f"no catalogue in results folder {root} ({path} does not exist): "
                          f"measure something with 'mwperf run --results {root}', or create "
                          f"it from existing point folders with '{rebuild_hint(root)}'")
    con = open_locked(root, path, read_only)
    try:
        if not read_only:
            _prepare(con, root, path)
        else:
            _check_version(con, root, path)
        if views:
            add_views(con, root)
        yield con
    finally:
        close(con)


def _prepare(con: duckdb.DuckDBPyConnection, root: Path, path: Path) -> None:
    """The tables created or migrated, all of it in one transaction (a Ctrl-C or a full disk
    halfway leaves the catalogue as it was)."""
    found = schema.version_of(con)
    if found == schema.SCHEMA_VERSION:
        return
    with transaction(con, f"prepare catalogue {path}"):
        migrate.prepare(con, str(path), rebuild_hint(root), found)


def close(con: duckdb.DuckDBPyConnection) -> None:
    """Close ``con`` (from :func:`open_locked`). What it committed is in the write-ahead log already: should the
    checkpoint into the file fail (a full disk), the next connection replays the log; so only
    a Ctrl-C is passed on."""
    try:
        release(con)
    except (duckdb.Error, RuntimeError) as exc:
        raise_if_interrupted(exc)


def dict_rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]
              ) -> list[dict[str, Any]]:
    """The rows of ``sql`` as dicts keyed by column name."""
    cursor = con.execute(sql, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, values)) for values in cursor.fetchall()]


def add_views(con: duckdb.DuckDBPyConnection, root: Path) -> None:
    """Create the temporary views ``samples`` and ``series`` over ``root``'s Parquet files."""
    empty_samples = ", ".join(["NULL::VARCHAR AS point_id", "NULL::INTEGER AS topic"]
                              + [f"NULL::BIGINT AS {c}" for c in SAMPLE_COLUMNS])
    empty_series = ", ".join(["NULL::VARCHAR AS point_id"]
                             + [f"NULL::{kind} AS {name}" for name, kind in SERIES_COLUMNS])
    for view, name, empty in (("samples", SAMPLES_PARQUET, empty_samples),
                              ("series", SERIES_PARQUET, empty_series)):
        patterns = [pattern for pattern in (f"*/{name}", f"*/{POINTS_DIR}/*/{name}")
                    if next(root.glob(pattern), None) is not None]
        if patterns:
            files = ", ".join(sql_string(root.resolve() / p) for p in patterns)
            body = f"SELECT * FROM read_parquet([{files}], union_by_name = true)"
        else:
            body = f"SELECT {empty} WHERE false"
        con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS {body}")


def open_locked(root: Path, path: Path, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Connect, waiting for another writer's lock to go away (up to LOCK_WAIT_S); give the
    connection back with :func:`close`."""
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            return attach(path, read_only)  # this process's DuckDB, the file attached to it
        except duckdb.Error as exc:
            message = one_line(exc)
            problem = disk_problem(exc)
            if problem is not None:  # the file is fine, the disk refuses: nothing to rebuild
                raise RunError(f"results folder {root}: {problem} while opening its catalogue "
                               f"{path.name} ({message})") from None
            # DuckDB's lock conflict ("Could not set lock on file ...: Conflicting lock is held
            # in ..."), not any message with "lock" in it: a damaged file's "checksum ... in
            # block at location 0" was waited for and called busy (tests/test_properties.py)
            if "conflicting lock" not in message.lower() and \
                    "could not set lock" not in message.lower():
                raise CatalogueUnreadable(
                    f"catalogue {path} is unreadable ({message}); the point folders are intact: "
                    f"recreate it with '{rebuild_hint(root)}'") from None
            if time.monotonic() >= deadline:
                raise CatalogueBusy(
                    f"results folder {root}: its catalogue is in use by another mwperf process "
                    f"for more than {LOCK_WAIT_S:.0f} s ({message}); wait for it to finish or "
                    f"use another --results folder") from None
            time.sleep(LOCK_POLL_S)


def _check_version(con: duckdb.DuckDBPyConnection, root: Path, path: Path) -> None:
    """Refuse (read-only: no migration possible here) a catalogue of another schema version."""
    version = schema.version_of(con)
    if version != schema.SCHEMA_VERSION:
        raise schema.SchemaMismatch(
            f"catalogue {path}: schema version {version if version is not None else 'missing'}, "
            f"this mwperf reads version {schema.SCHEMA_VERSION}; recreate it from the point "
            f"folders with '{rebuild_hint(root)}'")
