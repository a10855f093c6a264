"""The result directory of a point: result.json, agents/<role>.json, samples.csv (several topics:
samples.<topic>.csv each), daemons/; of a graph run: result.json, graph.html and the files it
kept (graph/measure.py).

Every file is written atomically (a temporary file beside it, flushed to the disk, then
os.replace), so a reader never sees half a result, even when mwperf is interrupted while
saving, or the power goes. result.json is written last: a point folder without it is not a
point (the store, --resume and the reports pass over it). A folder that cannot be written whole
(a full or read-only file system) is removed again and :class:`~mwperf.errors.NotSaved` names
the folder and what failed; the measurement stays in memory for the caller to report.
"""

import contextlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import NotSaved, RunError
from .runner import Outcome
from .store.parquet import sync_file


class WriteFailed(RunError):
    """A file (or its folder) could not be written; ``reason`` is the system's word for why."""

    def __init__(self, path: Path, reason: str, creating: bool = False) -> None:
        super().__init__(f"cannot {'create' if creating else 'write'} {path}: {reason}")
        self.path = path
        self.reason = reason
        self.creating = creating

    def within(self, folder: Path) -> str:
        """What failed, relative to ``folder``: 'writing samples.csv', 'creating agents/'."""
        try:
            name = self.path.relative_to(folder).as_posix()
        except ValueError:
            name = str(self.path)
        if self.creating:
            return "creating the folder" if name == "." else f"creating {name}/"
        return f"writing {name}"


def save_point(outcome: Outcome, directory: Path, document: dict[str, Any],
               extra: dict[str, bytes] | None = None) -> Path:
    """Write one point's or graph run's files into ``directory`` (created), ``extra`` (path in
    the folder -> contents: a graph run's drawing and the files it kept) among them,
    ``document`` (the result as saved: result/save.py's ``written``) as its result.json last,
    and return it. On a failure the folder is removed again and NotSaved (carrying ``outcome``)
    names it and what failed; a Ctrl-C while saving does the same, with the exit code of an
    interruption."""
    fresh = not directory.exists()
    try:
        _save(outcome, directory, document, extra or {})
    except WriteFailed as exc:
        _discard(directory, fresh)
        raise NotSaved(f"{directory}: {exc.reason} while {exc.within(directory)}; the "
                       f"measurement above was not saved", outcome) from None
    except KeyboardInterrupt:
        _discard(directory, fresh)
        outcome.interrupted = True
        raise NotSaved(f"{directory}: interrupted while saving it; the measurement above was "
                       f"not saved", outcome, exit_code=130) from None
    return directory


KEPT: dict[str, Callable[[Path], bool]] = {
    "profile": lambda source: source.suffix in (".svg", ".folded", ".txt"),  # flame graphs,
    # stacks, tops (not perf.data)
    "alloc-sites": lambda source: source.name.endswith((".txt", ".heaptrack.gz")),  # records
    # and tables (not the raw record)
}
"""a part's folder of files saved with the result -> which of its files are kept"""


def _save(outcome: Outcome, directory: Path, document: dict[str, Any],
          extra: dict[str, bytes]) -> None:
    result = outcome.result
    make_folder(directory)
    for name, data in extra.items():
        write_bytes(directory / name, data)
    for agent in result.get("agents", []):  # a graph run's nodes report inside the result
        write_json(directory / "agents" / f"{agent['role']}.json", agent)
    if outcome.samples_path is not None:
        _copy(outcome.samples_path, directory / "samples.csv")
    for path in outcome.topic_samples:  # named as the result's per_topic[].samples_file
        _copy(path, directory / path.name)
    _copy_folder(outcome.daemons_dir, directory / "daemons",  # logs, generated configurations
                 lambda source: True)
    _copy_folder(outcome.profile_dir, directory / "profile", KEPT["profile"])
    _copy_folder(outcome.alloc_sites_dir, directory / "alloc-sites", KEPT["alloc-sites"])
    _copy_folder(outcome.layers_dir, directory / "layers",  # each agent's per-message rows
                 lambda source: source.suffix == ".csv")
    write_json(directory / "result.json", document)  # last: every other file is on the disk


def _discard(directory: Path, fresh: bool) -> None:
    """Remove what a failed save wrote (only a folder it created: run ids are new)."""
    if fresh:
        shutil.rmtree(directory, ignore_errors=True)


def make_folder(folder: Path) -> None:
    """Create ``folder`` and its parents, each new one's name flushed to the disk."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    for path in reversed(missing):
        try:
            path.mkdir(exist_ok=True)
        except OSError as exc:
            raise WriteFailed(path, exc.strerror or str(exc), creating=True) from None
        _sync_folder(path.parent)


def _copy(source: Path, target: Path) -> None:
    def fill(tmp: Path) -> None:
        shutil.copyfile(source, tmp)
    _publish(target, fill)


def _copy_folder(folder: Path | None, target: Path, keep: Callable[[Path], bool]) -> None:
    """The files of ``folder`` that ``keep`` wants, into ``target`` (nothing without it)."""
    if folder is None or not folder.is_dir():
        return
    for source in sorted(folder.iterdir()):
        if source.is_file() and keep(source):
            _copy(source, target / source.name)


def write_json(path: Path, document: Any) -> None:
    """Write ``document`` as indented JSON to ``path``, atomically."""
    data = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    _publish(path, lambda tmp: tmp.write_text(data, encoding="utf-8"))


def write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path``, atomically."""
    _publish(path, lambda tmp: tmp.write_bytes(data))


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, atomically."""
    _publish(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def _publish(path: Path, fill: Callable[[Path], object]) -> None:
    """Let ``fill(tmp)`` write a temporary file beside ``path``, flush it to the disk, then
    rename it into place (a WriteFailed naming ``path`` if any step fails; no temporary file
    stays behind, also on Ctrl-C)."""
    make_folder(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fill(tmp)
        sync_file(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        raise WriteFailed(path, exc.strerror or str(exc)) from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """Flush ``folder``'s entries (names created or renamed in it) to the disk, where the file
    system allows it."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):  # some file systems refuse fsync on a folder
            os.fsync(fd)
    finally:
        os.close(fd)
