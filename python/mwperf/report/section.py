"""A report section: a heading, its charts (SVG text), and a note saying what was left out."""

from dataclasses import dataclass, field

from .svg import Chart


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
