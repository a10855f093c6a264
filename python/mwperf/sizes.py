"""Byte sizes: parse "100", "64KiB", "4MiB" into bytes, and format byte counts for people.

The grammar is the agent's (crates/mwperf-core/src/units.rs, ``parse_bytes``), written out in
docs/cli.md ("Sizes"): a whole number of bytes with an optional binary unit, in any case — ``B``;
``K`` or ``KiB`` (1024); ``M`` or ``MiB``; ``G`` or ``GiB``. ``64k`` is ``64KiB``, as
performance_test's message names write it (Array64k). ``KB``, ``MB`` and ``GB`` are refused:
"64KB" would leave the reader guessing which kilo was meant. tests/vectors/sizes.json holds the
cases both languages run.
"""

import re

from .errors import UsageError

BYTES_PER_UNIT: dict[str, int] = {"": 1, "b": 1, "k": 1024, "kib": 1024, "m": 1024**2,
                                  "mib": 1024**2, "g": 1024**3, "gib": 1024**3}
"""unit (lower case) -> bytes"""
AMBIGUOUS = ("kb", "mb", "gb")
MAX_SIZE = 2**64 - 1
"""the agent's largest number (a 64-bit usize)"""
SIZE_HINT = ("use a whole number of bytes with an optional binary unit, e.g. 100, 64KiB "
             "(or 64k), 4MiB, 1GiB")
_PATTERN = re.compile(r"([0-9]+)([A-Za-z]*)")


def parse_size(text: str) -> int:
    """Return ``text`` as a number of bytes; raise ValueError saying why when it is not a size."""
    match = _PATTERN.fullmatch(text.strip())
    unit = match.group(2).lower() if match else None
    if match is None or (unit not in BYTES_PER_UNIT and unit not in AMBIGUOUS):
        raise ValueError(f"cannot parse '{text}' as a size; {SIZE_HINT}")
    if unit in AMBIGUOUS:
        raise ValueError(f"'{text}': {match.group(2)} is ambiguous (1000 or 1024?); write "
                         f"{match.group(1)}{unit[0].upper()}iB (binary) or the number of bytes")
    size = int(match.group(1)) * BYTES_PER_UNIT[unit or ""]
    if size > MAX_SIZE:
        raise ValueError(f"'{text}' is too large a size")
    return size


def payload_size(flag: str, text: str, catalogue: dict[str, int]) -> int:
    """A payload's bytes after the header, as the agent resolves it (mwperf-core's
    ``payload::resolve``): a catalogue name in any case, else a size; a usage error naming
    ``flag`` otherwise. Whether it fits the transport is the sizes part's check."""
    given = text.strip()
    found = next((n for name, n in catalogue.items()
                  if given.isascii() and name.lower() == given.lower()), None)
    if found is not None:
        return found
    if not given[:1].isdigit() or not given[:1].isascii():
        names = list(catalogue)  # smallest first
        span = f"{names[0]} \u2026 {names[-1]}, " if names else ""
        raise UsageError(f"{flag}: unknown payload '{text}'; use a catalogue name ({span}see "
                         f"'mwperf payloads') or a size such as 100 or 64KiB")
    try:
        return parse_size(given)
    except ValueError as exc:
        raise UsageError(f"{flag}: {exc}") from None


def format_bytes(count: int) -> str:
    """Format a byte count for people: 64 B, 16 KiB, 1.5 MiB (up to four significant digits)."""
    for size, unit in ((1024**3, "GiB"), (1024**2, "MiB"), (1024, "KiB")):
        if count >= size:
            value = count / size
            return f"{value:.0f} {unit}" if value.is_integer() else f"{value:.4g} {unit}"
    return f"{count} B"
