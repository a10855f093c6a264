"""What makes a graph impossible to run, found before anything starts: a usage error naming
the node and the topic (exit 2)."""

from ..errors import UsageError
from ..wire import HEADER_BYTES
from .commands import check_graph as check_commands
from .model import Graph
from .services import check_services


def check_graph(graph: Graph) -> None:
    """The graph on its own: unique node names, every subscription published, one size per
    topic, one origin per topic, no cycle of chain stages, chains that follow stages."""
    where = f"graph '{graph.name}'"
    seen: set[str] = set()
    for node in graph.nodes:
        if node.name in seen:
            raise UsageError(f"{where}: node '{node.name}' is defined twice (with copies, "
                             "name_1..name_N are taken)")
        seen.add(node.name)
    files: dict[str, str] = {}
    for node in graph.nodes:
        key = node.name.replace("/", "_")
        if key in files:
            raise UsageError(f"{where}: nodes '{files[key]}' and '{node.name}' differ only in "
                             "'/' and '_'; rename one")
        files[key] = node.name
        outlets = [p.topic for p in node.publishers] + [s.publish for s in node.subscribers
                                                         if s.publish]
        twice = next((t for t in outlets if outlets.count(t) > 1), None)
        if twice is not None:
            raise UsageError(f"{where}: node '{node.name}' publishes '{twice}' twice (by two "
                             "timers or stages); one publisher per topic and node")
        inlets = [s.topic for s in node.subscribers]
        twice = next((t for t in inlets if inlets.count(t) > 1), None)
        if twice is not None:
            raise UsageError(f"{where}: node '{node.name}' subscribes to '{twice}' twice; one "
                             "subscription per topic and node (give it one busy loop)")
    for node in graph.nodes:
        for sub in node.subscribers:
            if not graph.publishers_of(sub.topic):
                raise UsageError(f"{where}: node '{node.name}' subscribes to '{sub.topic}', "
                                 "which no node publishes")
    for topic in graph.topics():
        _one_origin(graph, where, topic)
    _no_stage_cycle(graph, where)
    for chain in graph.chains:
        _chain_follows_stages(graph, where, chain.name, chain.topics)
    check_services(graph)
    check_commands(graph)


def check_hosts(graph: Graph, hosts: tuple[str, ...], flag: str) -> None:
    """Every node's host is one the run has (``flag`` names where the hosts come from)."""
    for node in graph.nodes:
        if node.host is not None and node.host not in hosts:
            allowed = ", ".join(hosts) if hosts else "none: give the hosts with --link, " \
                "--host or a scenario's hosts"
            raise UsageError(f"graph '{graph.name}': node '{node.name}' is on host "
                             f"'{node.host}', which {flag} does not have; hosts: {allowed}")


def check_sizes(graph: Graph, transport: str, max_bytes: int | None) -> None:
    """Every topic's messages fit the transport: ``max_bytes`` is its descriptor's largest
    payload after mwperf's header (the agent's limit included; None: not known here)."""
    if max_bytes is None:
        return
    for topic in graph.topics():
        size = graph.payload_bytes(topic) or 0
        if size > max_bytes:
            node = graph.publishers_of(topic)[0]
            raise UsageError(f"graph '{graph.name}': node '{node}' publishes '{topic}' with "
                             f"{size} B payloads; --transport {transport} carries at most "
                             f"{max_bytes} B after mwperf's {HEADER_BYTES}-byte header")


def _one_origin(graph: Graph, where: str, topic: str) -> None:
    timers = {(n.name, p.payload_bytes, p.period_ns) for n in graph.nodes for p in n.publishers
              if p.topic == topic}
    stages = [n.name for n in graph.nodes for s in n.subscribers if s.publish == topic]
    if timers and stages:
        raise UsageError(f"{where}: topic '{topic}' is published by a timer (node "
                         f"'{sorted(timers)[0][0]}') and by a chain stage (node '{stages[0]}'); "
                         "a topic has one kind of origin")
    kinds = {(size, period) for _, size, period in timers}
    if len(kinds) > 1:
        names = sorted(name for name, _, _ in timers)
        raise UsageError(f"{where}: topic '{topic}' is published with different sizes or "
                         f"periods (nodes {', '.join(names)}); one topic, one message kind")


def _no_stage_cycle(graph: Graph, where: str) -> None:
    """A chain stage publishes when it receives: stages in a circle would feed themselves."""
    downstream: dict[str, list[tuple[str, str]]] = {}
    for n in graph.nodes:
        for s in n.subscribers:
            if s.publish:
                downstream.setdefault(s.topic, []).append((s.publish, n.name))
    state: dict[str, int] = {}

    def visit(topic: str, path: list[str]) -> None:
        state[topic] = 1
        for nxt, node in downstream.get(topic, []):
            if state.get(nxt) == 1:
                loop = path[path.index(nxt):] + [nxt] if nxt in path else [topic, nxt]
                raise UsageError(f"{where}: chain stages form a cycle: {' -> '.join(loop)} "
                                 f"(node '{node}' publishes '{nxt}' when it receives "
                                 f"'{topic}'); break it with a timer publisher")
            if state.get(nxt) is None:
                visit(nxt, path + [nxt])
        state[topic] = 2

    for topic in sorted(downstream):
        if state.get(topic) is None:
            visit(topic, [topic])


def _chain_follows_stages(graph: Graph, where: str, name: str, topics: tuple[str, ...]) -> None:
    known = set(graph.topics())
    for topic in topics:
        if topic not in known:
            raise UsageError(f"{where}: chain '{name}' goes through topic '{topic}', which is "
                             "not in the graph")
    for here, there in zip(topics, topics[1:]):
        if not any(s.topic == here and s.publish == there for n in graph.nodes
                   for s in n.subscribers):
            raise UsageError(f"{where}: chain '{name}': no node subscribes to '{here}' and "
                             f"publishes '{there}' (a subscriber with publish: {there})")
    if not graph.publishers_of(topics[0]):
        raise UsageError(f"{where}: chain '{name}' starts at '{topics[0]}', which no node "
                         "publishes")


def check_qos(graph: Graph, transport: str, supported: dict[str, list[str]]) -> None:
    """Each publisher's and subscriber's QoS against what ``transport`` honours (its profile's
    ``qos``: per field the values it supports; none listed: QoS does not apply to it, as for
    one stream). The node would fail opening that endpoint after the others started."""
    for node in graph.nodes:
        entities = [("publishes", p.topic, p.qos) for p in node.publishers] + \
            [("subscribes to", s.topic, s.qos) for s in node.subscribers]
        for verb, topic, qos in entities:
            for key in ("reliability", "history", "durability"):
                value = getattr(qos, key)
                allowed = supported.get(key) or []
                if value is None or not allowed or value.split(":")[0] in allowed:
                    continue
                raise UsageError(f"--graph {graph.name} --transport {transport}: node "
                                 f"'{node.name}' {verb} '{topic}' with qos {key}: {value}; "
                                 f"{transport} supports {key} {', '.join(allowed)}: use one of "
                                 "those, or a transport that has it (mwperf transports)")
