"""Byte sizes: parse "100", "64KiB", "4MiB" into bytes, and format byte counts for people.

Binary suffixes only (KiB = 1024 bytes): message sizes in robotics are powers of two far more
often than not, and "64KB" would leave the reader guessing which kilo was meant.
"""

import re

BYTES_PER_SUFFIX: dict[str, int] = {"": 1, "B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}
_PATTERN = re.compile(r"(\d+)(B|KiB|MiB|GiB)?")


def parse_size(text: str) -> int:
    """Return ``text`` as a number of bytes; raise ValueError when it is not a size."""
    match = _PATTERN.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not a byte size: {text!r}")
    return int(match.group(1)) * BYTES_PER_SUFFIX[match.group(2) or ""]


def format_bytes(count: int) -> str:
    """Format a byte count for people: 64 B, 16 KiB, 1.5 MiB (up to four significant digits)."""
    for size, unit in ((1024**3, "GiB"), (1024**2, "MiB"), (1024, "KiB")):
        if count >= size:
            value = count / size
            return f"{value:.0f} {unit}" if value.is_integer() else f"{value:.4g} {unit}"
    return f"{count} B"
