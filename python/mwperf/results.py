"""The result directory of a point: result.json, agents/<role>.json, samples.csv (several topics:
samples.<topic>.csv each), daemons/.

Every file is written atomically (a temporary file beside it, then os.replace), so a reader
never sees half a result, even when mwperf is interrupted while saving.
"""

import contextlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import RunError
from .runner import Outcome


def save_point(outcome: Outcome, directory: Path) -> Path:
    """Write one point's files into ``directory`` (created) and return it."""
    result = outcome.result
    for agent in result["agents"]:
        write_json(directory / "agents" / f"{agent['role']}.json", agent)
    if outcome.samples_path is not None:
        _copy(outcome.samples_path, directory / "samples.csv")
    for path in outcome.topic_samples:  # named as the result's per_topic[].samples_file
        _copy(path, directory / path.name)
    _copy_folder(outcome.daemons_dir, directory / "daemons",  # logs, generated configurations
                 lambda source: True)
    _copy_folder(outcome.profile_dir, directory / "profile",  # flame graphs, stacks, tops
                 lambda source: source.suffix in (".svg", ".folded", ".txt"))
    _copy_folder(outcome.alloc_sites_dir, directory / "alloc-sites",  # heaptrack records, tables
                 lambda source: source.name.endswith((".txt", ".heaptrack.gz")))
    _copy_folder(outcome.layers_dir, directory / "layers",  # each agent's per-message rows
                 lambda source: source.suffix == ".csv")
    write_json(directory / "result.json", result)
    return directory


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


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, atomically."""
    _publish(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def _publish(path: Path, fill: Callable[[Path], object]) -> None:
    """Let ``fill(tmp)`` write a temporary file beside ``path``, then rename it into place."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fill(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise RunError(f"cannot write {path}: {exc.strerror or exc}") from None
