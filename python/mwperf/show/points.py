"""``mwperf show``: one point's full details after the fact, as a single run prints them.

A sweep's summary is one table row per point; what a point's run printed under its row
(service time, accounting, discovery, CPU, daemons, every emulated link's counters, the outage)
is still in its result. ``mwperf show`` prints it again for the points of a run in the
catalogue (RUN as ``mwperf report`` takes it, optionally narrowed by ``--point``), or for a
result file or point folder given by path; a graph run's result (graph-result.json, its folder)
shows its edges, calls, chains and nodes as ``mwperf run --graph`` printed them. Every result is
read through one reader (result/load.py) whatever its version.
"""

import json
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..report.select import resolve_runs
from ..store.catalogue import connect
from ..store.layout import GRAPH_RESULT_NAME, POINTS_DIR, RESULT_NAME
from ..result.load import NotReadable, as_stream, is_stream, load_result, parse_result
from . import graph as graph_show
from . import soak
from .details import render_details
from .table import label, render, render_notes, row_from_result

def load_targets(root: Path, targets: tuple[str, ...], point: int | None
                 ) -> list[tuple[str, dict[str, Any]]]:
    """(where, result) for each point TARGETS name: a path to a result file or point folder,
    or run ids/prefixes/``latest`` of the catalogue in ``root`` (no target: the latest run)."""
    paths = [t for t in targets if Path(t).exists()]
    runs = [t for t in targets if not Path(t).exists()]
    if point is not None and paths:
        raise UsageError(f"--point: only with runs of the catalogue, not with a path "
                         f"({paths[0]} is one point already)")
    found = [(str(f), _read(f)) for t in paths for f in _result_files(Path(t))]
    if runs or not paths:
        found += _from_catalogue(root, runs, point)
    return found


def render_points(found: list[tuple[str, dict[str, Any]]]) -> str:
    """Each result (v3, load_result's): a stream point's table row, the details under it and its
    warnings; a graph run's edges, calls, chains and nodes; then where it is."""
    blocks = []
    for where, result in found:
        if not is_stream(result):
            blocks.append(graph_show.render(result) + soak.render(result) + f"from {where}\n")
            continue
        shown = as_stream(result)
        row = row_from_result(shown, where)
        notes = render_notes([row], [(label(row), w) for w in shown.get("warnings") or []])
        blocks.append(render([row]) + render_details(shown) + notes + f"from {where}\n")
    return "\n".join(blocks)


def _result_files(path: Path) -> list[Path]:
    """A result file as it is; a point or graph run folder's result; a sweep folder's points'
    results."""
    if not path.is_dir():
        return [path]
    for name in (RESULT_NAME, GRAPH_RESULT_NAME):
        if (path / name).is_file():
            return [path / name]
    points = sorted(f for name in (RESULT_NAME, GRAPH_RESULT_NAME)
                    for f in (path / POINTS_DIR).glob(f"*/{name}"))
    if not points:
        raise UsageError(f"{path}: neither a point folder (with {RESULT_NAME}), a graph run's "
                         f"(with {GRAPH_RESULT_NAME}) nor a sweep folder (with {POINTS_DIR}/); "
                         f"give one of those, a result file, or a run id")
    return points


def _read(path: Path) -> dict[str, Any]:
    try:
        return load_result(path)
    except NotReadable as exc:
        raise UsageError(str(exc)) from None


def _from_catalogue(root: Path, runs: list[str], point: int | None
                    ) -> list[tuple[str, dict[str, Any]]]:
    with connect(root, read_only=True, views=False) as con:
        run_ids = resolve_runs(con, runs)
        # a run's stream points and graph runs (a stream point's graph_runs row points to
        # its points row: not twice)
        rows = con.execute(
            "SELECT folder, result FROM (SELECT folder, result, started_at, point_index, "
            "repetition, run_id FROM points UNION ALL SELECT folder, result, started_at, "
            "point_index, repetition, run_id FROM graph_runs WHERE kind = 'graph') "
            "WHERE list_contains(?, run_id) AND (? IS NULL OR point_index = ?) "
            "ORDER BY started_at, point_index, repetition",
            [run_ids, point, point]).fetchall()
    if not rows and point is not None:
        raise UsageError(f"--point {point}: run {', '.join(run_ids)} has no point {point} (the "
                         f"numbers are the sweep's, as its progress lines [N/M] show)")
    return [(str(root / folder), _parsed(json.loads(result), str(root / folder)))
            for folder, result in rows]


def _parsed(document: Any, where: str) -> dict[str, Any]:
    """``document``, just parsed from the catalogue, as v3 (a UsageError if unreadable)."""
    try:
        return parse_result(document, where, owned=True)
    except NotReadable as exc:
        raise UsageError(str(exc)) from None
