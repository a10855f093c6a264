"""A point that replays a recording (``--replay`` on the command line or ``replay:`` in a
scenario): the recording's traces written into a folder, and the point's options set from it —
one topic per recorded topic, the largest message as the payload buffer, the fastest topic's rate,
the recording's length as the duration (or ``--duration`` with ``--replay-loop``), no warm-up
unless asked. ``example`` names mwperf's example recording (``mwperf bag example``), written
once into the user's cache folder. A sweep writes each recording's traces once (``Shared``):
its points that replay it the same way read the same files."""

import dataclasses
from collections.abc import Callable, Iterator
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


Traces = Callable[[ReplaySpec], tuple[Path, ReplayPlan]]
"""The folder holding a spec's traces (written if need be) and their plan."""


def written_into(folder: Path) -> Traces:
    """One point's traces, written into ``folder``."""
    return lambda spec: (folder, write_traces(spec, folder))


class Shared:
    """A sweep's traces: each recording replayed the same way (path, topics, speed, window,
    loop) written once, into ``folders``' next folder; its points read the same files (only
    read, one point after another). A sweep of N transports over one recording wrote it N
    times (the built-in ros1-bag-replay's check: 16 writes of its camera's frames, 3.3 s)."""

    def __init__(self, folders: Iterator[Path]) -> None:
        self._folders = folders
        self._written: dict[str, tuple[Path, ReplayPlan]] = {}

    def __call__(self, spec: ReplaySpec) -> tuple[Path, ReplayPlan]:
        key = repr(spec)  # a frozen dataclass of a path, numbers and a list: its repr is its value
        if key not in self._written:
            folder = next(self._folders)
            self._written[key] = (folder, write_traces(spec, folder))
        return self._written[key]


def prepare(options: dict[str, Any], traces: Traces
            ) -> tuple[dict[str, Any], ReplayPlan, ReplaySpec, Path] | None:
    """The traces of ``options``' recording (``traces``) and the options the point is built
    from, the plan, the spec and the traces' folder; None when the point replays nothing."""
    options = resolved(options)
    spec = parse_spec(options)
    if spec is None:
        return None
    folder, plan = traces(spec)
    duration = (options["duration"] if spec.loop
                else format_duration_arg(max(plan.duration_ns, 1_000_000)))
    fastest = max((1e9 / p for p in plan.periods_ns if p), default=1.0)
    built = dict(options, topics=str(len(plan.topics)),
                 payload=str(max(0, max(plan.max_bytes) - HEADER_BYTES)),
                 rate=format(fastest, ".3f"), duration=duration,
                 warmup=options.get("warmup") or "0s")  # every recorded message counts
    return built, plan, spec, folder


def build(options: dict[str, Any], traces: Traces,
          build_point: Callable[[dict[str, Any]], PointConfig]) -> PointConfig:
    """The point's config: replaying from its ``traces`` when ``options`` name a recording."""
    prepared = prepare(options, traces)
    if prepared is None:
        return build_point(options)
    built, plan, spec, folder = prepared
    return dataclasses.replace(build_point(built), replay=plan.config(spec),
                               replay_trace=str(folder))
