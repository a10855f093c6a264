"""From a scenario to its points: the cartesian product of the axes, minus the exclusions,
each point repeated ``repeat`` times (repetitions of a point run one after the other, or with
``interleave: true`` round by round: repetition r of every point before repetition r+1).

The first axis in the file varies slowest, so ``payload, rate, transport`` puts every transport
of one payload and rate side by side. ``transport: built-in`` stands for the transports built
into the agent (mwperf's side-by-side order, then any others the agent has); without an agent
(validation), for every transport mwperf knows.
"""

import hashlib
import itertools
import json
from pathlib import Path
from dataclasses import dataclass, replace
from typing import Any

from ..config import TRANSPORTS, default
from ..show.table import format_rate
from .model import BUILT_IN, Field, Scenario, Value

MAIN_FIELDS = ("transport", "mode", "rate", "payload")
"""the fields every label starts with (other axes follow as name=value)"""


@dataclass(frozen=True)
class PlannedPoint:
    """One measurement of the sweep, before it runs."""

    index: int
    """1-based position in the sweep (stable for a given scenario and agent)"""
    options: dict[str, Any]
    """as ``config.build_point`` takes them"""
    axes: tuple[tuple[str, str], ...]
    """(field, value as shown) of every axis, in file order: what distinguishes this point"""
    lines: dict[str, int]
    """field -> the line its value was written on (for error messages)"""
    repetition: int = 1
    repeats: int = 1

    @property
    def transport(self) -> str:
        """The point's transport."""
        return str(self.options.get("transport") or default("transport"))

    def label(self) -> str:
        """'udp roundtrip 1000 Hz Array1k reliability=best-effort (rep 2/3)'."""
        options = self.options
        rate = default("rate") if options.get("rate") in (None, "") else options["rate"]
        head = [self.transport, str(options.get("mode") or default("mode")),
                format_rate(float(rate)) if _is_number(rate) else f"{rate} Hz",
                _payload(str(options.get("payload") or default("payload")))]
        if options.get("replay"):  # the recording sets rates and sizes
            head[2:] = [f"replay {Path(str(options['replay'])).name}"]
        if options.get("graph"):  # its nodes set rates, sizes and work
            head[1:] = ["graph", Path(str(options["graph"])).name]
        rest = [f"{name}={value}" for name, value in self.axes
                if name not in MAIN_FIELDS and not (name == "graph" and options.get("graph"))]
        rep = [f"(rep {self.repetition}/{self.repeats})"] if self.repeats > 1 else []
        return " ".join(head + rest + rep)

    def config_hash(self) -> str:
        """A short hash of what is measured (options and repetition): how --resume recognises
        a point of the same sweep."""
        text = json.dumps({"options": self.options, "repetition": self.repetition},
                          sort_keys=True, default=list)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def expand(scenario: Scenario, built: list[str] | None,
           conditions: dict[str, Any] | None = None) -> list[PlannedPoint]:
    """Every point of ``scenario``; ``built`` = the agent's transports (None: all known);
    ``conditions`` = options from the command line added to every point."""
    fields = [_resolve_built_in(f, built) for f in scenario.fields]
    points: list[PlannedPoint] = []
    for combination in itertools.product(*(f.values for f in fields)):
        chosen = dict(zip((f.name for f in fields), combination))
        axes = tuple((f.name, chosen[f.name].shown()) for f in fields if len(f.values) > 1)
        shown = {name: value.shown() for name, value in chosen.items()}
        if any(rule.matches(shown) for rule in scenario.exclusions):
            continue
        options = {name: _option_value(value) for name, value in chosen.items()}
        if scenario.topology is not None:
            options["topology"] = scenario.topology
        for key, value in (scenario.real_hosts or {}).items():
            if value is not None:
                options[key] = value
        extra = dict(conditions or {})
        if extra.get("gates") and options.get("gates"):  # both apply (sweep.MERGED)
            extra["gates"] = [*options["gates"], *extra["gates"]]
        options.update(extra)
        lines = {name: value.line for name, value in chosen.items()}
        for rep in range(1, scenario.repeat + 1):
            points.append(PlannedPoint(len(points) + 1, options, axes, lines, rep,
                                       scenario.repeat))
    if scenario.interleave:
        rounds = sorted(points, key=lambda p: p.repetition)  # stable: file order within a round
        points = [replace(p, index=i) for i, p in enumerate(rounds, 1)]
    return points


def built_in_transports(built: list[str] | None) -> list[str]:
    """What 'built-in' means: the agent's transports in side-by-side order (None: all known)."""
    if built is None:
        return list(TRANSPORTS)
    return [t for t in TRANSPORTS if t in built] + [t for t in built if t not in TRANSPORTS]


def _resolve_built_in(field: Field, built: list[str] | None) -> Field:
    if field.name != "transport" or all(v.value != BUILT_IN for v in field.values):
        return field
    values: list[Value] = []
    for value in field.values:
        names = built_in_transports(built) if value.value == BUILT_IN else [value.value]
        values += [Value(name, value.line) for name in names
                   if name not in {v.value for v in values}]
    return Field(field.name, tuple(values), axis=len(values) > 1 or field.axis, line=field.line)


def _option_value(value: Value) -> Any:
    return list(value.value) if isinstance(value.value, tuple) else value.value


def _payload(text: str) -> str:
    """A payload as labelled: a catalogue name, or a bare byte count with its unit."""
    return f"{text} B" if text.isdigit() else text


def _is_number(text: Any) -> bool:
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return True
