"""Before a sweep is resumed: what a killed mwperf (a power cut, SIGKILL) left half done in its
folder is finished or cleared, so the sweep goes on from a whole state.

- A point folder without its result (``result.json`` / ``graph-result.json`` is written last)
  was being saved when mwperf died: it is not a point (the store and the reports pass over it)
  and is removed; the point is measured again.
- Temporary files of a dead mwperf (``.<name>.<pid>.tmp`` beside sweep.json, the summaries or
  a point's files; ``.parquet-<pid>-*`` beside a point's Parquet files) are removed.
- A point the manifest keeps (complete, or adopted from a saved but unlisted folder) whose
  catalogue entry is missing (killed between saving and cataloguing) is catalogued now, so the
  catalogue has every point of the sweep once (its result read by result/load.py: a stream
  kind's as a point, a graph run's as a graph run; the document goes in as it was written).
"""

import contextlib
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from ..leases import start_time
from ..errors import MwperfError, RunError
from ..result.load import NotReadable, is_stream, parse_result, read_document
from ..store.catalogue import CATALOGUE_NAME, connect
from ..store.layout import POINTS_DIR, place, result_file
from ..store.record import catalogue_graph, catalogue_point
from .manifest import DONE, Manifest

TEMPORARY = re.compile(r"^\.(?:.+\.(?P<pid>\d+)\.tmp|parquet-(?P<ppid>\d+)-.+)$")
"""results.py's ``.<name>.<pid>.tmp`` and store/parquet.py's ``.parquet-<pid>-<name>``"""


def repair(manifest: Manifest, stream: TextIO) -> None:
    """Clear and complete what a killed mwperf left in ``manifest``'s sweep folder; a line on
    ``stream`` for each thing done."""
    def say(line: str) -> None:
        stream.write(f"mwperf: {line}\n")
        stream.flush()

    folder = manifest.folder
    for path in _dead_temporaries(folder):
        with contextlib.suppress(OSError):
            path.unlink()
    listed = manifest.listed_results()
    for point in _half_saved(folder):
        if f"{POINTS_DIR}/{point.name}" in listed:
            continue  # listed but without its result: adopt() made its entry pending again
        shutil.rmtree(point, ignore_errors=True)
        say(f"removed {point}: mwperf stopped while saving it (no result file); measured again")
    for entry, point in _uncatalogued(manifest):
        say(f"cataloguing {point} (saved, but mwperf stopped before its catalogue entry)")
        path = result_file(point) or point
        try:
            document = read_document(path)
            result = parse_result(document, str(path))
        except NotReadable as exc:
            raise RunError(f"cannot catalogue {point}: {exc}") from None
        if is_stream(result):
            catalogue_point(point, document, entry.index, entry.repetition, say)
        else:
            catalogue_graph(point, document, entry.index, entry.repetition, say)


def _dead_temporaries(folder: Path) -> Iterator[Path]:
    """Temporary files in the sweep folder whose writer is no longer running."""
    for path in folder.rglob(".*"):
        match = TEMPORARY.match(path.name)
        if match and path.is_file() and start_time(int(match["pid"] or match["ppid"])) is None:
            yield path


def _half_saved(folder: Path) -> list[Path]:
    """The point folders under ``points/`` without a result file."""
    points = folder / POINTS_DIR
    if not points.is_dir():
        return []
    return sorted(p for p in points.iterdir() if p.is_dir() and result_file(p) is None)


def _uncatalogued(manifest: Manifest) -> list[tuple[object, Path]]:
    """(entry, point folder) of every kept point the catalogue does not list."""
    kept = [(e, manifest.folder / e.result) for e in manifest.entries
            if e.status in DONE and e.result and result_file(manifest.folder / e.result)]
    if not kept:
        return []
    root = place(kept[0][1]).root
    known: set[str] = set()
    if (root / CATALOGUE_NAME).is_file():
        try:
            with connect(root, read_only=True, views=False) as con:
                # a stream point is catalogued when its points row is (its flows' graph_runs
                # row goes in with it); a graph point when its graph_runs row of kind graph is
                for sql in ("SELECT folder FROM points WHERE run_id = ?",
                            "SELECT folder FROM graph_runs WHERE kind = 'graph' AND run_id = ?"):
                    known |= {row[0] for row in con.execute(
                        sql, [manifest.folder.name]).fetchall()}
        except MwperfError:  # unreadable, or an older schema: cataloguing a point mends it
            pass  # (store/record.py rebuilds an unreadable one, connect migrates)
    return [(e, p) for e, p in kept if place(p).relative(p) not in known]
