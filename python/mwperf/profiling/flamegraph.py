"""A flame graph as a self-contained SVG (no script, no network): each frame a box as wide as
its share of the samples, callers below their callees' row... drawn the classic way — the root
at the bottom, the leaves on top — with the function and its share in a tooltip (<title>)."""
from __future__ import annotations

import hashlib
from collections import Counter
from html import escape

WIDTH = 1200
ROW = 16
MIN_WIDTH = 0.5
"""boxes narrower than this many pixels are left out (they could not be read)"""
FONT = 11
CHAR_PX = 6.2


class _Node:
    __slots__ = ("name", "count", "children")

    def __init__(self, name: str):
        self.name = name
        self.count = 0
        self.children: dict[str, _Node] = {}


def _tree(stacks: Counter[str]) -> _Node:
    root = _Node("all")
    for stack, count in stacks.items():
        root.count += count
        node = root
        for name in stack.split(";"):
            node = node.children.setdefault(name, _Node(name))
            node.count += count
    return root


def _depth(node: _Node) -> int:
    return 1 + max((_depth(c) for c in node.children.values()), default=0)


def _colour(name: str) -> str:
    """Warm colours, stable per function name; kernel frames in orange-brown."""
    h = int(hashlib.md5(name.encode()).hexdigest()[:6], 16)
    if name.startswith(("__x64_sys", "entry_SYSCALL", "do_syscall")) or "[k]" in name:
        return f"rgb({200 + h % 40},{120 + h % 60},{40 + h % 30})"
    return f"rgb({220 + h % 35},{80 + (h >> 8) % 120},{40 + (h >> 16) % 50})"


def render(stacks: Counter[str], title: str) -> str:
    """The SVG text of the flame graph of ``stacks`` (folded: ``a;b;c -> samples``)."""
    root = _tree(stacks)
    total = root.count or 1
    depth = _depth(root)
    height = (depth + 2) * ROW + 30
    boxes: list[str] = []

    def draw(node: _Node, x: float, level: int) -> None:
        width = WIDTH * node.count / total
        if width < MIN_WIDTH:
            return
        y = height - 10 - (level + 1) * ROW
        share = 100 * node.count / total
        label = node.name
        room = int((width - 4) / CHAR_PX)
        text = label if len(label) <= room else (label[: room - 2] + ".." if room > 3 else "")
        boxes.append(
            f'<g><title>{escape(label)} ({node.count} samples, {share:.2f} %)</title>'
            f'<rect x="{x:.2f}" y="{y}" width="{width:.2f}" height="{ROW - 1}" '
            f'fill="{_colour(label)}" rx="2"/>'
            + (f'<text x="{x + 3:.2f}" y="{y + ROW - 4}">{escape(text)}</text>' if text else "")
            + "</g>")
        child_x = x
        for child in sorted(node.children.values(), key=lambda c: c.name):
            draw(child, child_x, level + 1)
            child_x += WIDTH * child.count / total

    draw(root, 0.0, 0)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" font-family="monospace" font-size="{FONT}">'
            f'<text x="{WIDTH / 2}" y="16" text-anchor="middle" font-size="13">'
            f'{escape(title)}</text>' + "".join(boxes) + "</svg>\n")
