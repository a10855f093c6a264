"""Checking a scenario document field by field and building a ``Scenario``.

Every key is either a point option (``config.OPTIONS``: named like the command-line flags, so an
option added there is accepted here without a change) or one of the scenario's own keys
(description, repeat, exclude, timeout, quick, analysis, and hosts/links/place: hosts.py); a
``quick:`` block replaces whole fields, and drops one given as null. The shape of each value is
checked here; whether a value makes sense for a point (a known payload, a parseable rate) is checked by
``config.build_point`` on every expanded point (``check.py``), so both paths share one set of
rules. Every error is ``FILE:LINE: field 'NAME': what is wrong; what is allowed``.
"""

import difflib
from typing import Any

from ..config import OPTIONS
from ..durations import parse_duration
from ..errors import UsageError
from .hosts import KEYS as HOST_KEYS
from .hosts import parse_topology
from .real_hosts import parse_real_hosts
from .model import Analysis, Exclusion, Field, Scenario, Value
from .source import Item, parse_document

OWN_KEYS = ("description", "repeat", "interleave", "exclude", "timeout", "quick", "analysis",
            *HOST_KEYS)
QUICK_KEYS = ("repeat", "interleave", "exclude", "timeout")
"""besides the point options, what a ``quick:`` block may override"""
ANALYSIS_KEYS = {"knee_factor": "p99 must stay below period x knee_factor",
                 "knee_loss_pct": "loss must stay below knee_loss_pct percent"}


def parse_scenario(text: str, where: str, name: str, quick: bool = False) -> Scenario:
    """Parse scenario ``text`` (file ``where``, called ``name``); apply ``quick:`` if asked."""
    document = parse_document(text, where)
    if not isinstance(document.value, dict):
        raise UsageError(f"{where}:{document.line}: a scenario is a mapping of fields "
                         f"(e.g. 'rate: [100, 1000]'), not a {_kind(document.value)}")
    top = _fields_of(document, where, OWN_KEYS)
    quick_item = top.get("quick")
    overrides: dict[str, Item] = {}
    if quick_item is not None:
        if not isinstance(quick_item.value, dict):
            raise _error(where, quick_item.line, "quick", "must be a mapping of the fields the "
                         "quick variant changes, e.g. 'quick: {duration: 300ms}'")
        overrides = _fields_of(quick_item, where, QUICK_KEYS)
    fields = _fields(top, document, where)
    exclusions = _exclusions(top.get("exclude"), fields, where, strict=True)
    repeat, timeout_ns = _repeat(top.get("repeat"), where), _timeout(top.get("timeout"), where)
    interleave = _interleave(top.get("interleave"), where)
    real = parse_real_hosts(top, where)
    topology = None if real is not None else parse_topology(
        top, document, where, next((f.line for f in fields if f.name == "link"), None))
    chosen = dict(top)
    if quick:  # the full variant is checked above; the quick one replaces whole fields
        for key, item in overrides.items():  # (null drops one: 'quick: {min_samples: null}')
            for same in [k for k in chosen if (_option(k) or k) == (_option(key) or key)]:
                del chosen[same]
            if item.value is not None:
                chosen[key] = item
        lines = {key: (quick_item if key in overrides else document).key_line(key)  # type: ignore[union-attr]
                 for key in chosen}
        order = {_option(k): i for i, k in enumerate(top)}  # axis order stays the file's
        fields = tuple(sorted(_fields(chosen, lines, where),
                              key=lambda f: order.get(f.name, len(order))))
        exclusions = _exclusions(chosen.get("exclude"), fields, where,
                                 strict="exclude" in overrides)
        repeat, timeout_ns = _repeat(chosen.get("repeat"), where), _timeout(chosen.get("timeout"),
                                                                            where)
        interleave = _interleave(chosen.get("interleave"), where)
    description = chosen.get("description")
    if description is not None and not isinstance(description.value, str):
        raise _error(where, description.line, "description", "must be text (one line shown by "
                     "'mwperf scenarios')")
    return Scenario(
        name=name, where=where, description=(description.value if description else "").strip(),
        fields=fields, exclusions=exclusions, repeat=repeat, interleave=interleave,
        timeout_ns=timeout_ns, analysis=_analysis(top.get("analysis"), where), quick=quick, source=text,
        topology=topology.to_dict() if topology is not None else None, real_hosts=real)


def _fields(entries: dict[str, Item], lines: Item | dict[str, int], where: str
            ) -> tuple[Field, ...]:
    """The option fields among ``entries`` (key lines from a mapping Item or a dict)."""
    line_of = lines.key_line if isinstance(lines, Item) else lines.__getitem__
    return tuple(_field(key, item, line_of(key), where)
                 for key, item in entries.items() if _option(key) is not None)


def _option(key: str) -> str | None:
    """The config.OPTIONS name of ``key`` (flags may be spelt with - or _), or None."""
    normal = key.replace("-", "_")
    return normal if normal in OPTIONS else None


def _fields_of(mapping: Item, where: str, own: tuple[str, ...]) -> dict[str, Item]:
    """The mapping's entries, every key known (an option or one of ``own``)."""
    allowed = [*OPTIONS, *own]
    for key in mapping.value:
        if key in OWN_KEYS and key not in own:
            raise _error(where, mapping.key_line(key), key, f"a quick variant cannot change "
                         f"it; allowed in quick: {', '.join(allowed)}")
        if _option(key) is None and key not in own:
            close = difflib.get_close_matches(key.replace("-", "_"), allowed, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise _error(where, mapping.key_line(key), key, f"unknown field{hint}; allowed: "
                         f"{', '.join(allowed)}")
    seen: dict[str, str] = {}
    for key in mapping.value:
        normal = _option(key) or key
        if normal in seen:
            raise _error(where, mapping.key_line(key), key,
                         f"the same field as '{seen[normal]}'; give it once")
        seen[normal] = key
    return dict(mapping.value)


def _field(key: str, item: Item, key_line: int, where: str) -> Field:
    name = _option(key)
    assert name is not None
    kind = OPTIONS[name]
    if kind == "list":  # one value, a list of texts (gates:), never an axis
        return Field(name, (_texts(key, item, where),), axis=False, line=key_line)
    if isinstance(item.value, list):
        if not item.value:
            raise _error(where, item.line, key, "an empty list gives no points; give a value "
                         "or a list of values (an axis)")
        values = tuple(_value(key, kind, child, where, in_axis=True) for child in item.value)
        first: dict[str, int] = {}
        for value in values:
            if value.shown() in first:
                raise _error(where, value.line, key, f"value '{value.shown()}' is listed twice "
                             f"(first on line {first[value.shown()]})")
            first[value.shown()] = value.line
        return Field(name, values, axis=len(values) > 1, line=key_line)
    value = _value(key, kind, item, where)
    # 'transport: built-in' is every transport the agent has: an axis (exclude may name it)
    return Field(name, (value,), axis=name == "transport" and value.value == "built-in",
                 line=key_line)


def _value(key: str, kind: str, item: Item, where: str, in_axis: bool = False) -> Value:
    """One value of an option field, shaped as build_point takes it; on an axis (``in_axis``)
    a repeated field's ``[]`` is the point without any (``opt: [[], [link=quic]]``)."""
    value = item.value
    if kind == "flag":
        if not isinstance(value, bool):
            raise _error(where, item.line, key, f"must be true or false, got {_shown(value)}")
        return Value(value, item.line)
    if kind == "repeated":
        parts = value if isinstance(value, list) else [item]
        if isinstance(value, list) and not value and not in_axis:
            raise _error(where, item.line, key, "an empty list; give KEY=VALUE settings")
        texts = []
        for part in parts:
            if not isinstance(part.value, str) or "=" not in part.value:
                raise _error(where, part.line, key, f"must be KEY=VALUE (e.g. mode=client), got "
                             f"{_shown(part.plain())}")
            texts.append(part.value.strip())
        return Value(tuple(texts), item.line)
    if value is None or isinstance(value, (bool, list, dict)):
        raise _error(where, item.line, key, f"must be a single value (a list makes an axis), "
                     f"got {_shown(item.plain())}")
    return Value(str(value).strip(), item.line)


def _texts(key: str, item: Item, where: str) -> Value:
    """A ``list`` field: one text or a list of texts, as one value."""
    parts = item.value if isinstance(item.value, list) else [item]
    texts = []
    for part in parts:
        if not isinstance(part.value, str) or not part.value.strip():
            raise _error(where, part.line, key, f"must be a list of texts such as "
                         f"'rss-growth<=2MiB', got {_shown(part.plain())}")
        texts.append(part.value.strip())
    return Value(tuple(texts), item.line)


def _exclusions(item: Item | None, fields: tuple[Field, ...], where: str, strict: bool
                ) -> tuple[Exclusion, ...]:
    """The exclude: rules. ``strict``: each field must be an axis and each value on it (a
    quick variant that narrows an axis keeps the file's rules, which then may match nothing)."""
    if item is None:
        return ()
    if not isinstance(item.value, list):
        raise _error(where, item.line, "exclude", "must be a list of partial points, e.g. "
                     "'- {transport: udp, payload: Array64k}'")
    axes = {f.name: f for f in fields if f.axis or not strict}
    rules = []
    for rule in item.value:
        if not isinstance(rule.value, dict) or not rule.value:
            raise _error(where, rule.line, "exclude", f"each entry must map axis fields to "
                         f"values, got {_shown(rule.plain())}")
        match = []
        for key, wanted in rule.value.items():
            name = _option(key)
            if name not in axes and not strict:
                match.append((name or key, frozenset()))
                continue
            if name not in axes:
                raise _error(where, rule.key_line(key), key, f"exclude names a field that is "
                             f"not an axis (a list) here; axes: {', '.join(axes) or 'none'}")
            options = {v.shown() for v in axes[name].values}
            givens = wanted.value if isinstance(wanted.value, list) else [wanted]
            shown = set()
            if not givens:
                raise _error(where, wanted.line, key, "exclude gives no value to match; give "
                             "one or a list of values")
            for given in givens:
                text = _value(key, OPTIONS[name], given, where, in_axis=True).shown()
                if strict and text not in options and not _open_axis(axes[name]):
                    raise _error(where, given.line, key, f"exclude value '{text}' is not on "
                                 f"the axis; allowed: {', '.join(sorted(options))}")
                shown.add(text)
            match.append((name, frozenset(shown)))
        rules.append(Exclusion(tuple(match), rule.line))
    return tuple(rules)


def _open_axis(axis: Field) -> bool:
    """A transport axis with 'built-in' matches any transport name."""
    return axis.name == "transport" and any(v.value == "built-in" for v in axis.values)


def _repeat(item: Item | None, where: str) -> int:
    if item is None:
        return 1
    if isinstance(item.value, bool) or not isinstance(item.value, int) or item.value < 1:
        raise _error(where, item.line, "repeat", f"must be a whole number >= 1 (measurements "
                     f"of each point), got {_shown(item.value)}")
    return item.value


def _interleave(item: Item | None, where: str) -> bool:
    if item is None:
        return False
    if not isinstance(item.value, bool):
        raise _error(where, item.line, "interleave", f"must be true or false (true: repetition "
                     f"r of every point before repetition r+1 of any), got {_shown(item.value)}")
    return item.value


def _timeout(item: Item | None, where: str) -> int | None:
    if item is None:
        return None
    try:
        ns = parse_duration(str(item.value)) if isinstance(item.value, str) else -1
    except ValueError:
        ns = -1
    if ns <= 0:
        raise _error(where, item.line, "timeout", f"must be a duration > 0 such as 60s or 5m "
                     f"(a point still running after it is stopped), got {_shown(item.value)}")
    return ns


def _analysis(item: Item | None, where: str) -> Analysis:
    if item is None:
        return Analysis()
    if not isinstance(item.value, dict):
        raise _error(where, item.line, "analysis", f"must be a mapping of "
                     f"{', '.join(ANALYSIS_KEYS)}")
    numbers: dict[str, float] = {}
    for key, value in item.value.items():
        if key not in ANALYSIS_KEYS:
            raise _error(where, item.key_line(key), key, f"unknown analysis setting; allowed: "
                         f"{', '.join(ANALYSIS_KEYS)}")
        number = value.value
        if isinstance(number, bool) or not isinstance(number, (int, float)) or number < 0 or (
                key == "knee_factor" and number == 0):
            raise _error(where, value.line, key, f"must be a number {'> 0' if key == 'knee_factor' else '>= 0'} "
                         f"({ANALYSIS_KEYS[key]}), got {_shown(number)}")
        numbers[key] = float(number)
    return Analysis(**numbers)


def _error(where: str, line: int, name: str, message: str) -> UsageError:
    return UsageError(f"{where}:{line}: field '{name}': {message}")


def _shown(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, (list, dict)) else f"'{value}'"


def _kind(value: Any) -> str:
    return "list" if isinstance(value, list) else f"single value ({_shown(value)})"
