"""Recreating the catalogue from the point and graph run folders (the source of truth): each
``result.json`` by what it holds (a stream kind's point; a v3 graph run's result: a graph run),
each old ``graph-result.json`` as a graph run.

The new catalogue is built under a temporary name in the results folder and renamed over the
old one only when complete, so an interrupted rebuild leaves the old catalogue as it was.
Missing Parquet files are recreated; half-written ones a killed mwperf left are removed. The new
file is checkpointed before the rename (its write-ahead log would not follow it).
"""

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from ..errors import MwperfError, RunError
from ..result.load import is_stream
from .catalogue import CatalogueUnreadable, catalogue_path, close, connect, open_locked
from .duckerr import ctrl_c_stops, one_line, raise_if_interrupted
from .graph_ingest import load_graph_result, store_graph
from .ingest import load_result, prepare_files, read_point, store_point
from .layout import graph_folders, place, point_folders

TEMP_GLOB = ".catalogue-rebuild-*"


@dataclass
class RebuildReport:
    """What a rebuild catalogued, and the folders it had to skip (with why)."""

    points: int = 0
    graphs: int = 0
    runs: set[str] = field(default_factory=set)
    skipped: list[tuple[Path, str]] = field(default_factory=list)


def rebuild(root: Path) -> RebuildReport:
    """Recreate ``root``'s catalogue from every point and graph run folder under it."""
    if not root.is_dir():
        raise RunError(f"--results: {root} is not a folder")
    for stale in root.glob(TEMP_GLOB):
        with contextlib.suppress(OSError):
            stale.unlink()
    temp = root / f".catalogue-rebuild-{os.getpid()}.duckdb"
    report = RebuildReport()
    try:
        with ctrl_c_stops(), _writers_kept_out(root), connect(root, path=temp, views=False) as con:
            for point_dir in point_folders(root):
                try:
                    point = read_point(load_result(point_dir), point_dir, owned=True)
                    if point.flows is not None and not is_stream(point.flows):
                        store_graph(con, place(point_dir), point_dir, point.document)
                        report.graphs += 1  # a graph run's v3 result.json
                    else:
                        prepare_files(point_dir, point.fields)
                        store_point(con, place(point_dir), point_dir, point, None, None)
                        report.points += 1
                except MwperfError as exc:
                    report.skipped.append((point_dir, str(exc)))
                    continue
                report.runs.add(place(point_dir).run_id)
            for folder in graph_folders(root):
                try:
                    store_graph(con, place(folder), folder, load_graph_result(folder))
                except MwperfError as exc:
                    report.skipped.append((folder, str(exc)))
                    continue
                report.graphs += 1
                report.runs.add(place(folder).run_id)
            _checkpoint(con, root)
        target = catalogue_path(root)
        target.with_name(target.name + ".wal").unlink(missing_ok=True)  # belongs to the old file
        os.replace(temp, target)
    finally:
        for leftover in (temp, temp.with_name(temp.name + ".wal")):
            with contextlib.suppress(OSError):
                leftover.unlink(missing_ok=True)
    return report


def _checkpoint(con: duckdb.DuckDBPyConnection, root: Path) -> None:
    """Everything into the new file itself: its write-ahead log does not move with it (a
    checkpoint the disk refuses is an error, the old catalogue stays)."""
    try:
        con.execute("CHECKPOINT")
    except duckdb.Error as exc:
        raise_if_interrupted(exc)
        raise RunError(f"results folder {root}: cannot write the rebuilt catalogue "
                       f"({one_line(exc)}); the old one is as it was") from None


@contextlib.contextmanager
def _writers_kept_out(root: Path) -> Iterator[None]:
    """Hold the old catalogue's write lock (when it opens at all) while the new one is built, so
    no point is committed into a file about to be replaced."""
    path = catalogue_path(root)
    try:
        holder = open_locked(root, path) if path.is_file() else None
    except CatalogueUnreadable:
        holder = None
    try:
        yield
    finally:
        if holder is not None:
            close(holder)
