"""Measuring a graph point end to end (``mwperf run --graph`` and a scenario's graph points):
with ``baseline`` its topic or chain alone first, then the whole graph; the result saved under
``results_dir/<run id>/`` as every run's is (``result.json``: the v3 document, result/save.py)
with ``graph.html``, the graph drawn. Folders an older mwperf saved hold ``graph-result.json``
instead; every reader reads both (result/load.py, store/layout.py)."""

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..agent import Agent
from ..config import PointConfig
from ..durations import format_ns
from ..allocsites.heaptrack import ALLOC_SITES_DIR
from ..profiling import PROFILE_DIR
from .plan import SAMPLES_DIR
from ..results import KEPT, save_point
from ..runner import Outcome
from ..soak.gates import parse_gates
from ..soak.graph_gates import evaluate
from ..result.save import written
from ..store.record import catalogue_graph, catalogued
from .page import render
from .result import interference
from .command_run import PREFIX as COMMAND_LOGS
from .run import run_graph

GRAPH_PAGE = "graph.html"


def measure_graph(cfg: PointConfig, agent: Agent, results_dir: Path | None,
                  say: Callable[[str], None] = lambda line: None, *, index: int | None = None,
                  repetition: int | None = None) -> tuple[Outcome, Path | None]:
    """Run graph point ``cfg`` (``cfg.graph`` set); ``say`` gets a line as each run starts;
    ``index``/``repetition``: its place in a sweep. Ctrl-C while it is catalogued keeps it
    (saved, not catalogued: the outcome says interrupted)."""
    where = (index, repetition)
    point = cfg.graph
    assert point is not None
    first = None
    if point.alone is not None:
        say(f"running {point.alone.name} ({len(point.alone.nodes)} nodes) over {cfg.transport} "
            f"for {format_ns(cfg.measure_ns)} ...")
        with tempfile.TemporaryDirectory(prefix="mwperf-graph-") as folder:
            first = run_graph(point.alone, cfg, agent, Path(folder))
        if _stopped(first):  # the user stopped it: keep what was measured, start no more
            return _saved(Outcome(first, None, interrupted=True), results_dir, where)
    say(f"running graph {point.graph.name} ({len(point.graph.nodes)} nodes) over "
        f"{cfg.transport} for {format_ns(cfg.measure_ns)} ...")
    with tempfile.TemporaryDirectory(prefix="mwperf-graph-") as folder:
        result = run_graph(point.graph, cfg, agent, Path(folder))
        logs = _kept_files(Path(folder))
    if first is not None and point.baseline is not None:
        result["baseline"] = interference(first, result, point.baseline)
    if cfg.gates or cfg.targets:
        cores = os.cpu_count() if cfg.remote is None else None  # real hosts: their own counts
        result["gates"] = evaluate(parse_gates(cfg.gates, cfg.targets), result, cores)
    return _saved(Outcome(result, None, interrupted=_stopped(result)), results_dir, where, logs)


def _kept_files(workdir: Path) -> dict[str, bytes]:
    """What is saved beside the result from the run's work folder: the command nodes' output
    (``daemons/command.<node>.log``, named in their nodes[] entries) and ``--profile``'s flame
    graphs, folded stacks and top tables (``profile/``, named in the result's profile),
    ``--alloc-sites``' records and tables (``alloc_sites/``), ``--samples``' CSV files
    (``samples/``, named in their edges' ``samples_file``)."""
    kept = {f"daemons/{path.name}": path.read_bytes()
            for path in sorted((workdir / "daemons").glob(f"{COMMAND_LOGS}*.log"))}
    kept.update({f"{SAMPLES_DIR}/{path.name}": path.read_bytes()
                 for path in sorted((workdir / SAMPLES_DIR).glob("*.csv"))})
    for folder in (PROFILE_DIR, ALLOC_SITES_DIR):
        kept.update({f"{folder}/{path.name}": path.read_bytes()
                     for path in sorted((workdir / folder).glob("*"))
                     if path.is_file() and KEPT[folder](path)})
    return kept


def _stopped(result: dict) -> bool:
    reason = result.get("status_reason") or ""
    return result["status"] == "partial" and reason.startswith("interrupted")


def _saved(outcome: Outcome, results_dir: Path | None,
           where: tuple[int | None, int | None], logs: dict[str, bytes] | None = None
           ) -> tuple[Outcome, Path | None]:
    """Save the outcome's graph result under ``results_dir`` as a point is saved (its v3
    document last, results.save_point) with its drawing and ``logs``, and catalogue it
    (session.catalogued)."""
    if results_dir is None:
        return outcome, None
    document = written(outcome.result)
    folder = save_point(outcome, results_dir / outcome.result["run_id"], document,
                        {GRAPH_PAGE: render(outcome.result).encode(), **(logs or {})})
    catalogued(outcome, lambda: catalogue_graph(folder, document, *where))
    return outcome, folder
