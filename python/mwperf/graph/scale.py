"""A graph scaled for a scaling study: every node ``copies`` times (as a node's own ``copies:
N``, on the same topics) and every publisher's rate multiplied (``rate_scale``). The scenario
keys ``copies`` and ``rate_scale`` (and the flags ``--copies``, ``--rate-scale``) vary them in
a sweep; the graph file stays as written."""

from dataclasses import replace

from ..errors import UsageError
from .model import Graph, Publisher

MAX_COPIES = 100
MAX_NODES = 1000
"""a scaled graph's nodes at most (one agent process each)"""
MIN_PERIOD_NS = 10_000
"""a scaled publisher's shortest period (100 kHz), as for a graph file's rates"""


def parse_copies(text: str | None) -> int:
    """``--copies``: a whole number from 1 to MAX_COPIES (1 when not given)."""
    if text is None:
        return 1
    value = str(text).strip()
    if not value.isdigit() or not 1 <= int(value) <= MAX_COPIES:
        raise UsageError(f"--copies: a whole number from 1 to {MAX_COPIES} (every node of the "
                         f"graph that many times), got '{value}'")
    return int(value)


def parse_rate_scale(text: str | None) -> float:
    """``--rate-scale``: a positive factor (1 when not given, or when it names topics:
    ``parse_topic_scales``)."""
    if text is None or "=" in str(text):
        return 1.0
    return _factor(str(text), text)


def parse_topic_scales(text: str | None) -> tuple[tuple[str, float], ...]:
    """``--rate-scale TOPIC=FACTOR[,TOPIC=FACTOR]``: only those topics' publishers scaled (a
    graph's input edge: ``--peak-search --peak-topic``); () for a bare factor."""
    if text is None or "=" not in str(text):
        return ()
    out = []
    for item in str(text).split(","):
        topic, _, value = item.strip().rpartition("=")
        if not topic.strip():
            raise UsageError(f"--rate-scale: '{item.strip()}' is not TOPIC=FACTOR (or give one "
                             "factor for every publisher)")
        out.append((topic.strip(), _factor(value, text)))
    return tuple(out)


def _factor(value: str, text: object) -> float:
    try:
        factor = float(value.strip().removesuffix("x"))
    except ValueError:
        factor = float("nan")
    if not factor > 0 or factor == float("inf"):
        raise UsageError(f"--rate-scale: a positive factor such as 0.5 or 2 (every publisher's "
                         f"rate multiplied by it; TOPIC=FACTOR: that topic's), got '{text}'")
    return factor


def scale(graph: Graph, copies: int = 1, rate_scale: float = 1.0,
          topic_scales: tuple[tuple[str, float], ...] = ()) -> Graph:
    """``graph`` with every node ``copies`` times (``name_c1``..``name_cN``) and every timer's
    period divided by ``rate_scale`` (a saturating publisher stays as fast as accepted), the
    publishers of each topic of ``topic_scales`` by its own factor; the graph itself when
    nothing changes."""
    if copies == 1 and rate_scale == 1.0 and not topic_scales:
        return graph
    nodes = graph.nodes
    if topic_scales:
        topics = {p.topic for n in nodes for p in n.publishers}
        for topic, _ in topic_scales:
            if topic not in topics:
                raise UsageError(f"--rate-scale {topic}=...: graph '{graph.name}' has no "
                                 f"publisher of '{topic}'; its published topics: "
                                 f"{', '.join(sorted(topics))}")
        factors = dict(topic_scales)
        nodes = tuple(replace(n, publishers=tuple(
            p if p.saturating or p.topic not in factors else
            _scaled(graph, n.name, p, factors[p.topic])
            for p in n.publishers)) for n in nodes)
    if rate_scale != 1.0:
        nodes = tuple(replace(n, publishers=tuple(
            p if p.saturating else
            _scaled(graph, n.name, p, rate_scale)
            for p in n.publishers), clients=tuple(
            replace(c, period_ns=max(1, round(c.period_ns / rate_scale))) for c in n.clients))
            for n in nodes)
    if copies > 1:
        if len(nodes) * copies > MAX_NODES:
            raise UsageError(f"--copies {copies}: graph '{graph.name}' would have "
                             f"{len(nodes) * copies} nodes, more than {MAX_NODES} (one agent "
                             "process each)")
        # each copy's nodes share a process of the copy's own, as the original's do
        nodes = tuple(replace(n, name=f"{n.name}_c{i}", copy_of=n.copy_of or n.name,
                              process=n.process and f"{n.process}_c{i}",
                              servers=tuple(replace(s, service=f"{s.service}_c{i}")
                                            for s in n.servers),
                              clients=tuple(replace(c, service=f"{c.service}_c{i}")
                                            for c in n.clients))
                      for n in nodes for i in range(1, copies + 1))
    label = ([f"x{copies} nodes"] * (copies > 1) + [f"x{rate_scale:g} rate"] * (rate_scale != 1.0)
             + [f"{topic} x{factor:g}" for topic, factor in topic_scales])
    return replace(graph, name=f"{graph.name} ({', '.join(label)})", nodes=nodes)


def _scaled(graph: Graph, node: str, p: Publisher, factor: float) -> Publisher:
    """A timer publisher ``factor`` times as fast: its period, and a replayed recording's
    times (``replay:``) with it."""
    return replace(p, period_ns=_period(graph, node, p.topic, p.period_ns, factor),
                   offsets_ns=tuple(round(o / factor) for o in p.offsets_ns))


def _period(graph: Graph, node: str, topic: str, period_ns: int, factor: float) -> int:
    period = round(period_ns / factor)
    if period < MIN_PERIOD_NS:
        raise UsageError(f"--rate-scale {factor:g}: graph '{graph.name}', node '{node}', topic "
                         f"'{topic}' would publish every {period} ns, faster than 100 kHz "
                         f"(every {MIN_PERIOD_NS // 1000} us); use a smaller factor")
    return period
