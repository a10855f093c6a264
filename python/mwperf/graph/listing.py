"""``mwperf graphs``: the built-in graphs in one line each, or one graph in full (a file is
checked as it would be for a run)."""

import shlex
import textwrap
from typing import Any

from ..durations import format_ns
from ..sizes import format_bytes
from .builtin import builtin_names, load_graph
from .model import Graph


def summary(graph: Graph) -> dict[str, Any]:
    return {"name": graph.name, "nodes": len(graph.nodes), "topics": len(graph.topics()),
            "edges": len(graph.edges()), "chains": [c.name for c in graph.chains],
            "description": graph.description}


def listing() -> list[dict[str, Any]]:
    return [summary(load_graph(name)) for name in builtin_names()]


def render_listing(rows: list[dict[str, Any]]) -> str:
    width = max((len(r["name"]) for r in rows), default=0)
    lines = []
    for r in rows:
        counts = f"{r['nodes']} nodes, {r['topics']} topics, {r['edges']} edges" + (
            f", chains: {', '.join(r['chains'])}" if r["chains"] else "")
        lines.append(f"{r['name'].ljust(width)}  {counts}")
        if r["description"]:
            lines.append(f"{''.ljust(width)}  "
                         + textwrap.shorten(_first_sentence(r["description"]), 96 - width))
    return "\n".join(lines) + "\n"


def detail(graph: Graph) -> dict[str, Any]:
    """The whole graph: nodes, topics (period, size), edges and chains."""
    return {**summary(graph), "source": graph.source, "hosts": list(graph.hosts),
            "topics": [{"topic": t, "period_ns": graph.period_ns(t),
                        **({"saturating": True} if graph.saturating(t) else {}),
                        "payload_bytes": graph.payload_bytes(t),
                        "publishers": graph.publishers_of(t)} for t in graph.topics()],
            "nodes": [{"name": n.name, "host": n.host, "client": n.client,
                       "executor": n.executor, "group": n.group,
                       **({"process": n.process} if n.process else {}),
                       "publishes": [p.topic for p in n.publishers]
                       + [s.publish for s in n.subscribers if s.publish],
                       "subscribes": [s.topic for s in n.subscribers],
                       **({"command": shlex.join(n.command),
                           "remap": dict(n.remap)} if n.command else {})}
                      for n in graph.nodes],
            "edges": [{"topic": e.topic, "from": e.publisher, "to": e.subscriber}
                      for e in graph.edges()],
            "calls": [{"service": e.service, "client": e.client, "server": e.server}
                      for e in graph.call_edges()],
            "chain_topics": {c.name: list(c.topics) for c in graph.chains},
            "lateness": {"late_percent": graph.lateness.late_percent,
                         "late_ns": graph.lateness.late_ns,
                         "too_late_percent": graph.lateness.too_late_percent,
                         "too_late_ns": graph.lateness.too_late_ns}}


def render_detail(graph: Graph) -> str:
    out = [f"{graph.name} ({graph.source}): {len(graph.nodes)} nodes, {len(graph.topics())} "
           f"topics, {len(graph.edges())} edges"]
    if graph.description:
        out.append(graph.description)
    out.append("topics:")
    for t in graph.topics():
        period, size = graph.period_ns(t), graph.payload_bytes(t)
        rate = f"every {format_ns(period)}" if period else \
            "as fast as accepted (rate: max)" if graph.saturating(t) else "?"
        sizes = next((p.payload_sizes for n in graph.nodes for p in n.publishers
                      if p.topic == t and p.payload_sizes), ())
        shown = (f"{format_bytes(min(sizes))} to {format_bytes(max(sizes))} ({len(sizes)} "
                 "sizes cycled)" if sizes else format_bytes(size or 0))
        out.append(f"  {t}  {rate}, {shown}, from {', '.join(graph.publishers_of(t))}")
    out.append("nodes:")
    for n in graph.nodes:
        where = f" on {n.host}" if n.host else ""
        if n.client != "agent":  # who runs it (clients.py), and in which of its executors
            where += f" ({n.client}, executor {n.executor})"
        subs = ", ".join(s.topic + (f" -> {s.publish}" if s.publish else "")
                         for s in n.subscribers)
        pubs = ", ".join(p.topic for p in n.publishers)
        out.append(f"  {n.name}{where}: publishes {pubs or '-'}; subscribes {subs or '-'}"
                   + "".join(f"; serves {s.service}" + (f" ({format_ns(s.work_ns)} work)"
                                                        if s.work_ns else "")
                             for s in n.servers)
                   + "".join(f"; calls {c.service} every {format_ns(c.period_ns)} "
                             f"({format_bytes(c.request_bytes)})" for c in n.clients)
                   + (f"; command: {shlex.join(n.command)}" if n.command else "")
                   + "".join(f"; remap {own}:={topic}" for own, topic in n.remap))
    for c in graph.chains:
        out.append(f"chain {c.name}: {' -> '.join(c.topics)}"
                   + (f" (deadline {format_ns(c.deadline_ns)})" if c.deadline_ns else ""))
    return "\n".join(out) + "\n"


def _first_sentence(text: str) -> str:
    head = text.split(". ")[0].strip()
    return head if head.endswith(".") else head + "."
