"""A sweep's points as the summary sees them: the planned point (its axis values), how it ended,
its table row and its per-topic measurements. Points measured by this run come from their
digests in memory, those kept from an earlier run (--resume) from their result.json, one at a
time.
"""

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..store.layout import GRAPH_RESULT_NAME, RESULT_NAME
from ..show.table import Row
from .digest import Digest, digest
from .expand import PlannedPoint
from .manifest import PENDING, SKIPPED
from .sweep import SweepRun
from ..result.load import NotReadable, as_stream, load_result


@dataclass(frozen=True)
class Observation:
    """One point of the sweep after the run."""

    point: PlannedPoint
    status: str
    reason: str | None
    row: Row
    per_topic: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)
    per_subscriber: list[dict[str, Any]] = field(default_factory=list)
    graph: list[str] = field(default_factory=list)
    """a graph point: its chains and worst edges, a line each"""
    throughput: str | None = None
    """a throughput point: what it delivered, one line (digest.throughput_line)"""
    gates: list[dict[str, Any]] = field(default_factory=list)
    """its gates (digest.Digest.gates)"""

    @property
    def measured(self) -> bool:
        """True when the point has response-time numbers."""
        return self.row.p50_ns is not None


def observations(run: SweepRun) -> list[Observation]:
    """Every point that ran or was refused (not the skipped or never reached ones)."""
    found = []
    for point, entry in zip(run.sweep.points, run.entries):
        if entry.status in (PENDING, SKIPPED):
            continue
        kept = run.digests.get(point.index) or _saved(run.folder, entry.result)
        if kept is not None:
            row = replace(kept.row, status=entry.status,
                          status_reason=entry.reason)  # the sweep's verdict (e.g. a timeout)
            found.append(Observation(point, entry.status, entry.reason, row, kept.per_topic,
                                     kept.warnings, kept.per_subscriber, kept.graph,
                                     kept.throughput, kept.gates))
            continue
        cfg = run.sweep.configs[point.index]
        shown = (("graph", 0.0, cfg.graph.graph.name, None) if cfg.graph is not None else
                 (cfg.mode, cfg.rate, cfg.payload, cfg.payload_bytes))
        found.append(Observation(point, entry.status, entry.reason, Row(
            cfg.transport, *shown, status=entry.status, status_reason=entry.reason)))
    return found


def _saved(folder: Path | None, location: str | None) -> Digest | None:
    if folder is None or location is None:
        return None
    path = folder / location / RESULT_NAME
    if not path.is_file():  # a graph point's
        path = folder / location / GRAPH_RESULT_NAME
    try:
        return digest(as_stream(load_result(path)), location)
    except NotReadable:
        return None
