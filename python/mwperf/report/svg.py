"""A small SVG chart builder: axes (linear or log), lines, bands, markers, a legend, and hover
read-outs. Pure: it returns SVG text; the page's inline script shows each element's ``data-tip``.

Why not a plotting library: the report must be one self-contained file that opens from disk,
and the few chart kinds it needs fit in this module; no dependency means nothing to vendor,
license or keep in step. Every drawn data element carries ``class="datum"`` (markers) or
``class="trace"`` (lines, bands) so a browser test can count what was drawn.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#17becf", "#7f7f7f", "#bcbd22")
WIDTH, HEIGHT = 760, 340
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 72, 176, 28, 48
"""the legend sits in the right margin, beside the plot, never over the data"""
LEGEND_MAX = 18
Format = Callable[[float], str]


def colour(index: int) -> str:
    """The ``index``-th colour of the categorical palette (cycling)."""
    return PALETTE[index % len(PALETTE)]


@dataclass
class Axis:
    """One axis: its data range, scale and tick labels."""

    label: str
    log: bool = False
    fmt: Format = lambda v: f"{v:g}"
    low: float = math.inf
    high: float = -math.inf
    ticks: Sequence[tuple[float, str]] | None = None
    """fixed ticks (value, label); computed from the range when None"""

    def include(self, *values: float | None) -> None:
        """Widen the range to ``values`` (None and, on a log axis, values <= 0 are skipped)."""
        for value in values:
            if value is None or not math.isfinite(value) or (self.log and value <= 0):
                continue
            self.low, self.high = min(self.low, value), max(self.high, value)

    def bounds(self) -> tuple[float, float]:
        """The drawn range: the data range padded a little, never empty."""
        low, high = (self.low, self.high) if self.low <= self.high else (1.0, 10.0)
        if self.log:
            low, high = math.log10(low), math.log10(high)
            if high - low < 1e-9:
                low, high = low - 0.5, high + 0.5
            return low - 0.02 * (high - low), high + 0.05 * (high - low)
        if high - low < 1e-12:
            low, high = low - (abs(low) or 1) * 0.5, high + (abs(high) or 1) * 0.5
        pad = 0.05 * (high - low)
        return (0.0 if low >= 0 and low - pad < 0 else low - pad), high + pad

    def position(self, value: float, start: float, end: float) -> float:
        """Pixel position of ``value`` between ``start`` (low) and ``end`` (high)."""
        low, high = self.bounds()
        v = math.log10(max(value, 1e-300)) if self.log else value
        return start + (v - low) / (high - low) * (end - start)

    def tick_values(self) -> list[tuple[float, str]]:
        """Where the ticks go, with their labels."""
        low, high = self.bounds()
        if self.ticks is not None:
            return [(v, t) for v, t in self.ticks
                    if low <= (math.log10(v) if self.log else v) <= high]
        if self.log:
            decades = list(range(math.ceil(low), math.floor(high) + 1))
            if len(decades) < 2:
                values = [10 ** (low + (high - low) * i / 4) for i in range(5)]
                return [(v, self.fmt(float(f"{v:.2g}"))) for v in values]
            return [(10.0 ** d, self.fmt(10.0 ** d)) for d in decades]
        step = _nice_step((high - low) / 5)
        first = math.ceil(low / step) * step
        count = int((high - first) / step + 1e-9) + 1
        return [(first + i * step, self.fmt(round(first + i * step, 12))) for i in range(count)]


def _nice_step(raw: float) -> float:
    """1, 2 or 5 times a power of ten, near ``raw``."""
    if raw <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(raw))
    for mult in (1, 2, 5, 10):
        if raw <= mult * power:
            return mult * power
    return 10 * power


@dataclass
class Chart:
    """A chart being built: call the drawing methods with data values, then :meth:`render`."""

    title: str
    x: Axis
    y: Axis
    name: str
    """a stable identifier (``data-chart``) for tests and links"""
    width: int = WIDTH
    height: int = HEIGHT
    _layers: list[Callable[[], str]] = field(default_factory=list)
    _legend: list[tuple[str, str]] = field(default_factory=list)
    _vlines: list[tuple[float, str, str]] = field(default_factory=list)
    _shades: list[tuple[float, float, str]] = field(default_factory=list)

    def px(self, x: float) -> float:
        return self.x.position(x, MARGIN_LEFT, self.width - MARGIN_RIGHT)

    def py(self, y: float) -> float:
        return self.y.position(y, self.height - MARGIN_BOTTOM, MARGIN_TOP)

    def legend(self, label: str, col: str) -> None:
        """Add a legend entry (once per label)."""
        if (label, col) not in self._legend:
            self._legend.append((label, col))

    def line(self, points: Sequence[tuple[float, float]], col: str, tip: str = "",
             dash: bool = False, width: float = 1.8) -> None:
        """A polyline through ``points`` (data coordinates)."""
        pts = [p for p in points if self._drawable(*p)]
        if len(pts) < 2:  # a line through one point draws nothing
            return
        self.x.include(*(p[0] for p in pts))
        self.y.include(*(p[1] for p in pts))

        def draw() -> str:
            path = " ".join(f"{self.px(x):.1f},{self.py(y):.1f}" for x, y in pts)
            style = ' stroke-dasharray="5 3"' if dash else ""
            return (f'<polyline class="trace" points="{path}" fill="none" stroke="{col}" '
                    f'stroke-width="{width}"{style}{_tip(tip)}/>')
        self._layers.append(draw)

    def band(self, xs: Sequence[float], lows: Sequence[float], highs: Sequence[float], col: str,
             tip: str = "", opacity: float = 0.18) -> None:
        """A filled band between ``lows`` and ``highs`` over ``xs``."""
        rows = [(x, lo, hi) for x, lo, hi in zip(xs, lows, highs)
                if self._drawable(x, lo) and self._drawable(x, hi)]
        if len(rows) < 2:  # a band over one x has no area
            return
        self.x.include(*(r[0] for r in rows))
        self.y.include(*(r[1] for r in rows), *(r[2] for r in rows))

        def draw() -> str:
            upper = [f"{self.px(x):.1f},{self.py(hi):.1f}" for x, _, hi in rows]
            lower = [f"{self.px(x):.1f},{self.py(lo):.1f}" for x, lo, _ in reversed(rows)]
            return (f'<polygon class="trace band" points="{" ".join(upper + lower)}" '
                    f'fill="{col}" fill-opacity="{opacity}" stroke="none"{_tip(tip)}/>')
        self._layers.append(draw)

    def marker(self, x: float, y: float, col: str, tip: str, shape: str = "circle",
               size: float = 3.5) -> None:
        """One data point with a hover read-out."""
        if not self._drawable(x, y):
            return
        self.x.include(x)
        self.y.include(y)

        def draw() -> str:
            cx, cy = self.px(x), self.py(y)
            if shape == "cross":
                d = size
                return (f'<path class="datum" d="M{cx - d:.1f},{cy - d:.1f}L{cx + d:.1f},'
                        f'{cy + d:.1f}M{cx - d:.1f},{cy + d:.1f}L{cx + d:.1f},{cy - d:.1f}" '
                        f'stroke="{col}" stroke-width="2"{_tip(tip)}/>')
            if shape == "square":
                d = size + 0.5
                return (f'<rect class="datum" x="{cx - d:.1f}" y="{cy - d:.1f}" width="'
                        f'{2 * d:.1f}" height="{2 * d:.1f}" fill="#fff" stroke="{col}" '
                        f'stroke-width="2"{_tip(tip)}/>')
            if shape == "ring":
                return (f'<circle class="datum" cx="{cx:.1f}" cy="{cy:.1f}" r="{size + 1}" '
                        f'fill="#fff" stroke="{col}" stroke-width="2"{_tip(tip)}/>')
            if shape == "diamond":
                d = size * 1.6
                return (f'<path class="datum" d="M{cx:.1f},{cy - d:.1f}L{cx + d:.1f},{cy:.1f}'
                        f'L{cx:.1f},{cy + d:.1f}L{cx - d:.1f},{cy:.1f}Z" fill="{col}" '
                        f'stroke="#000" stroke-width="1"{_tip(tip)}/>')
            return (f'<circle class="datum" cx="{cx:.1f}" cy="{cy:.1f}" r="{size}" '
                    f'fill="{col}"{_tip(tip)}/>')
        self._layers.append(draw)

    def bar(self, x: float, width: float, y: float, col: str, tip: str,
            base: float | None = None) -> None:
        """A vertical bar from the axis floor (or from ``base``: a stacked segment) to ``y``,
        ``width`` in x data units, centred."""
        if not self._drawable(x, y):
            return
        self.x.include(x - width / 2, x + width / 2)
        self.y.include(y)
        if not self.y.log:
            self.y.include(0.0)

        def draw() -> str:
            left, right = self.px(x - width / 2), self.px(x + width / 2)
            top = self.py(y)
            floor = self.height - MARGIN_BOTTOM if base is None else self.py(base)
            return (f'<rect class="datum" x="{left:.1f}" y="{top:.1f}" width="'
                    f'{max(right - left, 1):.1f}" height="{max(floor - top, 0.5):.1f}" '
                    f'fill="{col}"{_tip(tip)}/>')
        self._layers.append(draw)

    def shade(self, x0: float, x1: float, label: str) -> None:
        """A shaded x interval (e.g. a link outage), drawn under the data."""
        self.x.include(x0, x1)
        self._shades.append((x0, x1, label))

    def vline(self, x: float, label: str, col: str = "#444") -> None:
        """A labelled vertical marker line (e.g. the knee)."""
        self.x.include(x)
        self._vlines.append((x, label, col))

    def empty(self) -> bool:
        """True when nothing was drawn."""
        return not self._layers

    def render(self) -> str:
        """The chart as an ``<svg>`` element."""
        w, h = self.width, self.height
        left, right, top, bottom = MARGIN_LEFT, w - MARGIN_RIGHT, MARGIN_TOP, h - MARGIN_BOTTOM
        parts = [f'<svg class="chart" data-chart="{escape(self.name)}" viewBox="0 0 {w} {h}" '
                 f'width="{w}" height="{h}" xmlns="http://www.w3.org/2000/svg" role="img" '
                 f'aria-label="{escape(self.title)}">',
                 f'<text x="{left}" y="18" class="title">{escape(self.title)}</text>']
        for x0, x1, label in self._shades:
            a, b = sorted((max(self.px(x0), left), min(self.px(x1), right)))
            parts.append(f'<rect class="shade" x="{a:.1f}" y="{top}" width="{max(b - a, 1):.1f}"'
                         f' height="{bottom - top}" fill="#888" fill-opacity="0.22"'
                         f'{_tip(label)}/>')
        for value, text in self.y.tick_values():
            y = self.py(value)
            parts.append(f'<line x1="{left}" x2="{right}" y1="{y:.1f}" y2="{y:.1f}" '
                         f'class="grid"/><text x="{left - 6}" y="{y + 4:.1f}" '
                         f'class="tick" text-anchor="end">{escape(text)}</text>')
        for value, text in self.x.tick_values():
            x = self.px(value)
            parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{bottom}" '
                         f'class="grid"/><text x="{x:.1f}" y="{bottom + 16}" class="tick" '
                         f'text-anchor="middle">{escape(text)}</text>')
        parts.append(f'<rect x="{left}" y="{top}" width="{right - left}" height="'
                     f'{bottom - top}" class="frame"/>')
        parts.append(f'<text x="{(left + right) / 2:.0f}" y="{h - 8}" class="axis" '
                     f'text-anchor="middle">{escape(self.x.label)}</text>')
        parts.append(f'<text transform="translate(14,{(top + bottom) / 2:.0f}) rotate(-90)" '
                     f'class="axis" text-anchor="middle">{escape(self.y.label)}</text>')
        parts.append(f'<g clip-path="none">{"".join(draw() for draw in self._layers)}</g>')
        for x, label, col in self._vlines:
            px = self.px(x)
            parts.append(f'<line class="marker-line" x1="{px:.1f}" x2="{px:.1f}" y1="{top}" '
                         f'y2="{bottom}" stroke="{col}" stroke-dasharray="4 3"{_tip(label)}/>'
                         f'<text x="{px + 3:.1f}" y="{top + 12}" class="tick">'
                         f'{escape(label)}</text>')
        parts.append(legend(self._legend[:LEGEND_MAX], right + 10, top, 24))
        parts.append("</svg>")
        return "".join(parts)

    def _drawable(self, x: float | None, y: float | None) -> bool:
        if x is None or y is None or not (math.isfinite(x) and math.isfinite(y)):
            return False
        return not ((self.x.log and x <= 0) or (self.y.log and y <= 0))


def legend(entries: Sequence[tuple[str, str]], x: float, top: float, clip: int) -> str:
    """A chart's legend: a colour swatch and the label (clipped to ``clip`` characters, whole
    in its tooltip) per (label, colour), one under another from ``top``."""
    out = []
    for i, (label, col) in enumerate(entries):
        y = top + 14 + 14 * i
        out.append(f'<rect x="{x}" y="{y - 9}" width="10" height="10" fill="{col}"/>'
                   f'<text x="{x + 14}" y="{y}" class="legend"{_tip(label)}>'
                   f'{escape(_clip(label, clip))}</text>')
    return "".join(out)


def _tip(text: str) -> str:
    return f' data-tip="{escape(text)}"' if text else ""


def _clip(text: str, length: int) -> str:
    return text if len(text) <= length else text[:length - 1] + "\u2026"
