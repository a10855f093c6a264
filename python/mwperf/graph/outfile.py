"""Where a written graph file goes (``--write-graph FILE``, ``mwperf bag graph --out FILE``):
checked before any work, so a 30 s probe does not end in 'cannot write'; then written whole or
not at all (a temporary file beside it, renamed into place). An existing file is replaced."""

import contextlib
import os
import tempfile
from pathlib import Path

from ..errors import RunError, UsageError


def check_out(text: str, flag: str) -> Path:
    """The output path of ``flag``: its folder exists and is writable, and it is not a folder."""
    if not text.strip():
        raise UsageError(f"{flag}: expected a file name such as robot.yaml, got {text!r}")
    path = Path(text)
    folder = path.parent
    if path.is_dir():
        raise UsageError(f"{flag} {text}: is a folder; give a file name such as "
                         f"{path / 'graph.yaml'}")
    if not folder.is_dir():
        raise UsageError(f"{flag} {text}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UsageError(f"{flag} {text}: cannot write there (permission denied)")
    return path


def write_whole(path: Path, text: str, flag: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in its folder and a rename."""
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)  # as open() would make it, not mkstemp's 0600
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise RunError(f"{flag} {path}: cannot write: {exc.strerror or exc}") from None
