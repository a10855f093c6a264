"""Where each message's time goes in a graph (``mwperf run --graph ... --layers``,
docs/graphs.md "Per-layer latency"): every node writes its rows (node_rows.py), and each edge
(a publisher node -> a subscriber node on a topic) gets the point's ``layers`` section over its
messages, each chain one over its messages followed from the origin's timer through every
stage to its end.

One hop's chain is the point's one-way chain (layers.oneway_chain): from the publisher's
intended time — a timer's due time, a chain stage's callback start (its work up to the write is
the hop's ``app_send``) — to the subscriber's callback start. So a timer's edge adds up to the
edge's ``age`` per message, a stage's edge to the stage's own time plus the edge's ``latency``,
and a chain (its hops end to end: each stage's callback start ends one hop and starts the next)
to the chain's end-to-end age, exactly; all on the graph's reference clock (node/clock.rs).
"""

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..agent import LAYERS_LIBRARY
from ..layers import Link, Moment, none, oneway_chain, section
from ..layers_unseen import byte_stream_notes, why_unseen
from .model import Graph
from .node_rows import NodeRows, RowsError, read_node_rows

FOLDER = "layers"
"""the nodes' rows, in the run's work folder"""


def rows_path(workdir: Path, file_name: str) -> Path:
    """Where node ``file_name`` (run.file_name) writes its rows."""
    return workdir / FOLDER / f"{file_name}.csv"


def attach(result: dict[str, Any], graph: Graph, specs: list[dict[str, Any]],
           reports: dict[str, dict[str, Any] | None], paths: dict[str, Path],
           missing: str | None, links: Link | None = None,
           hosts: dict[str, str] | None = None, transport: str = "") -> None:
    """Give ``result`` (result.merge's) its ``layers`` summary and each edge and chain its
    ``layers`` section; ``paths``: node -> its rows file; ``missing``: why the interposer
    could not be preloaded (then no section is split); ``links``: with --link, the emulator's
    stamps of each message (layers_link.py), ``hosts``: node -> its emulated host;
    ``transport``: what it is known to hide (layers_unseen.py)."""
    agents = [_agent(name, report) for name, report in reports.items() if report is not None]
    blind = [f"{a['name']}: {a['why']}" for a in agents if a["why"]]
    summary: dict[str, Any] = {
        "method": "ld_preload", "why_none": None,
        "agents": [{k: a[k] for k in ("name", "events", "dropped")} for a in agents],
        "notes": []}
    if missing is not None:
        summary.update(method="none", why_none=f"{LAYERS_LIBRARY} is not available: {missing}",
                       agents=[])
    elif blind:
        summary["notes"].append("the system calls of " + "; ".join(blind) + " were not seen; "
                                "their layers are merged where they meet")
    rows: dict[str, NodeRows] = {}
    for name, path in paths.items():
        if missing is not None or reports.get(name) is None or not path.is_file():
            continue
        try:
            rows[name] = read_node_rows(path)
        except (OSError, RowsError) as exc:
            summary["notes"].append(f"node {name}: its rows are unreadable: {exc}")
    ids = topic_ids(specs)
    index = {spec["name"]: spec["index"] for spec in specs}
    dropped = {a["name"]: a["dropped"] for a in agents}
    for edge in result["edges"]:
        sender, receiver = rows.get(edge["from"]), rows.get(edge["to"])
        if summary["why_none"] is not None or sender is None or receiver is None:
            edge["layers"] = none(summary["why_none"] or "a node wrote no rows (did it finish?)")
            continue
        topic, source = ids[edge["topic"]], index[edge["from"]]
        link = links if links and _crosses(graph, hosts or {}, edge) else {}
        chains = [oneway_chain(sender.sent[key], mine, link)
                  for key, mine in receiver.received.items()
                  if key[0] == topic and key[1] == source and key in sender.sent]
        received = list(receiver.received.values())
        edge["layers"] = section(
            "oneway", chains, why_unseen(list(sender.sent.values()), received, transport),
            [a for a in summary["agents"] if a["name"] in (edge["from"], edge["to"])],
            _notes(edge["from"] in _stages(graph, edge["topic"])) + byte_stream_notes(received),
            {"events_dropped": dropped.get(edge["from"], 0) + dropped.get(edge["to"], 0)})
    for chain in result["chains"]:
        if summary["why_none"] is not None:
            chain["layers"] = none(summary["why_none"])
            continue
        chain["layers"] = _chain_section(graph, chain["topics"], rows, ids, index,
                                         summary["agents"])
    result["layers"] = summary


def _crosses(graph: Graph, hosts: dict[str, str], edge: dict[str, Any]) -> bool:
    """Whether the link's stamps of ``edge``'s messages are its own: the messages cross the one
    link between two hosts (from one host to the other) and their topic has one publisher (the
    link log names a message by topic and seq, not by its publishing node)."""
    return (len(set(hosts.values())) == 2 and hosts.get(edge["from"]) != hosts.get(edge["to"])
            and len(graph.publishers_of(edge["topic"])) == 1)


def topic_ids(specs: list[dict[str, Any]]) -> dict[str, int]:
    """topic -> the id its messages carry (plan.node_specs)."""
    out: dict[str, int] = {}
    for spec in specs:
        for p in spec["publishers"]:
            out[p["topic"]] = p["id"]
        for s in spec["subscriptions"]:
            out[s["topic"]] = s["id"]
    return out


def _agent(name: str, report: dict[str, Any]) -> dict[str, Any]:
    seen = report.get("layers") or {}
    why = None
    if seen and not seen.get("interposer"):
        why = seen.get("why") or "not loaded"
    elif seen.get("error"):
        why = seen["error"]
    return {"name": name, "events": seen.get("events", 0), "dropped": seen.get("dropped", 0),
            "why": why}


def _stages(graph: Graph, topic: str) -> set[str]:
    """The nodes whose chain stage publishes ``topic``."""
    return {n.name for n in graph.nodes for s in n.subscribers if s.publish == topic}


def _notes(stage: bool) -> list[str]:
    notes = ["a message sent to several subscribers: its middleware send path ends at the "
             "first system call carrying it, whichever subscriber that call was for"]
    if stage:
        notes.insert(0, "a chain stage's hop starts at its callback: sender app -> middleware "
                        "is the stage's work and its own cost up to its write")
    return notes


def _chain_section(graph: Graph, topics: Iterable[str], rows: dict[str, NodeRows],
                   ids: dict[str, int], index: dict[str, int],
                   agents: list[dict[str, Any]]) -> dict[str, Any]:
    """A chain's section: each message that reached its end, followed back hop by hop to its
    origin's timer; ``per_topic`` is each hop."""
    topics = list(topics)
    by_index = {i: name for name, i in index.items()}
    id_of = [ids[t] for t in topics]
    ends = [name for name in sorted(rows) for n in graph.nodes if n.name == name
            and any(s.topic == topics[-1] for s in n.subscribers)]
    chains: list[list[Moment]] = []
    hops: dict[str, list[list[Moment]]] = {t: [] for t in topics}
    lost = 0
    for end in ends:
        for key, last in rows[end].received.items():
            if key[0] != id_of[-1]:
                continue
            followed = _follow(key, last, len(topics), rows, by_index, id_of)
            if followed is None:
                lost += 1
                continue
            moments: list[Moment] = []
            for topic, hop in zip(topics, followed):
                hop = [replace(m, direction=topic) for m in hop]
                hops[topic].append(hop)
                moments += hop if not moments else hop[1:]  # a stage's start = the hop's end
            chains.append(moments)
    return section("oneway", chains, {}, agents, [
        "each hop from its publisher's intended time (a stage: its callback start) to the next "
        "callback start; the layers add up over the hops to the chain's end-to-end age"],
        {"not_followed": lost}, hops)


def _follow(key: tuple[int, int, int], last: Any, depth: int, rows: dict[str, NodeRows],
            by_index: dict[int, str], id_of: list[int]) -> list[list[Moment]] | None:
    """The hops (origin first) of the message ``key`` received as ``last`` at the chain's end:
    each publisher's row, and for a stage the message it published on; None when a row on the
    way is missing (a node without rows, a message of another path)."""
    out: list[list[Moment]] = []
    received = last
    for hop in range(depth - 1, -1, -1):
        publisher = rows.get(by_index.get(key[1], ""))
        sent = publisher.sent.get(key) if publisher is not None else None
        if sent is None or key[0] != id_of[hop]:
            return None
        out.append(oneway_chain(sent, received, {}))
        cause = publisher.cause.get(key) if publisher is not None else None
        if hop == 0:
            return out[::-1] if cause is None else None
        if cause is None or publisher is None:
            return None
        received = publisher.received.get(cause)
        if received is None:
            return None
        key = cause
    return None
