"""The result directory of a point: result.json, agents/<role>.json, samples.csv, daemons/.

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
        _publish(directory / "samples.csv", lambda tmp: shutil.copyfile(outcome.samples_path, tmp))
    if outcome.daemons_dir is not None and outcome.daemons_dir.is_dir():
        for source in sorted(outcome.daemons_dir.iterdir()):  # logs and generated configurations
            if source.is_file():
                _publish(directory / "daemons" / source.name,
                         lambda tmp, src=source: shutil.copyfile(src, tmp))
    if outcome.profile_dir is not None and outcome.profile_dir.is_dir():
        for source in sorted(outcome.profile_dir.iterdir()):  # flame graphs, stacks, tops
            if source.is_file() and source.suffix in (".svg", ".folded", ".txt"):
                _publish(directory / "profile" / source.name,
                         lambda tmp, src=source: shutil.copyfile(src, tmp))
    if outcome.alloc_sites_dir is not None and outcome.alloc_sites_dir.is_dir():
        for source in sorted(outcome.alloc_sites_dir.iterdir()):  # heaptrack records, tables
            if source.is_file() and source.name.endswith((".txt", ".heaptrack.gz")):
                _publish(directory / "alloc-sites" / source.name,
                         lambda tmp, src=source: shutil.copyfile(src, tmp))
    write_json(directory / "result.json", result)
    return directory


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
