"""Suites: a fixed list of points run one after the other, with a summary.

The built-in ``default`` suite, side by side: payloads {Struct256, Array1k, Array64k,
PointCloud512k} x rates {100 Hz, 1 kHz, max (0)} x every transport built into the agent, round
trip, 1 s each after 0.3 s warm-up (``--quick``: 0.3 s after 0.1 s), each payload and rate with
all transports next to each other. A point the transport cannot carry (the agent rejects it as a
usage error, e.g. UDP beyond 65 507 B) is "not supported" with the agent's reason; a point that
fails is recorded with its reason and the suite goes on; Ctrl-C ends the suite after the
in-flight point (recorded as partial).
"""

import itertools
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .agent import Agent
from .config import build_point
from .errors import MwperfError, UsageError
from .merge import SEVERITY
from .results import write_json, write_text
from .runner import StoppedRunError
from .session import measure, stamp
from .table import Row, label, render, render_notes, row_from_result

SUITES = ("default",)
TRANSPORTS = ("udp", "tcp", "uds", "iceoryx2", "cyclonedds", "rustdds", "zenoh", "mqtt", "ros1")
"""every transport mwperf knows; a suite runs those built into the agent"""
RATES = ("100", "1000", "0")
PAYLOADS = ("Struct256", "Array1k", "Array64k", "PointCloud512k")
NOT_SUPPORTED = "not supported"
"""a row status: the transport cannot carry this point (not a failure)"""


@dataclass
class SuiteOutcome:
    """The rows of a suite run, where they were saved, and the warnings met on the way."""

    rows: list[Row]
    warnings: list[tuple[str, dict[str, Any]]]
    folder: Path | None
    interrupted: bool = False

    @property
    def status(self) -> str:
        """The worst status of any point ('partial' if stopped before the end)."""
        statuses = [row.status for row in self.rows if row.status != NOT_SUPPORTED]
        statuses += ["partial"] * self.interrupted
        return max(statuses, key=SEVERITY.__getitem__, default="complete")

    def report(self) -> str:
        """The table, the notes below it and where everything was saved."""
        text = render(self.rows) + render_notes(self.rows, self.warnings)
        return text + (f"saved in {self.folder}\n" if self.folder else "")


def suite_points(name: str, quick: bool,
                 transports: list[str] | tuple[str, ...] = TRANSPORTS) -> list[dict[str, Any]]:
    """The raw options of every point of suite ``name`` (validated later, one by one)."""
    if name not in SUITES:
        raise UsageError(f"SCENARIO: unknown scenario '{name}'; allowed: {', '.join(SUITES)}")
    duration, warmup = ("300ms", "100ms") if quick else ("1s", "300ms")
    return [{"transport": t, "mode": "roundtrip", "rate": r, "payload": p,
             "duration": duration, "warmup": warmup}
            for p, r, t in itertools.product(PAYLOADS, RATES, transports)]


def run_suite(name: str, agent: Agent, results_dir: Path | None, quick: bool,
              conditions: dict[str, Any], progress: Callable[[str], None]) -> SuiteOutcome:
    """Run every point of suite ``name``; ``conditions`` (busy_poll, ...) apply to all."""
    built = agent.transports()
    points = suite_points(name, quick, [t for t in TRANSPORTS if t in built]
                          + [t for t in built if t not in TRANSPORTS])
    folder = None
    if results_dir is not None:
        folder = results_dir / f"{stamp()}-suite-{name}-{secrets.randbits(16):04x}"
    outcome = SuiteOutcome([], [], folder)
    for index, options in enumerate(points, 1):
        planned = Row(options["transport"], options["mode"], float(options["rate"]),
                      options["payload"], None)
        progress(f"[{index}/{len(points)}] {label(planned)} ...")
        try:
            cfg = build_point({**options, **conditions}, lambda: agent)
        except MwperfError as exc:
            outcome.rows.append(replace(planned, status="failed", status_reason=str(exc)))
            progress(f"[{index}/{len(points)}] {label(planned)}: failed")
            continue
        try:
            point, saved = measure(cfg, agent, folder / "points" if folder else None)
        except UsageError as exc:  # the agent rejected this point: the transport cannot carry it
            outcome.rows.append(replace(planned, payload_bytes=cfg.payload_bytes,
                                        status=NOT_SUPPORTED, status_reason=str(exc)))
            progress(f"[{index}/{len(points)}] {label(planned)}: {NOT_SUPPORTED}")
            continue
        except MwperfError as exc:
            outcome.rows.append(replace(planned, status="failed", status_reason=str(exc)))
            progress(f"[{index}/{len(points)}] {label(planned)}: failed")
            if isinstance(exc, StoppedRunError):
                outcome.interrupted = True
                break
            continue
        except KeyboardInterrupt:  # outside a measurement: nothing of this point to keep
            outcome.interrupted = True
            break
        location = str(saved.relative_to(folder)) if saved and folder else None
        row = row_from_result(point.result, location)
        outcome.rows.append(row)
        outcome.warnings += [(label(row), w) for w in point.result["warnings"]]
        progress(f"[{index}/{len(points)}] {label(row)}: {row.status}")
        if point.interrupted:
            outcome.interrupted = True
            break
    if folder is not None:
        write_json(folder / "summary.json", [row.to_dict() for row in outcome.rows])
        write_text(folder / "summary.md", render(outcome.rows, markdown=True))
    return outcome
