"""What a scenario is once read and checked: fields (fixed or axes), exclusions, repetitions,
the per-point timeout and the analysis settings. Pure data; ``parse.py`` builds it from a file.
"""

from dataclasses import dataclass, field
from typing import Any

BUILT_IN = "built-in"
"""the transport value meaning 'every transport built into the agent'"""


@dataclass(frozen=True)
class Value:
    """One value of a field as the agent options take it, and the line it was written on."""

    value: Any
    """str for text options, bool for flags, tuple[str, ...] for repeated ones (opt)"""
    line: int

    def shown(self) -> str:
        """The value as written in labels and exclusions."""
        if isinstance(self.value, bool):
            return "true" if self.value else "false"
        if isinstance(self.value, tuple):  # repeated: the options given ([]: none)
            return ",".join(self.value) or "none"
        return str(self.value)


@dataclass(frozen=True)
class Field:
    """A point option: one value, or (written as a list) an axis of several."""

    name: str
    values: tuple[Value, ...]
    axis: bool
    line: int
    """the line of the field's key"""


@dataclass(frozen=True)
class Exclusion:
    """A partial match: a point is left out when each named field has one of the values."""

    match: tuple[tuple[str, frozenset[str]], ...]
    """field -> the values (as ``Value.shown``) that match"""
    line: int

    def matches(self, shown: dict[str, str]) -> bool:
        """True when the point (field -> shown value) matches every field of the rule."""
        return all(shown.get(name) in values for name, values in self.match)


@dataclass(frozen=True)
class Analysis:
    """How the summary judges a rate sweep (see docs/scenarios.md)."""

    knee_factor: float = 1.0
    """a rate is sustainable while p99 < period x knee_factor ..."""
    knee_loss_pct: float = 1.0
    """... and loss < knee_loss_pct percent"""


@dataclass(frozen=True)
class Scenario:
    """A validated scenario (with its quick overrides applied when ``quick``)."""

    name: str
    where: str
    """the file as named in error messages (a path, or the built-in's name)"""
    description: str
    fields: tuple[Field, ...]
    """in file order: the first axis varies slowest"""
    exclusions: tuple[Exclusion, ...] = ()
    repeat: int = 1
    interleave: bool = False
    """repetitions interleaved: repetition r of every point runs before repetition r+1 of any
    (so a slow drift of the machine spreads over every point instead of favouring one)"""
    timeout_ns: int | None = None
    """per point: a point still running after this is stopped and recorded as failed"""
    analysis: Analysis = field(default_factory=Analysis)
    quick: bool = False
    source: str = ""
    """the YAML text, kept in sweep.json so a sweep can be resumed from its folder alone"""
    topology: dict[str, Any] | None = None
    """the declared hosts, links and placement (emulation/topology.py's ``to_dict``), given to
    every point as its ``topology`` option; None = no hosts (loopback, or ``link`` alone)"""
    real_hosts: dict[str, Any] | None = None
    """real hosts over SSH (scenario/real_hosts.py): the ``host`` and ``remote_place``
    options every point gets; None = none"""

    def get(self, name: str) -> Field | None:
        """The field called ``name``, if the scenario sets it."""
        return next((f for f in self.fields if f.name == name), None)

    @property
    def axes(self) -> tuple[Field, ...]:
        """The list-valued fields, in file order."""
        return tuple(f for f in self.fields if f.axis)
