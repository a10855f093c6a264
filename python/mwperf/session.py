"""Measuring one configured point end to end: a scratch directory, the run, the saved files.

Shared by ``mwperf run`` and the suites, so both save results the same way.
"""

import tempfile
from datetime import datetime, timezone
from pathlib import Path

from .agent import Agent
from .config import PointConfig
from .results import save_point
from .runner import Outcome, run_point


def measure(cfg: PointConfig, agent: Agent, results_dir: Path | None) -> tuple[Outcome, Path | None]:
    """Run ``cfg``; save it under ``results_dir/<run_id>/`` unless ``results_dir`` is None."""
    with tempfile.TemporaryDirectory(prefix="mwperf-") as scratch:
        outcome = run_point(cfg, agent, Path(scratch))
        saved = None
        if results_dir is not None:
            saved = save_point(outcome, results_dir / outcome.result["run_id"])
    return outcome, saved


def stamp() -> str:
    """The UTC time as used at the start of run ids: 20261121T224501Z."""
    return f"{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}"
