"""``mwperf import``: results of other benchmark tools into the catalogue, as runs of kind
``import`` with their source (tool, format, file) recorded in each point's result, so
``mwperf report`` and ``mwperf compare`` treat them like mwperf's own.

An import is written in the sweep layout of mwperf.store (``<results>/<stamp>-import-<tool>-
<hex>/points/<point>/result.json`` plus a sweep.json saying ``"kind": "import"``) and
catalogued with the store's own ingest, so ``mwperf results --rebuild`` recreates it too.
Every file is read and checked before anything is written.
"""

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from ..result.save import written
from ..results import write_json
from ..session import stamp
from ..store import ingest_point
from . import performance_test, ros2_performance
from .summary import Imported, run_result

LOADERS: dict[str, Callable[[Path], Imported]] = {
    "performance-test": performance_test.load, "ros2-performance": ros2_performance.load}


def import_files(root: Path, tool: str, targets: Sequence[Path]) -> Path:
    """Import ``targets`` (files or folders of ``tool``'s output) as one run; its folder."""
    imported = [LOADERS[tool](target) for target in targets]
    run = root / f"{stamp()}-import-{tool}-{os.urandom(2).hex()}"
    entries = []
    for index, item in enumerate(imported, start=1):
        point_id = f"{run.name}-{index:03d}"
        folder = run / "points" / point_id
        write_json(folder / "result.json", written(run_result(item, point_id)))  # v3
        entries.append({"index": index, "label": item.source["file"],
                        "result": f"points/{point_id}"})
    write_json(run / "sweep.json", {"kind": "import", "scenario": f"import:{tool}",
                                    "sources": [i.source for i in imported],
                                    "entries": entries})
    for index, entry in enumerate(entries, start=1):
        ingest_point(run / entry["result"], index=index, repetition=1)
    return run
