"""The log ``mwperf-agent probe-ros2`` prints (docs/replay-and-probe.md; the agent's side is
in the issue 28 spec): one line per event. A line starting with ``{`` is a JSON event
(participant, writer, reader, nodes, subscribed, subscribe-failed, discovered, end); a line
starting with a digit is an arrival, ``<unix ns> <subscription index> <bytes> <stamp ns|-1>``.

The measurement window starts at the ``discovered`` event (arrivals before it are left out:
the subscriptions were still being made) and ends at ``end``. Lines that are neither, or that do
not parse, are skipped (the READY line, a line cut short by a kill).
"""

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .ros2_names import node_name


@dataclass
class Endpoint:
    """A DDS writer or reader as discovery last described it."""

    guid: str
    participant: str
    topic: str
    type: str
    qos: dict[str, Any]
    alive: bool = True


@dataclass
class Subscription:
    """One of the probe's readers: the arrivals carry its index."""

    topic: str
    type: str
    header: bool
    arrivals: list[int] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    stamps: list[int] = field(default_factory=list)


@dataclass
class Ros2Log:
    """Everything the agent printed, in the order of discovery."""

    participants: dict[str, bool] = field(default_factory=dict)
    """participant GUID -> alive"""
    writers: dict[str, Endpoint] = field(default_factory=dict)
    readers: dict[str, Endpoint] = field(default_factory=dict)
    nodes: dict[str, list[str]] = field(default_factory=dict)
    """participant GUID -> its nodes' full names (from ros_discovery_info)"""
    node_of: dict[str, str] = field(default_factory=dict)
    """endpoint GUID -> the full name of the node it belongs to"""
    subscriptions: dict[int, Subscription] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    """DDS topic -> why the probe could not subscribe to it"""
    domain: int | None = None
    interface: str | None = None
    discovered_ns: int | None = None
    end_ns: int | None = None
    taken: int | None = None
    lost: int | None = None
    lost_by_index: dict[int, int] = field(default_factory=dict)
    early: int = 0
    """arrivals before the window (left out)"""


def read_log(path: Path) -> Ros2Log:
    """Parse the agent's log file (streamed: an arrival costs three ints, not a line)."""
    with path.open(errors="replace") as lines:
        return parse(lines)


def parse(lines: Iterable[str]) -> Ros2Log:
    """Parse the agent's lines."""
    log = Ros2Log()
    pending: list[tuple[int, int, int, int]] = []  # arrivals of an index not subscribed yet
    for line in lines:
        if line[:1].isdigit():
            arrival = _arrival(line)
            if arrival is not None:
                _add_arrival(log, arrival, pending)
        elif line.startswith("{"):
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict):
                _event(log, event)
        elif line.startswith("READY"):
            _ready(log, line)
    for arrival in pending:  # a subscribed event printed after its first samples
        _add_arrival(log, arrival, [])
    return log


def _arrival(line: str) -> tuple[int, int, int, int] | None:
    parts = line.split()
    if len(parts) != 4:
        return None
    try:
        t, index, size, stamp = (int(p) for p in parts)
    except ValueError:
        return None
    return t, index, size, stamp


def _add_arrival(log: Ros2Log, arrival: tuple[int, int, int, int],
                 pending: list[tuple[int, int, int, int]]) -> None:
    t, index, size, stamp = arrival
    if log.discovered_ns is None or t < log.discovered_ns:
        log.early += 1
        return
    if log.end_ns is not None and t > log.end_ns:
        return
    sub = log.subscriptions.get(index)
    if sub is None:
        pending.append(arrival)
        return
    sub.arrivals.append(t)
    sub.sizes.append(size)
    sub.stamps.append(stamp)


def _ready(log: Ros2Log, line: str) -> None:
    for word in line.split()[2:]:
        key, _, value = word.partition("=")
        if key == "domain" and value.isdigit():
            log.domain = int(value)
        elif key == "interface" and value:
            log.interface = value


def _event(log: Ros2Log, event: dict[str, Any]) -> None:
    kind = event.get("event")
    alive = event.get("alive", True) is not False
    if kind == "participant" and isinstance(event.get("guid"), str):
        log.participants[event["guid"]] = alive
    elif kind in ("writer", "reader") and isinstance(event.get("guid"), str):
        table = log.writers if kind == "writer" else log.readers
        known = table.get(event["guid"])
        if known is not None and not alive:
            known.alive = False
            return
        qos = event.get("qos")
        table[event["guid"]] = Endpoint(
            guid=event["guid"], participant=str(event.get("participant") or ""),
            topic=str(event.get("topic") or (known.topic if known else "")),
            type=str(event.get("type") or (known.type if known else "")),
            qos=qos if isinstance(qos, dict) else (known.qos if known else {}), alive=alive)
    elif kind == "nodes" and isinstance(event.get("participant"), str):
        _nodes(log, event["participant"], event.get("nodes") or [])
    elif kind == "subscribed" and isinstance(event.get("index"), int):
        log.subscriptions[event["index"]] = Subscription(
            str(event.get("topic")), str(event.get("type")), bool(event.get("header")))
    elif kind == "subscribe-failed" and isinstance(event.get("topic"), str):
        log.failed[event["topic"]] = str(event.get("why") or "the agent gave no reason")
    elif kind == "discovered" and isinstance(event.get("t"), int):
        log.discovered_ns = event["t"]
    elif kind == "end":
        log.end_ns = event.get("t") if isinstance(event.get("t"), int) else None
        log.taken = event.get("taken")
        log.lost = event.get("lost")
        log.lost_by_index = _lost_by_index(event.get("lost_by_index"))


def _nodes(log: Ros2Log, participant: str, nodes: list[Any]) -> None:
    """A participant's current nodes (the info is rewritten whole on every change)."""
    for guid in [g for g, p in log.node_of.items() if p in log.nodes.get(participant, [])]:
        del log.node_of[guid]
    names = []
    for node in nodes:
        if not isinstance(node, dict) or not node.get("name"):
            continue
        full = node_name(str(node.get("namespace") or "/"), str(node["name"]))
        names.append(full)
        for guid in [*(node.get("readers") or []), *(node.get("writers") or [])]:
            log.node_of[str(guid)] = full
    log.nodes[participant] = names


def _lost_by_index(value: Any) -> dict[int, int]:
    """``{"K": L, ...}`` or ``[L0, L1, ...]`` -> {K: L}."""
    if isinstance(value, dict):
        return {int(k): int(v) for k, v in value.items() if str(k).isdigit() and isinstance(v, int)}
    if isinstance(value, list):
        return {k: int(v) for k, v in enumerate(value) if isinstance(v, int)}
    return {}
