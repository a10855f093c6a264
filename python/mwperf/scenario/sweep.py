"""Running a scenario: every point validated first, then measured one after the other into one
sweep folder, ``<results>/<stamp>-<scenario>-<hex>/`` (``points/<point id>/`` + ``sweep.json``
+ ``summary.{md,json}``).

A point whose transport is not built into the agent is skipped with a note; one the agent
refuses (e.g. UDP beyond a datagram) is "not supported"; a point that fails is recorded with
its reason and the sweep goes on; a point over the scenario's timeout is stopped and recorded
(the sweep goes on); Ctrl-C ends the sweep after the point in flight (kept, partial). The
manifest is rewritten after every point, so --resume measures only what is missing. A sweep
folder the disk refuses (full, read-only) ends the sweep: the point in flight is kept in
memory for the summary (``failed``, with why, when its folder could not be written), and the
error is the run's (``SweepRun.not_saved``), raised once the summary is out.
"""

import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agent import Agent
from ..config import PointConfig
from ..errors import MwperfError, NotSaved, UsageError
from ..results import WriteFailed
from ..result.load import as_stream, parse_result
from ..runner import Outcome, StoppedRunError
from ..session import measure, stamp
from ..store.layout import POINTS_DIR
from .check import check_points
from .deadline import Deadline, deadline
from .digest import Digest, digest
from .expand import PlannedPoint, expand
from .manifest import DONE, NOT_SUPPORTED, PENDING, SKIPPED, Entry, Manifest
from .model import Scenario
from .progress import Progress, length_note, planned_s
from .result_line import result_line


@dataclass
class Sweep:
    """A scenario expanded and validated against an agent: ready to run."""

    scenario: Scenario
    points: list[PlannedPoint]
    configs: dict[int, PointConfig]
    built: list[str]

    def skipped(self, point: PlannedPoint) -> str | None:
        """Why ``point`` is not measured by this agent, or None."""
        if point.transport in self.built:
            return None
        return f"transport '{point.transport}' is not built into the agent"


@dataclass
class SweepRun:
    """What running a sweep left: its entries (in point order), folder, and whether the user
    stopped it."""

    sweep: Sweep
    entries: list[Entry]
    folder: Path | None
    interrupted: bool
    digests: dict[int, Digest]
    """index -> what the summary needs of the points measured by this run (earlier ones are
    read from their folders)"""
    not_saved: NotSaved | None = None
    """the first write the disk refused (the sweep stopped there)"""


MERGED = ("gates",)
"""conditions that add to the scenario's own field rather than repeat it (--gate: the
scenario's gates and the command line's all apply)"""


def plan_sweep(scenario: Scenario, agent: Agent, conditions: dict[str, Any]) -> Sweep:
    """Expand ``scenario`` for ``agent`` and validate every point (UsageError with FILE:LINE);
    ``conditions`` (command-line options for every point) may not repeat a field of the file
    (except MERGED ones)."""
    for name in conditions:
        field = scenario.get(name)
        if field is not None and name not in MERGED:
            raise UsageError(f"--{name.replace('_', '-')}: scenario '{scenario.name}' sets "
                             f"'{name}' itself ({scenario.where}:{field.line}); give one of them")
    built = agent.transports()
    points = expand(scenario, built, conditions)
    return Sweep(scenario, points, check_points(scenario, points, lambda: agent), built)


def new_folder(results_dir: Path, scenario: Scenario) -> Path:
    """``<results>/<stamp>-<scenario>-<4 hex>``."""
    return results_dir / f"{stamp()}-{scenario.name}-{secrets.randbits(16):04x}"


def run_sweep(sweep: Sweep, agent: Agent, manifest: Manifest | None,
              progress: Progress) -> SweepRun:
    """Measure every point of ``sweep`` not already done in ``manifest`` (None: save nothing)."""
    entries = (manifest.entries if manifest is not None else
               [Entry(p.index, p.label(), p.config_hash(), p.repetition) for p in sweep.points])
    by_index = {entry.index: entry for entry in entries}
    progress.plan(sum(planned_s(sweep.configs[p.index]) for p in sweep.points
                      if by_index[p.index].status not in DONE and not sweep.skipped(p)))
    folder = manifest.folder if manifest is not None else None
    digests: dict[int, Digest] = {}
    if manifest is not None:
        manifest.save()  # a folder the disk refuses fails here, before anything is measured
    run = SweepRun(sweep, entries, folder, False, digests)
    try:
        run.interrupted = _run_points(sweep, agent, manifest, progress, by_index, run)
    except KeyboardInterrupt:  # between two points: nothing in flight to keep
        run.interrupted = True
    progress.close()
    return run


def _run_points(sweep: Sweep, agent: Agent, manifest: Manifest | None, progress: Progress,
                by_index: dict[int, Entry], run: SweepRun) -> bool:
    """The loop over the points; True when the user stopped it or the disk refused a write
    (``run.not_saved``)."""
    folder = manifest.folder if manifest is not None else None
    for point in sweep.points:
        entry = by_index[point.index]
        if entry.status in DONE:
            progress.note(point.index, f"{entry.label}: {entry.status} (kept from the earlier run)")
            continue
        why, interrupted = sweep.skipped(point), False
        if why is not None:
            entry.status, entry.reason = SKIPPED, why
            progress.note(point.index, f"{entry.label}: {SKIPPED} ({why})")
        else:
            cfg = sweep.configs[point.index]
            progress.start(point.index, entry.label, planned_s(cfg), length_note(cfg))
            interrupted, measured = _measure(sweep, point, entry, agent, folder, run)
            result = None if measured is None else as_stream(parse_result(measured, entry.label))
            if result is not None:
                run.digests[point.index] = digest(result, entry.result)
            if entry.status == PENDING:  # stopped before anything was measured
                return True
            progress.finish(point.index, result_line(entry, result))
        if manifest is not None:
            try:
                manifest.save()
            except WriteFailed as exc:
                run.not_saved = run.not_saved or NotSaved(
                    f"{manifest.folder}: {exc.reason} while {exc.within(manifest.folder)}; the "
                    f"points measured are in its points/ folder: once the disk has room, "
                    f"'mwperf run --resume {manifest.folder}' takes them over")
                return True
        if interrupted or run.not_saved is not None:
            return True
    return False


def _measure(sweep: Sweep, point: PlannedPoint, entry: Entry, agent: Agent,
             folder: Path | None, run: SweepRun) -> tuple[bool, dict[str, Any] | None]:
    """Measure one point into ``entry``: (whether the user asked the sweep to stop, the
    run-result if there is one); a write the disk refused goes to ``run.not_saved``."""
    cfg = sweep.configs[point.index]
    timer = Deadline()
    started = time.monotonic()
    stop = False
    try:
        with deadline(sweep.scenario.timeout_ns, timer):
            outcome, saved = measure(cfg, agent, folder / POINTS_DIR if folder else None,
                                     index=point.index, repetition=point.repetition)
    except UsageError as exc:  # the agent refused the point: the transport cannot carry it
        entry.status, entry.reason = NOT_SUPPORTED, str(exc)
    except KeyboardInterrupt as exc:
        if not timer.fired:  # Ctrl-C before the agents ran: nothing of this point to keep
            return True, None
        entry.status, entry.reason = "failed", getattr(exc, "reason", str(exc))
    except NotSaved as exc:  # measured, but the disk refused its folder or the catalogue
        outcome = exc.outcome
        if not isinstance(outcome, Outcome):
            raise
        run.not_saved = run.not_saved or exc
        result = outcome.result
        if isinstance(exc.saved, Path) and folder is not None:  # saved, not catalogued
            entry.status, entry.reason = result["status"], result["status_reason"]
            entry.result = exc.saved.relative_to(folder).as_posix()
        else:  # not saved: measured again by --resume
            entry.status, entry.reason = "failed", str(exc)
        entry.wall_s = round(time.monotonic() - started, 3)
        return True, result
    except MwperfError as exc:
        entry.status, entry.reason = "failed", str(exc)
        stop = isinstance(exc, StoppedRunError) and not timer.fired
    else:
        result = outcome.result
        entry.status, entry.reason = result["status"], result["status_reason"]
        if timer.fired:  # the result's own reason is what the stop did to the agents
            entry.status = "failed"
            entry.reason = f"{timer.reason}; {entry.reason}" if entry.reason else timer.reason
        if saved is not None and folder is not None:
            entry.result = saved.relative_to(folder).as_posix()
        stop = outcome.interrupted and not timer.fired
        entry.wall_s = round(time.monotonic() - started, 3)
        return stop, result
    entry.wall_s = round(time.monotonic() - started, 3)
    return stop, None
