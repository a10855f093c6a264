"""This process's one DuckDB, to which each catalogue file is attached while it is in use.

Opening a DuckDB database of its own costs ~30 ms of CPU on a 2-core VM (the instance's start:
its built-in extensions, every time), closing it ~10 ms more; attaching a file to a running
instance ~1 ms, detaching it (its checkpoint) ~5 ms (measured 2026-11-30). mwperf opens a
catalogue for every point it saves, every show, compare and report, so the catalogue is
attached, not opened: one in-memory instance per process, one connection (a cursor: its own
transaction, temporary views and default database) per use, the file attached as long as some
use holds it and detached (checkpointed, its lock released for other processes) after the
last. DuckDB's lock and damage errors are the same as ``duckdb.connect``'s.

A file already attached is shared: a nested use gets a cursor of its own on the same
attachment (as two ``duckdb.connect`` of one file in one process shared its instance). A
read-only use of a file attached for writing shares that attachment; a write while only
read-only uses hold it is refused (DuckDB cannot reopen an attached file for writing).
"""

import functools
import itertools
import os
import threading
from pathlib import Path

import duckdb

from ..errors import RunError
from .parquet import sql_string

_LOCK = threading.Lock()
_NAMES = itertools.count()
_ATTACHED: dict[str, list] = {}
"""real path -> [its database name in the instance, read only, uses]"""
_USES: dict[int, str] = {}
"""id of a use's cursor -> the real path it uses"""


@functools.cache
def _instance() -> duckdb.DuckDBPyConnection:
    """The in-memory DuckDB the catalogues are attached to (no table of its own)."""
    return duckdb.connect()


def attach(path: Path, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A connection whose default database is the catalogue file ``path`` (created if need be,
    unless ``read_only``); DuckDB's error when the file is locked by another process or is no
    database. Give it back with :func:`release`."""
    key = os.path.realpath(path)  # one file, however named (DuckDB refuses a second attach)
    with _LOCK:
        entry = _ATTACHED.get(key)
        if entry is not None and entry[1] and not read_only:
            raise RunError(f"catalogue {path} is open read-only in this process; it cannot be "
                           "written until that use ends")
        con = _instance().cursor()
        try:
            if entry is None:
                name = f"catalogue_{next(_NAMES)}"
                con.execute(f"ATTACH {sql_string(key)} AS {name}"
                            + (" (READ_ONLY)" if read_only else ""))
                entry = _ATTACHED[key] = [name, read_only, 0]
            con.execute(f"USE {entry[0]}")
            con.execute("SET enable_progress_bar = false")  # output is for the user's format
        except BaseException:
            con.close()
            if entry is not None and entry[2] == 0:
                _detach(key)
            raise
        entry[2] += 1
        _USES[id(con)] = key
        return con


def release(con: duckdb.DuckDBPyConnection) -> None:
    """End a use from :func:`attach`: its connection closed (an open transaction discarded);
    after the file's last use, the file detached: checkpointed and unlocked. A detach that
    fails (a full disk refusing the checkpoint) leaves what was committed in the write-ahead
    log, replayed by the next attach; its error is raised."""
    with _LOCK:
        key = _USES.pop(id(con), None)
        try:
            con.close()
        finally:
            entry = _ATTACHED.get(key) if key is not None else None
            if entry is not None:
                entry[2] -= 1
                if entry[2] == 0:
                    _detach(key)


def _detach(key: str) -> None:
    entry = _ATTACHED.pop(key)
    _instance().execute(f"DETACH {entry[0]}")


def attached() -> list[str]:
    """The files attached now (none between two uses: a test's check that every use ended)."""
    with _LOCK:
        return sorted(_ATTACHED)
