"""DuckDB's error messages as one line for a person (the message without the SQL excerpt DuckDB
appends), which of them mean the disk refused a write, and which mean a Ctrl-C.

A SIGINT while DuckDB works does not reach Python as KeyboardInterrupt: DuckDB catches it and
the statement fails with ``RuntimeError: Query interrupted`` (or ``duckdb.InterruptException``);
:func:`raise_if_interrupted` turns both back into KeyboardInterrupt, so a Ctrl-C while the
catalogue is written stops mwperf as it does anywhere else."""

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from ..errors import RunError

DISK_PROBLEMS = ("No space left on device", "Read-only file system", "Disk quota exceeded",
                 "Permission denied", "Input/output error", "File too large")
"""what the system says when a file system refuses a write (strerror), as DuckDB quotes it"""


def one_line(exc: BaseException) -> str:
    """``exc``'s message up to DuckDB's ``LINE n:`` excerpt, whitespace collapsed."""
    text = str(exc).split("\nLINE ")[0]
    return " ".join(text.split()) or type(exc).__name__


def disk_problem(exc: BaseException) -> str | None:
    """The system's reason when ``exc`` says a file system refused a write (e.g. 'No space
    left on device'), else None."""
    if isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror
    else:
        text = str(exc)
    return next((problem for problem in DISK_PROBLEMS if problem.lower() in text.lower()), None)


def interrupted(exc: BaseException) -> bool:
    """True when ``exc`` is how DuckDB reports a Ctrl-C (SIGINT) during a statement."""
    return isinstance(exc, (KeyboardInterrupt, duckdb.InterruptException)) or (
        isinstance(exc, RuntimeError) and "interrupted" in str(exc).lower())


def raise_if_interrupted(exc: BaseException) -> None:
    """Raise KeyboardInterrupt when ``exc`` is DuckDB's report of a Ctrl-C."""
    if interrupted(exc) and not isinstance(exc, KeyboardInterrupt):
        raise KeyboardInterrupt(one_line(exc)) from exc


@contextmanager
def ctrl_c_stops() -> Iterator[None]:
    """Within the block, DuckDB's report of a Ctrl-C becomes KeyboardInterrupt."""
    try:
        yield
    except (RuntimeError, duckdb.Error) as exc:
        raise_if_interrupted(exc)
        raise


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection, what: str) -> Iterator[None]:
    """One transaction: committed when the block ends, rolled back on any error (a DuckDB
    error becomes a RunError "cannot ``what``: ..."; DuckDB's report of a Ctrl-C,
    KeyboardInterrupt). A commit that fails (a full disk) has rolled back already; a rollback
    that fails leaves the transaction to the connection's close, which discards it too."""
    con.begin()
    try:
        yield
        con.commit()
    except BaseException as exc:
        with contextlib.suppress(duckdb.Error, RuntimeError):
            con.rollback()
        raise_if_interrupted(exc)
        if isinstance(exc, duckdb.Error):
            raise RunError(f"cannot {what}: {one_line(exc)}") from None
        raise
