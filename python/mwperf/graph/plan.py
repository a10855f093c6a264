"""A graph made runnable: each topic's number and address(es) for the transport, and each
node's spec for its agent (``mwperf-agent node --node-spec``; docs/agent-contract.md "node").

Addresses: middleware carries a topic by name, so a topic is the point's address with a base
of its own (``g<tag>t<id>``: a run's topics never meet another run's); plain sockets carry it
to addresses, so each subscription listens on one of its own (a free UDP port, a socket file)
and a topic's publishers send to every subscription of it.
"""

import contextlib
import os
import socket
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from .model import Graph, Qos

if TYPE_CHECKING:
    from ..place import Place

SOCKET = ("udp", "uds")
BASED = ("iceoryx2", "cyclonedds", "fastdds", "rustdds", "mqtt", "ros1")
"""transports whose address ends in a base name a graph replaces per topic"""


@dataclass(frozen=True)
class Addresses:
    """Where each subscription listens and where each topic is published to."""

    listen: dict[tuple[str, str], str]
    """(node, topic) -> the subscription's address"""
    publish: dict[str, list[str]]
    """topic -> every address its publishers send to"""


def supported(transport: str) -> None:
    if transport not in SOCKET + BASED:
        raise UsageError(f"--graph: not yet with --transport {transport}; graphs run on "
                         f"{', '.join(SOCKET + BASED)}")


def topic_address(transport: str, point_address: str, base: str) -> str:
    """``point_address`` (the transport's address form) with its base name replaced."""
    if transport == "iceoryx2":
        return base
    if transport in ("cyclonedds", "fastdds", "rustdds"):
        domain, sep, _ = point_address.rpartition("/")
        return f"{domain}/{base}" if sep else base
    if transport == "mqtt":
        return f"{point_address.split('/', 1)[0]}/{base}"
    if transport == "ros1":
        return f"{point_address.split('#', 1)[0]}#{base}"
    raise UsageError(f"--graph: no topic address for --transport {transport}")


FIRST_PORT = 20000
"""on emulated hosts each subscription's UDP port (each host has its own ports)"""


def addresses(graph: Graph, transport: str, point_address: str | None, workdir: Path,
              tag: int, place: "Place | None" = None) -> Addresses:
    """Every subscription's and every topic's address(es) for ``transport``; on emulated hosts
    (``place``) a subscription listens on its node's host address."""
    supported(transport)
    if transport == "uds":
        for topic in graph.topics():
            if len(graph.publishers_of(topic)) > 1:
                raise UsageError(f"--graph {graph.name} --transport uds: topic '{topic}' has "
                                 f"{len(graph.publishers_of(topic))} publishers "
                                 f"({', '.join(graph.publishers_of(topic))}); a Unix socket "
                                 "subscription takes one connection: use udp or a middleware")
    ids = {topic: i for i, topic in enumerate(graph.topics())}
    listen: dict[tuple[str, str], str] = {}
    publish: dict[str, list[str]] = {t: [] for t in ids}
    with contextlib.ExitStack() as held:  # every port picked stays bound until all are picked
        _assign(graph, transport, point_address, workdir, tag, place, ids, listen, publish,
                held)
    if transport in BASED:  # a topic nobody subscribes to is published nowhere (counted only)
        subscribed = {s.topic for n in graph.nodes for s in n.subscribers}
        for topic, i in ids.items():
            publish[topic] = [topic_address(transport, point_address or "",
                                            f"g{tag & 0xFFFFFF:06x}t{i}")] \
                if topic in subscribed else []
    return Addresses(listen, publish)


def _assign(graph: Graph, transport: str, point_address: str | None, workdir: Path, tag: int,
            place: "Place | None", ids: dict[str, int], listen: dict[tuple[str, str], str],
            publish: dict[str, list[str]], held: contextlib.ExitStack) -> None:
    taken: list[int] = []
    for node in graph.nodes:
        for sub in node.subscribers:
            if transport == "udp" and place is not None:
                address = f"{place.address_of(node.name)}:{FIRST_PORT + len(listen)}"
                publish[sub.topic].append(address)
            elif transport == "udp":
                address = f"127.0.0.1:{_free_udp_port(held, taken)}"
                publish[sub.topic].append(address)
            elif transport == "uds":
                address = str(workdir / f"s{ids[sub.topic]}.{node.name.replace('/', '_')}")
                publish[sub.topic].append(address)
            else:
                address = topic_address(transport, point_address or "",
                                        f"g{tag & 0xFFFFFF:06x}t{ids[sub.topic]}")
            listen[(node.name, sub.topic)] = address


def node_specs(graph: Graph, where: Addresses, warmup_ns: int, duration_ns: int,
               linger_ns: int) -> list[dict[str, Any]]:
    """Each node's spec (the JSON its agent reads)."""
    ids = {topic: i for i, topic in enumerate(graph.topics())}
    count = {t: sum(1 for n in graph.nodes for s in n.subscribers if s.topic == t) for t in ids}
    out = []
    for index, node in enumerate(graph.nodes):
        publishers = [{**_outlet(p.topic, ids, where, p.payload_bytes, p.qos, count[p.topic]),
                       "period_ns": p.period_ns,
                       "phase_ns": phase_ns(node.name, p.topic, p.period_ns, graph.phase)}
                      for p in node.publishers]
        subscriptions = []
        for s in node.subscribers:
            period = graph.period_ns(s.topic) or 0
            subscriptions.append({
                "topic": s.topic, "id": ids[s.topic], "address": where.listen[(node.name,
                                                                               s.topic)],
                "busy_loop_ns": s.busy_loop_ns, "period_ns": period,
                "late_ns": graph.lateness.late_limit_ns(period),
                "too_late_ns": graph.lateness.too_late_limit_ns(period),
                "qos": _qos(s.qos),
                "publish": _outlet(s.publish, ids, where, s.publish_bytes, Qos(),
                                   count[s.publish]) if s.publish else None})
        out.append({"name": node.name, "index": index, "executor": node.executor,
                    "warmup_ns": warmup_ns, "duration_ns": duration_ns, "linger_ns": linger_ns,
                    "publishers": publishers, "subscriptions": subscriptions})
    return out


def phase_ns(node: str, topic: str, period_ns: int, phase: str) -> int:
    """When a publisher's first message is due after the start: 0 for every publisher with
    ``phase: aligned``; else spread over its period by a hash of node and topic (the same in
    every run, so runs compare), as independent timers in real nodes are."""
    if phase == "aligned":
        return 0
    return zlib.crc32(f"{node}\0{topic}".encode()) % period_ns


def linger_ns(graph: Graph) -> int:
    """How long subscriptions keep receiving after the publishers stop: twice the longest
    period (a chain's stage answers within it), at least 0.5 s, at most 5 s."""
    longest = max(((graph.period_ns(t) or 0) for t in graph.topics()), default=0)
    return int(min(max(2 * longest, 500_000_000), 5_000_000_000))


def _outlet(topic: str, ids: dict[str, int], where: Addresses, payload: int | None,
            qos: Qos, subscribers: int) -> dict[str, Any]:
    return {"topic": topic, "id": ids[topic], "payload_bytes": payload,
            "addresses": where.publish[topic], "qos": _qos(qos), "subscribers": subscribers}


def _qos(qos: Qos) -> dict[str, str]:
    return {k: v for k, v in (("reliability", qos.reliability), ("history", qos.history),
                              ("durability", qos.durability)) if v is not None}


LISTEN_PORTS = (10000, 32000)
"""where loopback subscriptions listen: below Linux's ephemeral range (32768-60999), from which
the publishers' own sockets take their ports as the nodes start"""


def _free_udp_port(held: contextlib.ExitStack, taken: list[int]) -> int:
    """A UDP port outside the ephemeral range, free on loopback now; its socket stays bound (in
    ``held``) so the next pick is another port; ``taken``: this graph's picks so far."""
    low, high = LISTEN_PORTS
    port = taken[-1] + 1 if taken else low + int.from_bytes(os.urandom(2), "big") % 10000
    for candidate in range(port, high):
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            probe.bind(("127.0.0.1", candidate))
        except OSError:
            probe.close()
            continue
        held.enter_context(probe)
        taken.append(candidate)
        return candidate
    raise UsageError(f"--graph: no free UDP port left in {low}..{high} for the subscriptions")
