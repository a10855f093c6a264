"""Measuring one configured point end to end: a scratch directory, the run, the saved files,
and the point's entry in the results catalogue (mwperf.store).

Shared by ``mwperf run`` and the suites, so both save results the same way. The point folder is
saved first and stays the source of truth; cataloguing it then is one transaction, and a
catalogue problem is reported on stderr without losing the measurement. A folder the disk
refuses (full, read-only) raises NotSaved carrying the outcome: the caller reports the
measurement, then the error.
"""

import contextlib
import secrets
import tempfile
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

from .agent import Agent
from .config import PointConfig
from .leases import Lease
from .result.save import written
from .results import save_point
from .runner import Outcome, run_point
from .store.record import catalogue_point, catalogued


def measure(cfg: PointConfig, agent: Agent, results_dir: Path | None, *,
            index: int | None = None, repetition: int | None = None
            ) -> tuple[Outcome, Path | None]:
    """Run ``cfg``; save it under ``results_dir/<run_id>/`` unless ``results_dir`` is None, and
    catalogue it (``index``/``repetition``: the point's place in a sweep, when known). A graph
    point (``cfg.graph``) is saved as a graph result (graph/measure.py)."""
    if cfg.graph is not None:
        from .graph.measure import measure_graph
        return measure_graph(cfg, agent, results_dir, index=index, repetition=repetition)
    with scratch_folder() as scratch:
        outcome = run_point(cfg, agent, scratch)
        saved = None
        if results_dir is not None:
            document = written(outcome.result)  # v3, with its stream view (result/save.py)
            saved = save_point(outcome, results_dir / outcome.result["run_id"], document)
            catalogued(outcome, lambda: catalogue_point(saved, document, index, repetition))
    return outcome, saved


@contextlib.contextmanager
def scratch_folder() -> Iterator[Path]:
    """A new folder for the agents' files (under $TMPDIR), removed on leaving; leased first,
    so the next mwperf removes it should this one be killed (leases.py)."""
    with Lease.take("scratch folder of a point") as lease:
        folder = Path(tempfile.gettempdir()) / f"mwperf-{lease.tag}-{secrets.token_hex(4)}"
        lease.add("path", str(folder))
        folder.mkdir(mode=0o700)
        yield folder


def stamp() -> str:
    """The UTC time as used at the start of run ids: 20261121T224501Z."""
    return f"{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}"
