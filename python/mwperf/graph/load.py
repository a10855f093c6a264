"""Saturating publishers (``rate: max``): a reliable one's flow control.

A saturating publisher sends each message as soon as the middleware accepted the one before; a
reliable QoS is what holds it back. A keep-last history does not: DDS overwrites the oldest
unacknowledged sample (Cyclone DDS lost half of a 1 MiB stream so on loopback), so the load
would be measured as loss. As in throughput mode (issue 26), a saturating topic's publishers and
subscribers then keep all (``history: keep-all``, the writer blocks while its readers have not
taken what it sent) unless the entity or the run says otherwise: the entity's own ``qos:
{history: ...}``, ``--history``, best-effort (entity or ``--reliability``), or a transport
without keep-all (zenoh, iceoryx2: its reliable keep-last is what there is)."""

from dataclasses import replace

from ..config import PointConfig
from .model import Graph, Qos

KEEP_ALL = "keep-all"


def flow_control(graph: Graph, cfg: PointConfig, supported: dict[str, list[str]]) -> Graph:
    """``graph`` with its saturating topics' entities keeping all (the module doc) where they
    would otherwise keep the run's default history."""
    loads = {p.topic for n in graph.nodes for p in n.publishers if p.saturating}
    if not loads or KEEP_ALL not in (supported.get("history") or []) \
            or "history" in cfg.qos_given:
        return graph

    def held(qos: Qos) -> Qos:
        reliability = qos.reliability or (cfg.reliability if "reliability" in cfg.qos_given
                                          else None)
        if qos.history is not None or reliability == "best-effort":
            return qos
        return replace(qos, history=KEEP_ALL)

    nodes = tuple(replace(
        n, publishers=tuple(replace(p, qos=held(p.qos)) if p.saturating else p
                            for p in n.publishers),
        subscribers=tuple(replace(s, qos=held(s.qos)) if s.topic in loads else s
                          for s in n.subscribers))
        for n in graph.nodes)
    return replace(graph, nodes=nodes)
