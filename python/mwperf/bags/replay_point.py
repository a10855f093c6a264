"""A point that replays a recording (``--replay`` on the command line or ``replay:`` in a
scenario): the recording's traces written into a folder, and the point's options set from it —
one topic per recorded topic, the largest message as the payload buffer, the fastest topic's rate,
the recording's length as the duration (or ``--duration`` with ``--replay-loop``), no warm-up
unless asked. ``example`` names mwperf's example recording (``mwperf bag example``), written
once into the user's cache folder."""

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import PointConfig
from ..durations import format_duration_arg
from .example import example_bag
from ..wire import HEADER_BYTES  # the agent writes it over each message's first bytes
from .trace import ReplayPlan, ReplaySpec, parse_spec, write_traces

EXAMPLE = "example"
"""``--replay example``: seed 000's kind of recording (LaserScan 40 Hz, Image 30 Hz, 10 s)"""


def resolved(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with ``replay: example`` replaced by the example bag's path."""
    if options.get("replay") == EXAMPLE:
        return dict(options, replay=str(example_bag()))
    return options


def prepare(options: dict[str, Any], folder: Path
            ) -> tuple[dict[str, Any], ReplayPlan, ReplaySpec] | None:
    """Write the traces of ``options``' recording into ``folder`` and return the options the
    point is built from, the plan and the spec; None when the point replays nothing."""
    options = resolved(options)
    spec = parse_spec(options)
    if spec is None:
        return None
    plan = write_traces(spec, folder)
    duration = (options["duration"] if spec.loop
                else format_duration_arg(max(plan.duration_ns, 1_000_000)))
    fastest = max((1e9 / p for p in plan.periods_ns if p), default=1.0)
    built = dict(options, topics=str(len(plan.topics)),
                 payload=str(max(0, max(plan.max_bytes) - HEADER_BYTES)),
                 rate=format(fastest, ".3f"), duration=duration,
                 warmup=options.get("warmup") or "0s")  # every recorded message counts
    return built, plan, spec


def build(options: dict[str, Any], folder: Path,
          build_point: Callable[[dict[str, Any]], PointConfig]) -> PointConfig:
    """The point's config: replaying from ``folder`` when ``options`` name a recording."""
    prepared = prepare(options, folder)
    if prepared is None:
        return build_point(options)
    built, plan, spec = prepared
    return dataclasses.replace(build_point(built), replay=plan.config(spec),
                               replay_trace=str(folder))
