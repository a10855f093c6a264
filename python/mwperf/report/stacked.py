"""A horizontal stacked bar chart: one bar per row (a point, a transport), its segments laid end
to end, each labelled with its value when it is wide enough — the shape of the RIOT-ROS2
paper's Fig. 3 (where a message's 8.1 ms go, layer by layer).

Beside svg.Chart rather than in it: Chart's axes are both numeric, and these rows are
categories named on the left; the conventions are Chart's (``class="chart"`` and
``data-chart``, ``class="datum"`` with a ``data-tip`` on every drawn segment, the legend in the
right margin, ``fmt`` for the value axis) so the page's hover read-outs and the browser tests
treat both alike.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

from .svg import Axis, Format, legend

ROW = 30
BAR = 20
LEFT, RIGHT, TOP, BOTTOM = 230, 260, 30, 42
"""the rows' names sit in the left margin, the legend in the right"""
WIDTH = 1060
LABEL_MIN_PX = 44
"""a segment narrower than this carries no value label (its hover read-out still does)"""
NAME_CHARS = 36


@dataclass(frozen=True)
class Segment:
    """One piece of a bar: its length in the value axis' unit."""

    value: float
    colour: str
    label: str
    """what the value label and the read-out call it"""
    tip: str = ""


@dataclass
class StackedBars:
    """A chart being built: :meth:`row` per bar, then :meth:`render`."""

    title: str
    name: str
    """a stable identifier (``data-chart``) for tests and links"""
    axis_label: str
    fmt: Format
    rows: list[tuple[str, list[Segment], str]] = field(default_factory=list)
    legend: list[tuple[str, str]] = field(default_factory=list)

    def row(self, name: str, segments: Sequence[Segment], end: str = "") -> None:
        """A bar named ``name`` of ``segments`` (in stacking order; non-positive ones skipped),
        ``end`` written after it (e.g. the total)."""
        self.rows.append((name, [s for s in segments if s.value > 0], end))
        for segment in segments:
            if (segment.label, segment.colour) not in self.legend:
                self.legend.append((segment.label, segment.colour))

    def empty(self) -> bool:
        return not any(segments for _, segments, _ in self.rows)

    def render(self) -> str:
        """The chart as an ``<svg>`` element."""
        height = max(TOP + ROW * max(1, len(self.rows)) + BOTTOM,
                     TOP + 14 * len(self.legend) + 20)
        right = WIDTH - RIGHT
        axis = Axis(self.axis_label, fmt=self.fmt)
        axis.include(0.0, *(sum(s.value for s in segments) for _, segments, _ in self.rows))

        def px(value: float) -> float:
            return axis.position(value, LEFT, right)
        parts = [f'<svg class="chart" data-chart="{escape(self.name)}" viewBox="0 0 {WIDTH} '
                 f'{height}" width="{WIDTH}" height="{height}" xmlns="http://www.w3.org/2000/svg"'
                 f' role="img" aria-label="{escape(self.title)}">',
                 f'<text x="{LEFT}" y="18" class="title">{escape(self.title)}</text>']
        bottom = TOP + ROW * max(1, len(self.rows))
        for value, text in axis.tick_values():
            x = px(value)
            parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" y2="{bottom}" '
                         f'class="grid"/><text x="{x:.1f}" y="{bottom + 16}" class="tick" '
                         f'text-anchor="middle">{escape(text)}</text>')
        parts.append(f'<text x="{(LEFT + right) / 2:.0f}" y="{bottom + 34}" class="axis" '
                     f'text-anchor="middle">{escape(self.axis_label)}</text>')
        for i, (name, segments, end) in enumerate(self.rows):
            y = TOP + ROW * i + (ROW - BAR) / 2
            parts.append(f'<text x="{LEFT - 6}" y="{y + BAR / 2 + 4:.1f}" class="tick" '
                         f'text-anchor="end" data-tip="{escape(name)}">'
                         f'{escape(_clip(name))}</text>')
            start = 0.0
            for s in segments:
                x0, x1 = px(start), px(start + s.value)
                tip = s.tip or f"{name}\n{s.label}: {self.fmt(s.value)}"
                parts.append(f'<rect class="datum" x="{x0:.1f}" y="{y:.1f}" width="'
                             f'{max(x1 - x0, 0.5):.1f}" height="{BAR}" fill="{s.colour}" '
                             f'stroke="#fff" stroke-width="0.5" data-tip="{escape(tip)}"/>')
                if x1 - x0 >= LABEL_MIN_PX:
                    parts.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{y + BAR / 2 + 4:.1f}" '
                                 f'class="tick" text-anchor="middle" fill="#fff" '
                                 f'style="fill:#fff" pointer-events="none">'
                                 f'{escape(self.fmt(s.value))}</text>')
                start += s.value
            if end:
                parts.append(f'<text x="{px(start) + 4:.1f}" y="{y + BAR / 2 + 4:.1f}" '
                             f'class="tick">{escape(end)}</text>')
        parts.append(f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{bottom}" '
                     f'stroke="#999"/>')
        parts.append(legend(self.legend, right + 50, TOP, 60))
        parts.append("</svg>")
        return "".join(parts)


def _clip(text: str) -> str:
    return text if len(text) <= NAME_CHARS else text[:NAME_CHARS - 1] + "\u2026"
