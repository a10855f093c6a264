"""A graph made runnable: each topic's number and address(es) for the transport, and each
node's spec for its agent (``mwperf-agent node --node-spec``; docs/agent-contract.md "node").

Addresses, in one of three ways (``way``):
- ``based``: middleware carries a topic by name, so a topic is the point's address with a base
  of its own (``g<tag>t<id>``: a run's topics never meet another run's); zenoh in client mode
  too (every session a client of the point's router, the topic a key expression).
- ``socket``: plain sockets carry it to addresses, so each subscription listens on one of its
  own (a free UDP or TCP port, a socket file) and a topic's publishers send (udp) or connect
  (tcp, uds) to every subscription of it; zenoh in peer mode too (each subscription's session
  listens, each publisher's connects to every subscription of its topic, the key expression
  the topic's base: peers linked by configured endpoints, multicast scouting off).
- ``served``: foxglove: each publishing node's server carries its topics (what a process
  using the Foxglove SDK does: it serves its channels); its publishers publish there and a
  subscription subscribes on the servers of every node publishing its topic
  (``<host>:<port>,<host>:<port>/<base>``).
"""

import contextlib
import os
import socket
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from .commands import carried, is_command
from .model import Graph, Qos
from .service_plan import service_addresses, service_specs

if TYPE_CHECKING:
    from ..place import Place

SOCKET = ("udp", "uds", "tcp")
BASED = ("iceoryx2", "cyclonedds", "fastdds", "rustdds", "mqtt", "ros1", "ros2")
"""transports whose address ends in a base name a graph replaces per topic"""
SERVED = ("foxglove",)
"""transports whose publishing nodes serve their topics (a server per node)"""
GRAPH_TRANSPORTS = SOCKET + ("zenoh",) + BASED + SERVED


@dataclass(frozen=True)
class Addresses:
    """Where each subscription listens and where each topic is published to."""

    listen: dict[tuple[str, str], str]
    """(node, topic) -> the subscription's address"""
    publish: dict[str, list[str]]
    """topic -> every address its publishers send to"""
    publish_at: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    """(node, topic) -> where that node publishes it, when it is not the topic's (served)"""
    services: dict[str, str] = field(default_factory=dict)
    """service -> its server's address (service_plan.py)"""

    def outlet(self, node: str, topic: str) -> list[str]:
        """Where ``node``'s publisher (or stage) of ``topic`` sends."""
        return self.publish_at.get((node, topic), self.publish[topic])


def supported(transport: str) -> None:
    if transport not in GRAPH_TRANSPORTS:
        raise UsageError(f"--graph: not yet with --transport {transport}; graphs run on "
                         f"{', '.join(GRAPH_TRANSPORTS)}")


def way(transport: str, mode: str | None = None) -> str:
    """How a graph carries topics on ``transport`` (``mode``: its ``--opt mode``): 'socket',
    'based' or 'served' (the module doc)."""
    supported(transport)
    if transport in SOCKET or (transport == "zenoh" and mode != "client"):
        return "socket"
    return "served" if transport in SERVED else "based"


def serving_nodes(graph: Graph) -> list[str]:
    """The nodes that need a server on a served transport: those publishing (by timer or as a
    stage) a topic someone subscribes to."""
    subscribed = {s.topic for n in graph.nodes for s in n.subscribers}
    return [n.name for n in graph.nodes
            if any(p.topic in subscribed for p in n.publishers)
            or any(s.publish in subscribed for s in n.subscribers if s.publish)]


def topic_address(transport: str, point_address: str, base: str) -> str:
    """``point_address`` (the transport's address form) with its base name replaced."""
    if transport == "iceoryx2":
        return base
    if transport in ("cyclonedds", "fastdds", "rustdds", "ros2"):
        domain, sep, _ = point_address.rpartition("/")
        return f"{domain}/{base}" if sep else base
    if transport == "mqtt":
        return f"{point_address.split('/', 1)[0]}/{base}"
    if transport == "ros1":
        return f"{point_address.split('#', 1)[0]}#{base}"
    if transport == "zenoh":  # client mode: the router's endpoint
        return f"{point_address.split('#', 1)[0]}#{base}"
    raise UsageError(f"--graph: no topic address for --transport {transport}")


FIRST_PORT = 20000
"""on emulated hosts each subscription's port (each host has its own ports)"""


def addresses(graph: Graph, transport: str, point_address: str | None, workdir: Path,
              tag: int, place: "Place | None" = None, mode: str | None = None,
              servers: dict[str, str] | None = None, link: str = "tcp") -> Addresses:
    """Every subscription's and every topic's address(es) for ``transport`` (``mode``: its
    ``--opt mode``); on emulated hosts (``place``) a subscription listens on its node's host
    address; ``servers``: each serving node's server (``host:port``) on a served transport;
    ``link``: zenoh's peer links (``tls`` under ``--secure tls|mtls``, or ``quic``:
    security/modes.zenoh_link)."""
    how = way(transport, mode)
    ids = {topic: i for i, topic in enumerate(graph.topics())}
    listen: dict[tuple[str, str], str] = {}
    publish: dict[str, list[str]] = {t: [] for t in ids}
    subscribed = {s.topic for n in graph.nodes for s in n.subscribers}

    def base(topic: str) -> str:
        return f"g{tag & 0xFFFFFF:06x}t{ids[topic]}"

    if how == "served":
        return _served(graph, transport, servers or {}, base, subscribed)
    with contextlib.ExitStack() as held:  # every port picked stays bound until all are picked
        taken = _assign(graph, transport, workdir, place, ids, listen, publish, held, base,
                        point_address if how == "based" else None, link)
        services = service_addresses(
            graph, transport, how, point_address, workdir, tag, place,
            lambda kind: _free_port(held, taken, kind), FIRST_PORT, topic_address)
    if how == "based":  # a topic nobody subscribes to is published nowhere (counted only)
        for topic in ids:
            publish[topic] = [topic_address(transport, point_address or "", base(topic))] \
                if topic in subscribed else []
    return Addresses(listen, publish, services=services)


def _served(graph: Graph, transport: str, servers: dict[str, str],
            base: "Callable[[str], str]", subscribed: set[str]) -> Addresses:
    """A served transport's addresses: a node publishes at its own server, a subscription
    subscribes on the servers of every node publishing its topic."""
    missing = [n for n in serving_nodes(graph) if n not in servers]
    if missing:
        raise UsageError(f"--graph {graph.name} --transport {transport}: no server for node(s) "
                         f"{', '.join(missing)}")
    listen = {(node.name, sub.topic): ",".join(servers[p] for p in graph.publishers_of(sub.topic))
              + f"/{base(sub.topic)}"
              for node in graph.nodes for sub in node.subscribers}
    publish_at = {(node, topic): [f"{servers[node]}/{base(topic)}"] if topic in subscribed
                  else []
                  for topic in graph.topics() for node in graph.publishers_of(topic)}
    return Addresses(listen, {t: [] for t in graph.topics()}, publish_at)


def _assign(graph: Graph, transport: str, workdir: Path, place: "Place | None",
            ids: dict[str, int], listen: dict[tuple[str, str], str],
            publish: dict[str, list[str]], held: contextlib.ExitStack,
            base: "Callable[[str], str]", point_address: str | None, link: str = "tcp"
            ) -> list[int]:
    taken: list[int] = []
    for node in graph.nodes:
        for sub in node.subscribers:
            if point_address is not None:  # based: the topic's one address
                listen[(node.name, sub.topic)] = topic_address(transport, point_address,
                                                               base(sub.topic))
                continue
            if transport == "uds":
                address = str(workdir / f"s{ids[sub.topic]}.{node.name.replace('/', '_')}")
            else:
                if place is not None:
                    host, port = place.address_of(node.name), FIRST_PORT + len(listen)
                else:
                    host = "127.0.0.1"
                    datagrams = transport == "udp" or (transport == "zenoh" and link == "quic")
                    port = _free_port(held, taken, socket.SOCK_DGRAM if datagrams
                                      else socket.SOCK_STREAM)
                address = f"{host}:{port}"
                if transport == "zenoh":
                    address = f"{link}/{address}#{base(sub.topic)}"
            publish[sub.topic].append(address)
            listen[(node.name, sub.topic)] = address
    return taken


SAMPLES_DIR = "samples"
"""``--samples``: the folder (in the run's work folder and beside its result) of every edge's
raw samples, one CSV per edge (the node's samples columns, as ``sub --samples`` writes them)"""


def samples_base(folder: Path, node: str, topic: str) -> str:
    """The samples path a subscription of ``node`` on ``topic`` is given; the node writes each
    edge's file there with ``.from<publishing node's index>`` before the extension (a carried
    topic: ``.from<index>.topic<id>``: spec.rs)."""
    def slug(name: str) -> str:
        return name.strip("/").replace("/", "_") or "_"
    return str(folder / f"{slug(node)}.{slug(topic)}.csv")


def node_specs(graph: Graph, where: Addresses, warmup_ns: int, duration_ns: int,
               linger_ns: int, samples: Path | None = None) -> list[dict[str, Any]]:
    """Each node's spec (the JSON its agent reads); ``samples``: the folder each subscription
    writes its edges' raw samples into (``--samples``; none without)."""
    ids = {topic: i for i, topic in enumerate(graph.topics())}
    count = {t: sum(1 for n in graph.nodes for s in n.subscribers if s.topic == t) for t in ids}
    out = []
    for index, node in enumerate(graph.nodes):
        if is_command(node):  # a program of the user's, no agent (command_run.py)
            continue
        publishers = [{**_outlet(node.name, p.topic, ids, where, p.payload_bytes, p.qos,
                                 count[p.topic]),
                       **({"payload_sizes": list(p.payload_sizes)} if p.payload_sizes else {}),
                       **({"offsets_ns": list(p.offsets_ns)} if p.offsets_ns else {}),
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
                "publish": _outlet(node.name, s.publish, ids, where, s.publish_bytes, Qos(),
                                   count[s.publish]) if s.publish else None,
                **({"carried": through} if (through := carried(graph, s.topic, ids)) else {}),
                **({"samples": samples_base(samples, node.name, s.topic)}
                   if samples is not None else {})})
        out.append({"name": node.name, "index": index, "executor": node.executor,
                    "warmup_ns": warmup_ns, "duration_ns": duration_ns, "linger_ns": linger_ns,
                    "publishers": publishers, "subscriptions": subscriptions,
                    **service_specs(graph, node, where.services, graph.phase)})
    return out


def phase_ns(node: str, topic: str, period_ns: int, phase: str) -> int:
    """When a publisher's first message is due after the start: 0 for every publisher with
    ``phase: aligned`` and for a saturating one (period 0: from the start, back to back); else
    spread over its period by a hash of node and topic (the same in every run, so runs
    compare), as independent timers in real nodes are."""
    if phase == "aligned" or period_ns == 0:
        return 0
    return zlib.crc32(f"{node}\0{topic}".encode()) % period_ns


def linger_ns(graph: Graph) -> int:
    """How long subscriptions keep receiving after the publishers stop: twice the longest
    period (a chain's stage answers within it; a client's calls too), at least 0.5 s, at most
    5 s."""
    longest = max([graph.period_ns(t) or 0 for t in graph.topics()]
                  + [c.period_ns for n in graph.nodes for c in n.clients], default=0)
    return int(min(max(2 * longest, 500_000_000), 5_000_000_000))


def _outlet(node: str, topic: str, ids: dict[str, int], where: Addresses,
            payload: int | None, qos: Qos, subscribers: int) -> dict[str, Any]:
    return {"topic": topic, "id": ids[topic], "payload_bytes": payload,
            "addresses": where.outlet(node, topic), "qos": _qos(qos),
            "subscribers": subscribers}


def _qos(qos: Qos) -> dict[str, str]:
    return {k: v for k, v in (("reliability", qos.reliability), ("history", qos.history),
                              ("durability", qos.durability)) if v is not None}


LISTEN_PORTS = (10000, 32000)
"""where loopback subscriptions listen: below Linux's ephemeral range (32768-60999), from which
the publishers' own sockets take their ports as the nodes start"""


def _free_port(held: contextlib.ExitStack, taken: list[int], kind: int) -> int:
    """A UDP or TCP (``kind``) port outside the ephemeral range, free on loopback now; its
    socket stays bound (in ``held``) so the next pick is another port; ``taken``: this graph's
    picks so far."""
    low, high = LISTEN_PORTS
    port = taken[-1] + 1 if taken else low + int.from_bytes(os.urandom(2), "big") % 10000
    for candidate in range(port, high):
        probe = socket.socket(socket.AF_INET, kind)
        try:
            probe.bind(("127.0.0.1", candidate))
        except OSError:
            probe.close()
            continue
        held.enter_context(probe)
        taken.append(candidate)
        return candidate
    what = "UDP" if kind == socket.SOCK_DGRAM else "TCP"
    raise UsageError(f"--graph: no free {what} port left in {low}..{high} for the subscriptions")
