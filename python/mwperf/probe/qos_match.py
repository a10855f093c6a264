"""Why a DDS writer and reader on one topic do not match: DDS's request-vs-offered rules.

A reader *requests* and a writer *offers*; they match, and data flows, only when every offer is
at least what is requested (DDS 1.4, 2.2.3): reliability (best-effort < reliable), durability
(volatile < transient-local < transient < persistent), deadline (the writer's period must be no
longer than the reader's; none = infinite), liveliness (automatic < manual-by-participant <
manual-by-topic, and the writer's lease no longer than the reader's), the same ownership kind,
a partition in common, and the same type name. Pure functions on the QoS dicts the agent
prints (null = infinite); a field either side lacks is not judged.
"""

from fnmatch import fnmatchcase
from typing import Any

from ..durations import format_ns

RELIABILITY = ("best-effort", "reliable")
DURABILITY = ("volatile", "transient-local", "transient", "persistent")
LIVELINESS = ("automatic", "manual-by-participant", "manual-by-topic")


def mismatches(writer: dict[str, Any], reader: dict[str, Any], writer_type: str | None = None,
               reader_type: str | None = None) -> list[str]:
    """Why no data flows from a writer with QoS ``writer`` to a reader with QoS ``reader``
    (empty: they match)."""
    reasons = [r for r in (
        _ordered("reliability", RELIABILITY, writer, reader),
        _ordered("durability", DURABILITY, writer, reader),
        _period("deadline", "deadline_ns", writer, reader),
        _ordered("liveliness", LIVELINESS, writer, reader),
        _period("liveliness lease", "lease_ns", writer, reader),
        _ownership(writer, reader),
        _partitions(writer, reader),
    ) if r]
    if writer_type and reader_type and writer_type != reader_type:
        reasons.append(f"type: the reader expects {reader_type}, the writer publishes "
                       f"{writer_type}")
    return reasons


def _ordered(name: str, order: tuple[str, ...], writer: dict[str, Any],
             reader: dict[str, Any]) -> str | None:
    offered, requested = writer.get(name), reader.get(name)
    if offered not in order or requested not in order:
        return None
    if order.index(requested) > order.index(offered):
        return f"{name}: the reader asks for {requested}, the writer offers {offered}"
    return None


def _period(name: str, key: str, writer: dict[str, Any], reader: dict[str, Any]) -> str | None:
    """A period where the writer's must be <= the reader's (None = infinite)."""
    if key not in writer or key not in reader:
        return None
    offered, requested = writer[key], reader[key]
    if requested is None or (offered is not None and offered <= requested):
        return None
    return (f"{name}: the reader asks for {format_ns(requested)}, the writer offers "
            f"{format_ns(offered) if offered is not None else 'none (infinite)'}")


def _ownership(writer: dict[str, Any], reader: dict[str, Any]) -> str | None:
    offered, requested = writer.get("ownership"), reader.get("ownership")
    if offered is None or requested is None or offered == requested:
        return None
    return f"ownership: the reader is {requested}, the writer {offered}"


def _partitions(writer: dict[str, Any], reader: dict[str, Any]) -> str | None:
    if "partitions" not in writer or "partitions" not in reader:
        return None
    offered = list(writer["partitions"] or [""])  # none = the default partition ""
    requested = list(reader["partitions"] or [""])
    if any(partition_match(w, r) for w in offered for r in requested):
        return None
    return (f"partitions: the reader is in {_names(requested)}, the writer in "
            f"{_names(offered)}: none in common")


def partition_match(a: str, b: str) -> bool:
    """Two partition names match when equal, or when one is a wildcard (fnmatch: ``*``, ``?``,
    ``[...]``) the other, a plain name, matches; two wildcards do not match each other."""
    if a == b:
        return True
    wild_a, wild_b = _wild(a), _wild(b)
    if wild_a and not wild_b:
        return fnmatchcase(b, a)
    if wild_b and not wild_a:
        return fnmatchcase(a, b)
    return False


def _wild(name: str) -> bool:
    return any(c in name for c in "*?[")


def _names(partitions: list[str]) -> str:
    return ", ".join(repr(p) if p else "the default partition" for p in partitions)
