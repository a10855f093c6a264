"""Parts of a graph, for interference: one topic or one chain alone (``--baseline``), or the
graph without some nodes (``--without``)."""

from collections.abc import Callable
from dataclasses import replace

from ..errors import UsageError
from .model import Graph, Node, Subscriber


def alone(graph: Graph, what: str) -> Graph:
    """``what``: a topic (its publishers and subscribers, only it) or ``chain:NAME`` (its
    origin's publishers, its stages and its last topic's subscribers, only its topics)."""
    if what.startswith("chain:"):
        name = what.removeprefix("chain:")
        chain = next((c for c in graph.chains if c.name == name), None)
        if chain is None:
            raise UsageError(f"--baseline {what}: graph '{graph.name}' has no chain '{name}'; "
                             f"chains: {', '.join(c.name for c in graph.chains) or 'none'}")
        topics = set(chain.topics)
        pairs = set(zip(chain.topics, chain.topics[1:]))
        last = chain.topics[-1]
        nodes = [_keep(n, topics, lambda s: (s.topic, s.publish) in pairs or s.topic == last)
                 for n in graph.nodes]
        kept = tuple(n for n in nodes if n is not None)
        return replace(graph, name=f"{graph.name} ({what} alone)", nodes=kept,
                       chains=(chain,))
    if what not in graph.topics():
        raise UsageError(f"--baseline {what}: not a topic of graph '{graph.name}' (nor "
                         f"chain:NAME); topics: {', '.join(graph.topics())}")
    if not any(p.topic == what for n in graph.nodes for p in n.publishers):
        raise UsageError(f"--baseline {what}: a chain stage publishes it; take its chain "
                         f"(chain:NAME), which carries it from its origin")
    nodes = [_keep(n, {what}, lambda s: True) for n in graph.nodes]
    return replace(graph, name=f"{graph.name} ({what} alone)",
                   nodes=tuple(n for n in nodes if n is not None), chains=())


def without(graph: Graph, names: tuple[str, ...]) -> Graph:
    """The graph without nodes ``names`` and whatever then has nothing to receive (a
    subscription to a topic nobody publishes any more; a node left with nothing)."""
    unknown = [n for n in names if n not in {node.name for node in graph.nodes}]
    if unknown:
        raise UsageError(f"--without {unknown[0]}: no such node in graph '{graph.name}'")
    nodes = [n for n in graph.nodes if n.name not in names]
    while True:
        published = {p.topic for n in nodes for p in n.publishers} | {
            s.publish for n in nodes for s in n.subscribers if s.publish}
        served = {s.service for n in nodes for s in n.servers}
        trimmed = []
        for n in nodes:
            subs = tuple(s for s in n.subscribers if s.topic in published)
            calls = tuple(c for c in n.clients if c.service in served)
            if n.publishers or subs or n.servers or calls:
                trimmed.append(replace(n, subscribers=subs, clients=calls))
        if trimmed == nodes:
            break
        nodes = trimmed
    if not any(n.subscribers or n.clients for n in nodes):
        raise UsageError(f"--without {', '.join(names)}: nothing of graph '{graph.name}' is left "
                         "to measure (no subscription has a publisher any more)")
    topics = {t for n in nodes for t in [p.topic for p in n.publishers]
              + [s.topic for s in n.subscribers] + [s.publish for s in n.subscribers if s.publish]}
    received = {s.topic for n in nodes for s in n.subscribers}
    chains = tuple(c for c in graph.chains if set(c.topics) <= topics and c.topics[-1] in received)
    return replace(graph, name=f"{graph.name} without {', '.join(names)}", nodes=tuple(nodes),
                   chains=chains)


def _keep(node: Node, topics: set[str], wanted: Callable[[Subscriber], bool]) -> Node | None:
    """``node`` with only its publishers of ``topics`` and its ``wanted`` subscriptions of them
    (a stage keeps publishing only into ``topics``)."""
    publishers = tuple(p for p in node.publishers if p.topic in topics)
    subscribers = tuple(
        s if s.publish in topics else replace(s, publish=None, publish_bytes=None)
        for s in node.subscribers if s.topic in topics and wanted(s))
    if not publishers and not subscribers:
        return None
    return replace(node, publishers=publishers, subscribers=subscribers, servers=(), clients=())
