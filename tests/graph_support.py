"""Helpers of the graph catalogue and report tests (no tests here): saved graph runs made from
a real one (tests/fixtures/graph/mobile-robot-baseline.json: mobile-robot over cyclonedds with
--baseline chain:scan_to_wheels, 1 s; its histograms trimmed), alone or as a sweep's points."""

import json
from pathlib import Path
from typing import Any

from mwperf.store.layout import GRAPH_RESULT_NAME

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "graph" / "mobile-robot-baseline.json"
FIXTURE_ID = "20261126T062119Z-cyclonedds-graph-ddb1"


def graph_result(run_id: str = FIXTURE_ID, **changes: Any) -> dict[str, Any]:
    """The fixture's graph-result with ``run_id`` and ``changes``."""
    result = json.loads(FIXTURE.read_text())
    result.update(run_id=run_id, **changes)
    return result


def save_graph(folder: Path, result: dict[str, Any]) -> Path:
    """``folder`` holding ``result`` as its graph-result.json (nothing catalogued)."""
    folder.mkdir(parents=True)
    (folder / GRAPH_RESULT_NAME).write_text(json.dumps(result))
    return folder


def graph_sweep(root: Path, name: str, ids: list[str], scenario: str = "graphs") -> Path:
    """A sweep folder ``name`` with a graph point per id (started a minute apart, the second
    one partial) and its sweep.json listing them; nothing catalogued."""
    sweep = root / name
    entries = []
    for index, graph_id in enumerate(ids, start=1):
        changes: dict[str, Any] = {"started_at": f"2026-11-26T07:0{index}:00.000Z"}
        if index == 2:
            changes.update(status="partial", status_reason="node 'planning' exited with 1")
        save_graph(sweep / "points" / graph_id, graph_result(graph_id, **changes))
        entries.append({"index": index, "label": f"{graph_id} (rep 1/1)",
                        "result": f"points/{graph_id}", "status": changes.get("status",
                                                                              "complete")})
    (sweep / "sweep.json").write_text(json.dumps({"scenario": scenario, "entries": entries}))
    return sweep
