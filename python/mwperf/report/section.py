"""A report section: a heading, its charts (SVG text), and a note saying what was left out."""

from dataclasses import dataclass, field


@dataclass
class Section:
    """One titled group of charts; ``key`` names it for links and browser tests."""

    key: str
    title: str
    charts: list[str] = field(default_factory=list)
    note: str = ""
