"""Cataloguing a point (or graph run) just measured, as ``mwperf run`` does after saving its
folder.

The measurement must never be lost to a catalogue problem: the folder is already saved, so a
busy or failing catalogue is a warning on stderr (the folder can be added later with ``mwperf
results --rebuild``), and an unreadable catalogue is rebuilt from the folders, with a message.
A disk that refuses the write (full, read-only) is an error, NotSaved naming the folder: every
later point would meet it too. The catalogue is then as it was before (one transaction).
"""

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import MwperfError, NotSaved
from .catalogue import CatalogueUnreadable, rebuild_hint
from .duckerr import disk_problem
from .graph_ingest import ingest_graph
from .ingest import ingest_point
from .layout import place
from .rebuild import rebuild


def catalogue_point(point_dir: Path, result: dict[str, Any], index: int | None = None,
                    repetition: int | None = None,
                    notify: Callable[[str], None] | None = None) -> None:
    """:func:`ingest_point` for a point just measured: a catalogue problem never loses the
    measurement (its folder is saved); an unreadable catalogue is rebuilt, with a message."""
    _guarded(point_dir, lambda: ingest_point(point_dir, result, index, repetition), notify)


def catalogue_graph(folder: Path, result: dict[str, Any], index: int | None = None,
                    repetition: int | None = None,
                    notify: Callable[[str], None] | None = None) -> None:
    """:func:`ingest_graph` for a graph run just saved, with the same guarantees as
    :func:`catalogue_point`."""
    _guarded(folder, lambda: ingest_graph(folder, result, index, repetition), notify)


def catalogued(outcome: Any, catalogue: Callable[[], None]) -> None:
    """Catalogue a run just saved (``catalogue()``, one of the above) for ``outcome`` (the
    runner's Outcome): a Ctrl-C then keeps it, saved, and marks the outcome interrupted (a suite
    stops after it); a disk that refuses the catalogue raises NotSaved carrying the outcome, to
    be reported first."""
    try:
        catalogue()
    except KeyboardInterrupt:  # saved but not catalogued: keep it, stop after it
        outcome.interrupted = True
    except NotSaved as exc:  # the disk refused the catalogue: report the measurement
        exc.outcome = outcome
        raise


def _guarded(point_dir: Path, ingest: Callable[[], None],
             notify: Callable[[str], None] | None) -> None:
    say = notify or (lambda line: print(f"mwperf: {line}", file=sys.stderr))
    try:
        ingest()
    except CatalogueUnreadable as exc:
        say(f"{exc}; rebuilding it from the point folders now")
        try:
            rebuild(place(point_dir).root)
        except MwperfError as again:
            say(f"warning: the rebuild failed too: {again}")
    except MwperfError as exc:
        problem = disk_problem(exc)
        if problem is None:
            say(f"warning: {point_dir} is saved but not in the catalogue: {exc}")
            return
        root = place(point_dir).root
        raise NotSaved(f"{root}: {problem} while writing the catalogue; the measurement above "
                       f"is saved in {point_dir} but not catalogued: add it with "
                       f"'{rebuild_hint(root)}' once the disk has room (or use another "
                       f"--results folder)", saved=point_dir) from None
    except KeyboardInterrupt:
        say(f"interrupted while cataloguing {point_dir} (saved, not catalogued: add it with "
            f"'{rebuild_hint(place(point_dir).root)}')")
        raise
