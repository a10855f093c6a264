"""Validating every point of a scenario before anything runs, with ``config.build_point`` (the
same rules as the command line), and reporting a bad value at the line it was written on.

A transport mwperf knows but the agent was built without is valid here (its points are skipped
with a note when the sweep runs); payload names come from the agent's catalogue.
"""

import atexit
import contextlib
import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..bags import replay_point
from ..config import TRANSPORTS, Catalogue, PointConfig, build_point
from ..errors import UsageError
from ..options import POINT_OPTIONS
from ..session import scratch_folder
from .expand import PlannedPoint
from .model import BUILT_IN, Scenario

FLAG = re.compile(r"^--(?P<flag>[a-z][a-z-]*)")
FIELD_OF_FLAG = {decl[2:]: option.name for option in POINT_OPTIONS for decl in option.decls
                 if decl.startswith("--") and decl[2:].replace("-", "_") != option.name}
"""a flag whose scenario field is named otherwise (--gate: gates, --place: remote_place)"""
"""the flag a build_point message starts with: '--rate: ...', '--pong relay: ...'"""


@dataclass(frozen=True)
class KnownTransports:
    """The agent's catalogue, with every transport mwperf knows counted as valid."""

    agent: Catalogue

    def transports(self) -> list[str]:
        built = self.agent.transports()
        return [*TRANSPORTS, *(t for t in built if t not in TRANSPORTS), BUILT_IN]

    def payloads(self) -> dict[str, int]:
        return self.agent.payloads()


def check_points(scenario: Scenario, points: list[PlannedPoint],
                 agent: Callable[[], Catalogue]) -> dict[int, PointConfig]:
    """Build every point's PointConfig (index -> config) or raise the first error as
    ``FILE:LINE: field 'NAME': ...``."""
    catalogue: KnownTransports | None = None

    def known() -> KnownTransports:
        nonlocal catalogue
        if catalogue is None:
            catalogue = KnownTransports(agent())
        return catalogue

    built: dict[str, PointConfig] = {}
    configs = {}
    traces = replay_point.Shared(_trace_folders())
    for point in points:
        key = repr(sorted(point.options.items()))
        if key not in built:
            try:
                built[key] = replay_point.build(point.options, traces,
                                                lambda options: build_point(options, known))
            except UsageError as exc:
                raise located(exc, scenario, point) from None
        configs[point.index] = built[key]
    return configs


_TRACES: list[Path] = []
_NEXT = itertools.count()


def _trace_folders() -> Iterator[Path]:
    """New folders for replayed traces, kept until this process exits (the sweep measures its
    points later); never one twice (a second scenario checked by this process keeps the
    first's)."""
    while True:
        if not _TRACES:  # leased (session.py): the next mwperf removes it should this one be killed
            stack = contextlib.ExitStack()
            _TRACES.append(stack.enter_context(scratch_folder()))
            atexit.register(stack.close)
        folder = _TRACES[0] / f"traces-{next(_NEXT)}"
        folder.mkdir()
        yield folder


def located(exc: UsageError, scenario: Scenario, point: PlannedPoint) -> UsageError:
    """``exc`` (from build_point, '--flag: ...') at the line of the field it is about."""
    message = str(exc)
    match = FLAG.match(message)
    if match is None:
        return UsageError(f"{scenario.where}: point {point.index} ({point.label()}): {message}")
    name = FIELD_OF_FLAG.get(match["flag"], match["flag"].replace("-", "_"))
    field = scenario.get(name)
    line = point.lines.get(name, field.line if field else None)
    if line is None:  # a command-line condition, not the file's: keep the flag
        return exc
    head = f"{match[0]}: "
    detail = message[len(head):] if message.startswith(head) else message
    return UsageError(f"{scenario.where}:{line}: field '{name}': {detail}")
