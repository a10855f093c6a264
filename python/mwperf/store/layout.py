"""Where a point folder sits in a results folder, and which mwperf run it belongs to.

Two layouts exist: a single point is ``<results>/<point id>/``; a sweep (suite or scenario) is
``<results>/<sweep folder>/points/<point id>/`` with its ``sweep.json`` manifest beside
``points/``. A graph run (``graph-result.json`` in place of
``result.json``) is laid out the same way, alone or as a sweep's point. The run of a single
point is the point itself (kind ``point``); the run of a swept
point is its sweep folder (kind ``sweep``), named ``<stamp>-[suite-]<scenario>-<hex>``. An
import (mwperf.imports) has the sweep layout with ``"kind": "import"`` in its sweep.json.
"""

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

POINTS_DIR = "points"
RESULT_NAME = "result.json"
GRAPH_RESULT_NAME = "graph-result.json"
"""a graph point's result (graph/measure.py), in place of result.json"""
MANIFEST_NAME = "sweep.json"
SWEEP_NAME = re.compile(r"^\d{8}T\d{6}Z-(?:suite-)?(?P<scenario>.+)-[0-9a-f]{4}$")
REPETITION = re.compile(r"\(rep (\d+)/\d+\)")
"""how a manifest entry's label names a repetition"""
POINT_GLOBS = (f"*/{RESULT_NAME}", f"*/{POINTS_DIR}/*/{RESULT_NAME}")
"""the result.json files of a results folder, both layouts"""
GRAPH_GLOBS = (f"*/{GRAPH_RESULT_NAME}", f"*/{POINTS_DIR}/*/{GRAPH_RESULT_NAME}")
"""the graph-result.json files of a results folder: a graph run alone, or a sweep's graph
point (the same two layouts)"""


@dataclass(frozen=True)
class Placement:
    """A point folder's results folder and run."""

    root: Path
    """the results folder (holds the catalogue)"""
    run_folder: Path
    """the point folder itself (kind point) or its sweep folder (kind sweep)"""
    kind: str

    @property
    def run_id(self) -> str:
        """The run's id: its folder name."""
        return self.run_folder.name

    def relative(self, path: Path) -> str:
        """``path`` relative to the results folder, with forward slashes."""
        return path.resolve().relative_to(self.root.resolve()).as_posix()

    def scenario(self) -> str | None:
        """The sweep's scenario name (from sweep.json, else its folder name); None for a point."""
        if self.kind == "point":
            return None
        manifest = _json_or_none(self.run_folder / MANIFEST_NAME)
        if isinstance(manifest, dict) and isinstance(manifest.get("scenario"), str):
            return manifest["scenario"]
        match = SWEEP_NAME.match(self.run_id)
        return match["scenario"] if match else None

    def manifest_entry(self, point_dir: Path) -> tuple[int | None, int | None]:
        """The point's index and repetition number in the sweep's manifest (None when unlisted)."""
        manifest = _json_or_none(self.run_folder / MANIFEST_NAME)
        entries = manifest.get("entries") if isinstance(manifest, dict) else None
        wanted = f"{POINTS_DIR}/{point_dir.name}"
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and entry.get("result") == wanted:
                index = entry.get("index")
                rep = REPETITION.search(str(entry.get("label") or ""))
                return (index if isinstance(index, int) else None), (int(rep[1]) if rep else 1)
        return None, None


def place(point_dir: Path) -> Placement:
    """The placement of ``point_dir`` (either layout)."""
    if point_dir.parent.name == POINTS_DIR:
        sweep = point_dir.parent.parent
        manifest = _json_or_none(sweep / MANIFEST_NAME)
        kind = "import" if isinstance(manifest, dict) and manifest.get("kind") == "import" \
            else "sweep"
        return Placement(sweep.parent, sweep, kind)
    return Placement(point_dir.parent, point_dir, "point")


def point_folders(root: Path) -> list[Path]:
    """Every point folder under ``root`` that holds a result.json, sorted."""
    return sorted(p.parent for pattern in POINT_GLOBS for p in root.glob(pattern))


def graph_folders(root: Path) -> list[Path]:
    """Every graph run folder under ``root`` (holding a graph-result.json), sorted."""
    return sorted(p.parent for pattern in GRAPH_GLOBS for p in root.glob(pattern))


def result_file(folder: Path) -> Path | None:
    """The result of a point folder (result.json) or graph run folder (graph-result.json);
    None when it holds neither."""
    for name in (RESULT_NAME, GRAPH_RESULT_NAME):
        if (folder / name).is_file():
            return folder / name
    return None


def _json_or_none(path: Path) -> Any:
    try:
        return json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
