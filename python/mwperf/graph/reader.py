"""Reading a graph file's entries: errors as ``FILE:LINE: what`` (parse.py, services.py)."""

from ..durations import parse_duration
from ..errors import UsageError
from ..scenario.source import Item
from ..sizes import parse_size

MAX_RATE_HZ = 100_000.0


class Reader:
    """Errors as ``FILE:LINE: what`` for one graph file."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, item: Item | int, text: str) -> UsageError:
        line = item if isinstance(item, int) else item.line
        return UsageError(f"{self.where}:{line}: {text}")

    def mapping(self, item: Item, what: str, allowed: tuple[str, ...]) -> dict[str, Item]:
        if not isinstance(item.value, dict):
            raise self.fail(item, f"{what}: expected a mapping of {', '.join(allowed)}")
        for key in item.value:
            if key not in allowed:
                raise self.fail(item.key_line(key), f"{what}: unknown key '{key}'; allowed: "
                                f"{', '.join(allowed)}")
        return item.value

    def items(self, item: Item | None, what: str) -> list[Item]:
        if item is None or item.value is None:
            return []
        if not isinstance(item.value, list):
            raise self.fail(item, f"{what}: expected a list")
        return item.value

    def text(self, item: Item | None, what: str, required: bool = True) -> str | None:
        if item is None or item.value is None:
            if required:
                raise self.fail(item.line if item else 1, f"{what}: missing")
            return None
        if isinstance(item.value, (list, dict, bool)):
            raise self.fail(item, f"{what}: expected a name, got {item.plain()!r}")
        value = str(item.value).strip()
        if not value:
            raise self.fail(item, f"{what}: empty")
        return value

    def duration(self, item: Item, what: str) -> int:
        try:
            return parse_duration(str(item.value))
        except ValueError:
            raise self.fail(item, f"{what}: '{item.value}' is not a duration; use e.g. 10ms, "
                            f"100us, 1s") from None

    def size(self, item: Item, what: str) -> int:
        try:
            return parse_size(str(item.value))
        except ValueError:
            raise self.fail(item, f"{what}: '{item.value}' is not a size in bytes; use e.g. 256, "
                            f"4KiB, 1MiB") from None

    def number(self, item: Item, what: str, low: float, high: float) -> float:
        value = item.value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not low <= value <= high:
            raise self.fail(item, f"{what}: '{value}' is not a number from {low:g} to {high:g}")
        return float(value)


SATURATE = "max"
"""a publisher's ``rate: max``: back to back, as fast as the middleware accepts (period 0)"""


def period(read: Reader, item: Item, fields: dict[str, Item], what: str,
           saturate: bool = False) -> int:
    """A timer's period in ns from its ``rate`` (Hz) or ``period`` (a duration); with
    ``saturate`` (a publisher) ``rate: max`` is 0: back to back, as fast as accepted."""
    if ("rate" in fields) == ("period" in fields):
        raise read.fail(item, f"{what}: give one of rate (Hz) or period (a duration)"
                        + ("; rate: max for as fast as the middleware accepts" if saturate
                           else ""))
    if "rate" in fields:
        if fields["rate"].value == SATURATE:
            if not saturate:
                raise read.fail(fields["rate"], f"{what}: rate max: only a publisher saturates "
                                "(as fast as the middleware accepts); give a rate in Hz or a "
                                "period")
            return 0
        try:
            rate = read.number(fields["rate"], f"{what}: rate", 1e-3, MAX_RATE_HZ)
        except UsageError as exc:
            if not saturate:
                raise
            raise UsageError(f"{exc}, or max (back to back, as fast as the middleware "
                             "accepts)") from None
        return round(1e9 / rate)
    period_ns = read.duration(fields["period"], f"{what}: period")
    if period_ns <= 0:
        raise read.fail(fields["period"], f"{what}: period must be more than 0"
                        + (" (for a saturating publisher: rate: max)" if saturate else ""))
    return period_ns
