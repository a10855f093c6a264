"""``mwperf run SCENARIO``: a new sweep or a resumed one, its dry-run listing, and the summary
written into the sweep folder.

--resume FOLDER reads FOLDER/sweep.json: without SCENARIO the scenario stored there is used
(with its quick flag). Points already complete (or not supported) whose index and config hash
match are kept; a point saved but not yet listed (mwperf was killed between saving it and
rewriting the manifest) is adopted when its configuration is the one planned; everything else
is measured again.
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agent import Agent
from ..durations import format_ns
from ..emulation.topology import Topology
from ..errors import NotSaved, UsageError
from ..result.load import NotReadable, load_result
from ..results import WriteFailed, write_json, write_text
from ..store.layout import MANIFEST_NAME, POINTS_DIR, RESULT_NAME
from .catalog import load_scenario
from .manifest import DONE, Manifest
from .model import Scenario
from .parse import parse_scenario
from .progress import Progress, planned_s
from .repair import repair
from .summary import Summary, summarize
from .sweep import Sweep, new_folder, plan_sweep, run_sweep


@dataclass
class Request:
    """What the command line asked for."""

    scenario: str | None
    quick: bool
    results_dir: Path | None
    resume: Path | None
    conditions: dict[str, Any]


def resolve(request: Request) -> tuple[Scenario, Manifest | None]:
    """The scenario to run and, with --resume, the manifest of the sweep to continue."""
    if request.resume is None:
        if request.scenario is None:
            raise UsageError("SCENARIO: missing")
        return load_scenario(request.scenario, request.quick), None
    if not (request.resume / MANIFEST_NAME).is_file():
        raise UsageError(f"--resume: {request.resume} has no {MANIFEST_NAME}; give a sweep "
                         f"folder such as results/<time>-<scenario>-<id>")
    manifest = Manifest.load(request.resume)
    if request.scenario is not None:
        scenario = load_scenario(request.scenario, request.quick or manifest.quick)
        if scenario.name != manifest.scenario:
            raise UsageError(f"--resume: {request.resume} is a sweep of scenario "
                             f"'{manifest.scenario}', not '{scenario.name}'")
        manifest.source = scenario.source
        return scenario, manifest
    if not manifest.source:
        raise UsageError(f"--resume: {request.resume / MANIFEST_NAME} does not hold its "
                         f"scenario; give it: 'mwperf run SCENARIO --resume FOLDER'")
    where = f"{request.resume / MANIFEST_NAME} (scenario '{manifest.scenario}')"
    return parse_scenario(manifest.source, where, manifest.scenario, manifest.quick), manifest


def dry_run(sweep: Sweep) -> str:
    """The points, one per line, and what running them would take."""
    lines = []
    total_s = 0.0
    for point in sweep.points:
        why = sweep.skipped(point)
        if why is None:
            total_s += planned_s(sweep.configs[point.index])
        lines.append(f"{point.index:>5}  {point.label()}" + (f"  [skipped: {why}]" if why else ""))
    measured = sum(sweep.skipped(p) is None for p in sweep.points)
    if sweep.scenario.topology is not None:
        lines.append(Topology.from_dict(sweep.scenario.topology).describe())
    lines.append(f"{len(sweep.points)} points ({measured} to measure, "
                 f"{len(sweep.points) - measured} skipped); measuring time "
                 f"{format_ns(total_s * 1e9)} plus about 1 s of setup per point")
    return "\n".join(lines) + "\n"


def launch(request: Request, agent: Agent, progress_stream: Any = None) -> Summary:
    """Run (or resume) the sweep; write sweep.json, summary.md and summary.json."""
    scenario, manifest = resolve(request)
    sweep = plan_sweep(scenario, agent, request.conditions)
    if manifest is not None:
        manifest.adopt(sweep.points)
        _adopt_orphans(manifest, sweep)
    elif request.results_dir is not None:
        manifest = Manifest.new(new_folder(request.results_dir, scenario), scenario, sweep.points)
    progress = Progress(len(sweep.points), progress_stream)
    if request.resume is not None and manifest is not None:
        repair(manifest, progress.stream)
    run = run_sweep(sweep, agent, manifest, progress)
    summary = summarize(run)
    if run.folder is not None:
        try:
            write_json(run.folder / "summary.json", summary.to_dict())
            write_text(run.folder / "summary.md", f"# {scenario.name}"
                       f"{' (quick)' if scenario.quick else ''}\n\n"
                       + summary.text(markdown=True))
        except WriteFailed as exc:
            run.not_saved = run.not_saved or NotSaved(
                f"{run.folder}: {exc.reason} while {exc.within(run.folder)}; the summary above "
                f"was not saved ('mwperf run --resume {run.folder}' writes it once the disk "
                f"has room)")
    return summary


def _adopt_orphans(manifest: Manifest, sweep: Sweep) -> None:
    """Give a saved but unlisted point folder to the pending entry it measured."""
    pending = [e for e in manifest.entries if e.status not in DONE]
    for folder in manifest.orphans():
        try:
            result = load_result(folder / RESULT_NAME)  # any version, as v3 (result/load.py)
        except NotReadable:
            continue
        saved = {k: v for k, v in result["config"].items() if k != "kind"}  # v3's run kind:
        wanted = json.dumps(saved, sort_keys=True)  # the point's config says it by its mode
        for entry in pending:
            config = sweep.configs[entry.index].to_dict()
            if json.dumps(config, sort_keys=True) == wanted and result.get("status") in DONE:
                entry.status, entry.reason = result["status"], result.get("status_reason")
                entry.result = f"{POINTS_DIR}/{folder.name}"
                pending.remove(entry)
                break
