"""A bridge in a graph (``--graph G --bridge NAME``, issue 38 step 24): which half each node
meets, checked before anything starts, and the addresses each side's nodes get.

A bridged graph runs on the bridged point's hosts (bridges/topology.py: a, ga, gb, b with
``--link``; this machine without): a node whose ``host:`` is ``b`` or ``gb`` is on the server
side and meets bridge B, any other node (``a``, ``ga``, or none) the sender side and bridge A,
as a robot's nodes meet their gateway and a cloud's nodes theirs. A topic published on one side
and subscribed on the other crosses the bridge; the result's ``bridge`` section lists those
edges (``crossing``) and holds them to the offered rate. ``--bridge direct`` runs the same graph
over the same hosts with no bridge, every node on the transport's own daemon."""

from collections.abc import Callable
from typing import Any

from ..errors import UsageError
from .model import Graph

SERVER_SIDE = ("b", "gb")
"""hosts whose nodes meet bridge B"""
SIDES = ("a", "ga", *SERVER_SIDE)
"""the hosts a bridged graph's nodes may name (bridges/topology.py)"""


def sides(graph: Graph) -> dict[str, str]:
    """node -> ``a`` (meets bridge A) or ``b`` (meets bridge B)."""
    return {n.name: "b" if n.host in SERVER_SIDE else "a" for n in graph.nodes}


def crossing(graph: Graph) -> list[tuple[str, str, str]]:
    """(topic, publishing node, subscribing node) of every edge whose ends are on different
    sides: what the bridge carries."""
    side = sides(graph)
    return [(s.topic, pub, node.name) for node in graph.nodes for s in node.subscribers
            for pub in graph.publishers_of(s.topic) if side[pub] != side[node.name]]


def check(graph: Graph, bridge: str, graphs_ok: bool) -> None:
    """A usage error naming what a bridged graph cannot be: a bridge that does not run on
    graphs yet (``graphs_ok``), a node on a host the bridged hosts do not have, services or
    users' programs (their addresses are one daemon's), or no edge crossing the bridge."""
    where = f"--graph {graph.name} --bridge {bridge}"
    if not graphs_ok:
        raise UsageError(f"{where}: not yet on graphs (its two sides run different "
                         "transports or settings, which a graph's nodes do not have yet); "
                         "graphs take --bridge mqtt-bridge or direct")
    for node in graph.nodes:
        if node.host is not None and node.host not in SIDES:
            raise UsageError(f"{where}: node '{node.name}' is on host '{node.host}'; a bridged "
                             f"graph's nodes are on {', '.join(SIDES)} (b and gb meet bridge "
                             "B, the others bridge A: 'host: b' in the graph file)")
    if graph.services():
        raise UsageError(f"{where}: not with services yet ({', '.join(graph.services()[:3])}): "
                         "a call's server and clients would meet on different brokers")
    commands = [n.name for n in graph.nodes if n.command]
    if commands:
        raise UsageError(f"{where}: not with command nodes ({', '.join(commands[:3])}): a "
                         "user's program is given one daemon's address")
    if not crossing(graph):
        raise UsageError(f"{where}: no topic crosses the bridge: every node is on the sender "
                         "side; put the subscribers of the topics to bridge on the server side "
                         "('host: b' in the graph file)")


def sided(make: Callable[[str], Any], listen_a: str, listen_b: str, side: dict[str, str]
          ) -> Any:
    """The graph's addresses (plan.Addresses) with each node meeting its side's half:
    ``make(point_address)`` computes them for one side's address; the server side's nodes get
    their subscriptions' and publishers' addresses from ``listen_b``."""
    a, b = make(listen_a), make(listen_b)
    listen = {key: (b.listen if side[key[0]] == "b" else a.listen)[key] for key in a.listen}
    publish_at = dict(a.publish_at)
    for node, where in side.items():
        if where == "b":
            publish_at.update({(node, topic): list(b.publish[topic]) for topic in b.publish})
    return type(a)(listen, a.publish, publish_at, a.services)
