"""Reading a scenario file: YAML into plain values that remember their line.

PyYAML's ``compose`` keeps each node's position; ``yaml.safe_load`` throws it away. Every error
about a scenario must name ``FILE:LINE``, so the document is composed and turned into ``Item``s
(a value with the 1-based line it was written on). Scalars are resolved exactly as
``safe_load`` would (``1000`` an int, ``true`` a bool, ``10ms`` a string); duplicate keys, which
``safe_load`` silently lets the last one win, are an error here.
"""

from dataclasses import dataclass
from typing import Any

import yaml

from ..errors import UsageError


@dataclass(frozen=True)
class Item:
    """A value from the file and the line it is on: a scalar, a list of Items or a mapping."""

    value: Any
    """str | int | float | bool | None, list[Item], or dict[str, Item] (keys in file order)"""
    line: int
    key_lines: tuple[tuple[str, int], ...] = ()
    """for a mapping: each key's own line (where an unknown or misplaced key is reported)"""

    def key_line(self, key: str) -> int:
        """The line of mapping key ``key`` (the mapping's own line if unknown)."""
        return dict(self.key_lines).get(key, self.line)

    def plain(self) -> Any:
        """The value without lines (lists and mappings converted recursively)."""
        if isinstance(self.value, list):
            return [item.plain() for item in self.value]
        if isinstance(self.value, dict):
            return {key: item.plain() for key, item in self.value.items()}
        return self.value


def parse_document(text: str, where: str) -> Item:
    """Parse YAML ``text`` (``where`` names the file in errors) into an Item tree."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc)
        raise UsageError(f"{where}:{line}: not valid YAML: {problem}") from None
    if node is None:
        raise UsageError(f"{where}:1: the file is empty; a scenario is a mapping of fields, "
                         f"e.g. 'transport: [udp, tcp]'")
    return _item(node, where, yaml.SafeLoader(""))


def _item(node: yaml.Node, where: str, loader: yaml.SafeLoader) -> Item:
    line = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        values: dict[str, Item] = {}
        lines: list[tuple[str, int]] = []
        for key_node, value_node in node.value:
            key_line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):
                raise UsageError(f"{where}:{key_line}: a key must be a plain name")
            key = str(_scalar(key_node, where, loader))
            if key in values:
                raise UsageError(f"{where}:{key_line}: field '{key}': given twice (first on "
                                 f"line {dict(lines)[key]})")
            values[key] = _item(value_node, where, loader)
            lines.append((key, key_line))
        return Item(values, line, tuple(lines))
    if isinstance(node, yaml.SequenceNode):
        return Item([_item(child, where, loader) for child in node.value], line)
    return Item(_scalar(node, where, loader), line)


def _scalar(node: yaml.Node, where: str, loader: yaml.SafeLoader) -> Any:
    """A scalar's value; one YAML cannot build (a date such as 2020-13-45, bad !!binary, an
    unknown tag) is a UsageError at its line, not a traceback (tests/test_properties.py)."""
    try:
        return loader.construct_object(node)
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
        problem = getattr(exc, "problem", None) or str(exc)
        raise UsageError(f"{where}:{node.start_mark.line + 1}: cannot read the value "
                         f"{node.value!r}: {problem}") from None
