"""Durations: parse "10s", "500ms", "250us" into integer nanoseconds, and format them for people.

The grammar is shared with the Rust agent (tests/vectors/durations.json holds the vectors both
sides must pass): optional surrounding whitespace, a decimal number without sign or exponent,
then a unit ``ns``, ``us``/``µs``, ``ms``, ``s``, ``m`` or ``h``. A bare ``0`` means zero; any
other bare number is rejected because its unit would be a guess. The value must be a whole
number of nanoseconds.
"""

import re
from decimal import Decimal

NS_PER_UNIT: dict[str, int] = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # the micro sign U+00B5 (as the agent: not the Greek mu U+03BC)
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
MAX_NS = 2**63 - 1
# ASCII digits only (re.ASCII): Python's \d also matches other scripts' digits ("٣s"), which the
# agent rejects (found by the property tests, tests/test_properties.py)
_PATTERN = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ns|us|\u00b5s|ms|s|m|h)")


def parse_duration(text: str) -> int:
    """Return ``text`` as nanoseconds; raise ValueError when it is not a valid duration."""
    stripped = text.strip()
    if stripped == "0":
        return 0
    match = _PATTERN.fullmatch(stripped)
    if match is None:
        raise ValueError(f"not a duration: {text!r}")
    value = Decimal(match.group(1)) * NS_PER_UNIT[match.group(2)]
    if value != value.to_integral_value():
        raise ValueError(f"not a whole number of nanoseconds: {text!r}")
    if value > MAX_NS:
        raise ValueError(f"too long: {text!r}")
    return int(value)


def format_ns(ns: float | None) -> str:
    """Format a duration for people with three significant digits: 850 ns, 5.71 µs, 12.3 ms, 2.50 s.

    ``None`` (nothing was measured) is shown as an em dash, never as zero.
    """
    if ns is None:
        return "\u2014"
    rounded = float(f"{ns:.3g}")  # round first so 999.7 µs becomes 1.00 ms, not 1000 µs
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "\u00b5s")):
        if abs(rounded) >= scale:
            return f"{_three_digits(rounded / scale)} {unit}"
    return f"{rounded:.0f} ns"


def format_duration_arg(ns: int) -> str:
    """Format nanoseconds for an agent flag: exact and unambiguous (``1500000000ns``)."""
    return f"{ns}ns"


def _three_digits(value: float) -> str:
    """Three significant digits without an exponent: 5.71, 12.3, 457."""
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"
