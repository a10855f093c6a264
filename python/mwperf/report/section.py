"""A report section: a heading, its charts (SVG text), and a note saying what was left out."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from .svg import Chart


T = TypeVar("T")


@dataclass
class Section:
    """One titled group of charts; ``key`` names it for links and browser tests."""

    key: str
    title: str
    charts: list[str] = field(default_factory=list)
    note: str = ""

    def add(self, *charts: Chart) -> None:
        """Add the charts that drew something (an empty frame tells the reader nothing)."""
        self.charts += [chart.render() for chart in charts if not chart.empty()]

    def first(self, items: Sequence[T], limit: int, what: str) -> Sequence[T]:
        """The first ``limit`` of ``items``; the note says how many were left out."""
        if len(items) > limit:
            self.note = f"The first {limit} of {len(items)} {what} are shown."
        return items[:limit]
