"""store/attached.py: each catalogue attached to this process's one DuckDB while in use: nested
uses share the attachment, the last release detaches it (checkpointed: no write-ahead log left,
and another process can take the lock), DuckDB's own errors for a locked or damaged file, and
nothing stays attached after a failed attach."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from mwperf.errors import RunError
from mwperf.store.attached import attach, attached, release

OTHER_PROCESS = textwrap.dedent("""
    import duckdb, sys
    try:
        con = duckdb.connect(sys.argv[1])
        print(con.execute("SELECT sum(n) FROM t").fetchone()[0])
    except duckdb.Error as exc:
        print(type(exc).__name__, exc)
""")


def other_process_reads(path: Path) -> str:
    return subprocess.run([sys.executable, "-c", OTHER_PROCESS, str(path)], capture_output=True,
                          text=True, check=True, timeout=60).stdout.strip()


def test_nested_uses_share_one_attachment_and_the_last_release_unlocks_the_file(
        tmp_path: Path) -> None:
    path = tmp_path / "c.duckdb"
    outer = attach(path)
    outer.execute("CREATE TABLE t (n INTEGER)")
    outer.execute("INSERT INTO t VALUES (1)")
    inner = attach(path, read_only=True)  # a read inside a write: the same attachment
    assert inner.execute("SELECT sum(n) FROM t").fetchone() == (1,)
    assert attached() == [os.path.realpath(path)]
    release(inner)
    assert "Conflicting lock" in other_process_reads(path)  # still held by the outer use
    outer.execute("INSERT INTO t VALUES (2)")
    release(outer)
    assert attached() == []
    assert not path.with_name("c.duckdb.wal").exists()  # checkpointed into the file
    assert other_process_reads(path) == "3"


def test_a_write_while_only_reads_hold_the_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.duckdb"
    con = attach(path)
    con.execute("CREATE TABLE t (n INTEGER)")
    release(con)
    reader = attach(path, read_only=True)
    try:
        with pytest.raises(RunError, match="open read-only in this process"):
            attach(path)
    finally:
        release(reader)
    assert attached() == []


def test_a_damaged_or_locked_file_is_duckdbs_error_and_nothing_stays_attached(
        tmp_path: Path) -> None:
    bad = tmp_path / "bad.duckdb"
    bad.write_bytes(b"x" * 5000)
    with pytest.raises(duckdb.Error, match="not a valid DuckDB database file"):
        attach(bad)
    assert attached() == []
    path = tmp_path / "c.duckdb"
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys; c = duckdb.connect("
                               "sys.argv[1]); print('held', flush=True); sys.stdin.read()",
                               str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(duckdb.Error, match="Could not set lock"):
            attach(path)
        assert attached() == []
    finally:
        holder.communicate("", timeout=60)


def test_one_file_named_two_ways_is_one_attachment(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    first = attach(tmp_path / "real" / "c.duckdb")
    first.execute("CREATE TABLE t (n INTEGER)")
    second = attach(tmp_path / "link" / "c.duckdb")  # a results folder reached by a symlink
    try:
        assert second.execute("SELECT count(*) FROM t").fetchone() == (0,)
        assert len(attached()) == 1
    finally:
        release(second)
        release(first)
    assert attached() == []
