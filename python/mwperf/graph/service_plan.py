"""A graph's services made runnable: each service's address (its server's) and each node's
``servers``/``clients`` spec entries (docs/agent-contract.md "node").

A service is addressed as a topic is (plan.py): on middleware (``based``) the point's address
with a base of its own (``g<tag>s<id>``: a run's services never meet another run's); on plain
sockets and zenoh peers (``socket``) the server listens on an address of its own (a free UDP or
TCP port, a socket file; zenoh ``tcp/<host>:<port>#g<tag>s<id>``) and its clients connect there.
"""

import socket
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .model import Graph, Node
from .services import reply_bytes

if TYPE_CHECKING:
    from ..place import Place

SERVICE_PORTS_FROM = 1000
"""on emulated hosts a server's port is FIRST_PORT + this + the service's number (the
subscriptions take FIRST_PORT + 0..)"""


def service_base(tag: int, graph: Graph, service: str) -> str:
    return f"g{tag & 0xFFFFFF:06x}s{graph.services().index(service)}"


def service_addresses(graph: Graph, transport: str, how: str, point_address: str | None,
                      workdir: Path, tag: int, place: "Place | None",
                      pick: Callable[[int], int], first_port: int,
                      topic_address: Callable[[str, str, str], str]) -> dict[str, str]:
    """service -> its server's address (``how``: plan.way's; ``pick(kind)``: a free loopback
    port of that socket kind, kept bound until every address is picked; ``topic_address``:
    plan.py's, a point address with its base replaced)."""
    out: dict[str, str] = {}
    for i, service in enumerate(graph.services()):
        server = graph.server_of(service)
        if server is None:
            continue
        base = service_base(tag, graph, service)
        if how == "based":
            out[service] = topic_address(transport, point_address or "", base)
            continue
        if transport == "uds":
            out[service] = str(workdir / f"v{i}.{server.replace('/', '_')}")
            continue
        if place is not None:
            host, port = place.address_of(server), first_port + SERVICE_PORTS_FROM + i
        else:
            host = "127.0.0.1"
            port = pick(socket.SOCK_DGRAM if transport == "udp" else socket.SOCK_STREAM)
        out[service] = f"tcp/{host}:{port}#{base}" if transport == "zenoh" else f"{host}:{port}"
    return out


def service_specs(graph: Graph, node: Node, services: dict[str, str], phase: str
                  ) -> dict[str, list[dict[str, Any]]]:
    """The node spec's ``servers`` and ``clients`` of ``node`` (none: empty)."""
    ids = {s: i for i, s in enumerate(graph.services())}
    out: dict[str, list[dict[str, Any]]] = {}
    if node.servers:
        out["servers"] = [{"service": s.service, "id": ids[s.service],
                           "address": services[s.service], "reply_bytes": s.reply_bytes,
                           "work_ns": s.work_ns} for s in node.servers]
    if node.clients:
        out["clients"] = [{"service": c.service, "id": ids[c.service],
                           "address": services[c.service], "period_ns": c.period_ns,
                           "phase_ns": _phase_ns(node.name, c.service, c.period_ns, phase),
                           "request_bytes": c.request_bytes,
                           "reply_bytes": reply_bytes(graph, c), "in_flight": c.in_flight,
                           "timeout_ns": c.timeout_ns} for c in node.clients]
    return out


def _phase_ns(node: str, service: str, period_ns: int, phase: str) -> int:
    """When a client's first call is due after the start, as a publisher's (plan.phase_ns),
    hashed on the service with a prefix of its own."""
    if phase == "aligned":
        return 0
    return zlib.crc32(f"{node}\0service\0{service}".encode()) % period_ns
