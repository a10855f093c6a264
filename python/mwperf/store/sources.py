"""What a RUN argument of ``mwperf report`` / ``mwperf compare`` names: a run of the catalogue
in ``--results`` (id, unique prefix, ``latest``), or a path, as ``mwperf show`` takes them:

- a result file (``result.json``, or a file ``mwperf run --json-out`` wrote; a graph run's
  ``graph-result.json`` too; any version, read by result/load.py): that one point or graph run;
- a point folder (holding ``result.json``) or graph run folder (``graph-result.json``): that
  point or graph run;
- a sweep folder (holding ``points/``): the sweep, every point of it (graph points too);
- a results folder (holding run folders, e.g. a CI artifact): its latest run.

The report and the comparison read everything through a catalogue (mwperf.store), so when a
RUN is a path, the runs named are staged in a temporary results folder — each point folder
re-created there with symlinks to the original files — and catalogued there. The originals are
only read: the Parquet files the catalogue needs are written into the staging folder (a CI
artifact may be read-only), and the staging folder is removed afterwards.
"""

import contextlib
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..result.load import NotReadable, load_result, written_as_graph_result
from .catalogue import CATALOGUE_NAME, catalogue_path, connect
from .layout import (GRAPH_RESULT_NAME, MANIFEST_NAME, POINTS_DIR, RESULT_NAME, graph_folders,
                     place, point_folders, result_file)
from .rebuild import rebuild

SKIPPED = {CATALOGUE_NAME, CATALOGUE_NAME + ".wal"}
"""files of a results folder never staged"""


@contextlib.contextmanager
def staged(root: Path, targets: Sequence[str], labels: Sequence[str] | None = None
           ) -> Iterator[tuple[Path, list[str]]]:
    """(the results folder to read, one run name per target). Without a path among ``targets``
    that is ``root`` and the targets as given; otherwise a temporary folder holding the runs
    named (paths and catalogue runs alike), with their run ids there."""
    labels = list(labels) if labels is not None else ["RUN"] * len(targets)
    for target, label in zip(targets, labels):
        if not _is_path(target) and ("/" in target or target.endswith(".json")):
            raise UsageError(f"{label}: {target}: no such file or folder (a run id has no "
                             f"'/'; list them with 'mwperf results')")
    if not any(_is_path(t) for t in targets):
        yield root, list(targets)
        return
    temp = Path(tempfile.mkdtemp(prefix="mwperf-runs-"))
    try:
        stage = _Stage(temp)
        names = [stage.add(_source(root, target, label), label)
                 for target, label in zip(targets, labels)]
        report = rebuild(temp)
        if report.skipped:
            folder, reason = report.skipped[0]
            raise UsageError(f"{stage.origin(folder)}: {reason}")
        yield temp, names
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _is_path(target: str) -> bool:
    return Path(target).exists()


def _source(root: Path, target: str, label: str) -> Path:
    """The folder or file ``target`` stands for (a catalogue run: its run folder)."""
    if _is_path(target):
        return Path(target).resolve()
    from ..report.select import resolve_one  # a catalogue run among paths
    with connect(root, read_only=True, views=False) as con:
        rows = con.execute("SELECT run_id, folder FROM runs ORDER BY started_at DESC NULLS LAST,"
                           " run_id DESC").fetchall()
    if not rows:
        raise UsageError(f"{label}: the results catalogue of {root} holds no runs yet")
    folders = dict(rows)
    return (root / folders[resolve_one([r[0] for r in rows], target, label)]).resolve()


class _Stage:
    """The temporary results folder being filled, run by run."""

    def __init__(self, temp: Path) -> None:
        self.temp = temp
        self.runs: dict[Path, str] = {}  # source -> staged run id
        self.points: dict[str, Path] = {}  # point id -> the source named that holds it
        self.given = temp  # the source being staged
        self.origins: dict[Path, Path] = {}  # staged point folder -> its original

    def origin(self, staged_folder: Path) -> Path:
        return self.origins.get(staged_folder, staged_folder)

    def add(self, source: Path, label: str) -> str:
        """Stage ``source`` (once, however often it is named); its run id in the stage."""
        if source in self.runs:
            return self.runs[source]
        self.given = source
        if source.is_file():
            run_id = self._file(source, label)
        elif result_file(source) is not None:
            run_id = self._point(source, self._name(source.name), label)
        elif (source / POINTS_DIR).is_dir():
            run_id = self._sweep(source, label)
        elif source.is_dir() and (point_folders(source) or graph_folders(source)):
            return self.add(_latest_run(source), label)
        else:
            raise UsageError(f"{label}: {source} is neither a result file, a point folder (with "
                             f"{RESULT_NAME} or {GRAPH_RESULT_NAME}), a sweep folder (with "
                             f"{POINTS_DIR}/) nor a results folder (with run folders); give one "
                             f"of those or a run id")
        self.runs[source] = run_id
        return run_id

    def _name(self, wanted: str) -> str:
        """``wanted``, or ``wanted~N`` when another source of that name is staged already."""
        name, n = wanted, 1
        while (self.temp / name).exists():
            n += 1
            name = f"{wanted}~{n}"
        return name

    def _file(self, source: Path, label: str) -> str:
        result = _read_result(source, label)
        if source.name in (RESULT_NAME, GRAPH_RESULT_NAME):  # a folder's own file: its samples
            return self.add(source.parent, label)  # come along
        folder = self.temp / self._name(str(result["run_id"]))
        folder.mkdir()
        graph = written_as_graph_result(result)  # an old graph run: found by its file name
        (folder / (GRAPH_RESULT_NAME if graph else RESULT_NAME)).symlink_to(source)
        self._claim(str(result["run_id"]), source, label)
        self.origins[folder] = source
        return folder.name

    def _point(self, source: Path, name: str, label: str, into: Path | None = None) -> str:
        """Stage a point folder or a graph run folder."""
        found = result_file(source)
        assert found is not None
        result = _read_result(found, label)
        folder = (into or self.temp) / name
        _link_contents(source, folder)
        self._claim(str(result["run_id"]), source, label)
        self.origins[folder] = source
        return name

    def _sweep(self, source: Path, label: str) -> str:
        name = self._name(source.name)
        sweep = self.temp / name
        (sweep / POINTS_DIR).mkdir(parents=True)
        if (source / MANIFEST_NAME).is_file():
            (sweep / MANIFEST_NAME).symlink_to(source / MANIFEST_NAME)
        points = sorted(p for p in (source / POINTS_DIR).iterdir() if result_file(p) is not None)
        if not points:
            raise UsageError(f"{label}: sweep folder {source} has no measured point yet (no "
                             f"{POINTS_DIR}/*/{RESULT_NAME} nor {GRAPH_RESULT_NAME})")
        for point in points:
            self._point(point, point.name, label, into=sweep / POINTS_DIR)
        return name

    def _claim(self, point_id: str, source: Path, label: str) -> None:
        if point_id in self.points:
            raise UsageError(f"{label}: point {point_id} ({source}) is in "
                             f"{self.points[point_id]} and in {self.given}; give it once (a "
                             f"point is one point of one run)")
        self.points[point_id] = self.given


def _link_contents(source: Path, folder: Path) -> None:
    """``folder`` with a symlink to each entry of ``source`` (Parquet files written there later
    replace their symlinks, never the originals)."""
    folder.mkdir(parents=True)
    for entry in source.iterdir():
        if entry.name not in SKIPPED:
            (folder / entry.name).symlink_to(entry)


def _read_result(path: Path, label: str) -> dict[str, Any]:
    """The result in ``path`` read as v3 (result/load.py); a usage error naming ``label``."""
    try:
        return load_result(path)
    except NotReadable as exc:
        raise UsageError(f"{label}: {exc}") from None


def _latest_run(results: Path) -> Path:
    """The run folder of ``results`` that started last (by its catalogue when it has one)."""
    if catalogue_path(results).is_file():
        with contextlib.suppress(Exception), connect(results, read_only=True, views=False) as con:
            row = con.execute("SELECT folder FROM runs ORDER BY started_at DESC NULLS LAST, "
                              "run_id DESC LIMIT 1").fetchone()
            if row:
                return (results / row[0]).resolve()
    starts: dict[Path, str] = {}
    for point in point_folders(results) + graph_folders(results):
        run = place(point).run_folder
        try:
            started = str(load_result(result_file(point) or point / RESULT_NAME)["started_at"])
        except NotReadable:
            started = ""
        starts[run] = max(starts.get(run, ""), started)
    return max(starts, key=lambda run: (starts[run], run.name)).resolve()
