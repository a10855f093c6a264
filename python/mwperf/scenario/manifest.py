"""A sweep's manifest, ``<sweep folder>/sweep.json``: which points it has, how each ended, and
where its result is — rewritten atomically after every point, so a killed sweep leaves a
manifest that is true up to the last finished point.

The store reads ``scenario`` and each entry's ``index``, ``label`` ("... (rep 2/3)") and
``result`` ("points/<point id>"); --resume also uses ``hash`` (what was measured), ``status``
and, to resume from the folder alone, the scenario's ``source`` and ``quick``.
"""

import json
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..errors import UsageError
from ..results import write_json
from ..store.layout import MANIFEST_NAME, POINTS_DIR, RESULT_NAME
from .expand import PlannedPoint
from .model import Scenario

NOT_SUPPORTED = "not supported"
"""the transport cannot carry this point (the agent refused it): not a failure"""
SKIPPED = "skipped"
"""the transport is not built into the agent: not a failure"""
PENDING = "pending"
DONE = ("complete", NOT_SUPPORTED)
"""statuses --resume does not measure again"""


@dataclass
class Entry:
    """One point of the sweep as the manifest records it."""

    index: int
    label: str
    hash: str
    repetition: int
    status: str = PENDING
    reason: str | None = None
    result: str | None = None
    """'points/<point id>' once saved"""
    wall_s: float | None = None
    """the point's wall time in mwperf (setup, measurement, teardown, saving)"""


@dataclass
class Manifest:
    """sweep.json of one sweep folder."""

    folder: Path
    scenario: str
    source: str
    quick: bool
    entries: list[Entry]
    created_at: str

    @classmethod
    def new(cls, folder: Path, scenario: Scenario, points: list[PlannedPoint]) -> "Manifest":
        """A manifest with every point pending."""
        return cls(folder, scenario.name, scenario.source, scenario.quick,
                   [Entry(p.index, p.label(), p.config_hash(), p.repetition) for p in points],
                   _now())

    @classmethod
    def load(cls, folder: Path) -> "Manifest":
        """The manifest of an existing sweep folder (for --resume)."""
        path = folder / MANIFEST_NAME
        try:
            data = json.loads(path.read_text("utf-8"))
            entries = [Entry(**{k: e.get(k) for k in Entry.__dataclass_fields__})
                       for e in data["entries"]]
            return cls(folder, data["scenario"], data.get("source") or "",
                       bool(data.get("quick")), entries, data.get("created_at") or _now())
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"--resume: {path} is not a sweep manifest mwperf can read "
                             f"({type(exc).__name__}: {exc}); give a sweep folder such as "
                             f"results/<time>-<scenario>-<id>") from None

    def adopt(self, points: list[PlannedPoint]) -> list[Entry]:
        """Entries for ``points`` of a resumed sweep: a finished entry with the same index and
        hash is kept (its result still there); every other point is pending again."""
        old = {e.index: e for e in self.entries}
        fresh = []
        for point in points:
            entry = old.get(point.index)
            if (entry is None or entry.hash != point.config_hash() or entry.status not in DONE
                    or (entry.result and not (self.folder / entry.result / RESULT_NAME).is_file())):
                entry = Entry(point.index, point.label(), point.config_hash(), point.repetition)
            fresh.append(entry)
        self.entries = fresh
        return fresh

    def listed_results(self) -> set[str]:
        """The 'points/<id>' folders the manifest refers to."""
        return {e.result for e in self.entries if e.result}

    def orphans(self) -> list[Path]:
        """Saved point folders the manifest does not list (the point in flight when a sweep
        was killed after saving it)."""
        listed = self.listed_results()
        return sorted(p.parent for p in (self.folder / POINTS_DIR).glob(f"*/{RESULT_NAME}")
                      if f"{POINTS_DIR}/{p.parent.name}" not in listed)

    def save(self) -> None:
        """Write sweep.json atomically."""
        write_json(self.folder / MANIFEST_NAME, {
            "scenario": self.scenario, "quick": self.quick, "created_at": self.created_at,
            "updated_at": _now(), "points": len(self.entries),
            "entries": [asdict(e) for e in self.entries], "source": self.source})


def _now() -> str:
    return f"{datetime.now(timezone.utc):%Y-%m-%dT%H:%M:%S.%fZ}"
