"""Old results -> the v3 result (``schema_version: 3``, ``kind: result``): nodes, edges, chains,
calls. Pure: a document in, a new document out (the input is never changed); nothing reads files
or writes v3 yet.

A v2 (or v1) ``run-result`` is read by docs/architecture.md §2.3's table backwards: each agent
is a node (its report kept as it was), a round trip's figures are its chain's (``ping`` then
``pong``; the per-direction edges it never measured carry none), a one-way stream's are its
edge's (one per subscriber), a service's are its call edge's (one per client). Figures over
several topics or subscribers pooled by the v2 run stay as they were, in ``pools``: copied, not
re-pooled, so that ``stream.py`` gives back exactly what the old result said. Run-level
sections (link, wire, restarts, resilience, layers, resources, gates, ...) are kept whole.

A v1 ``graph-result`` already has the v3 shape: ``kind``/``version`` become ``result``/3, it
gains ``warnings`` (a graph result had none) and ``config.kind`` = ``graph``.
"""

from typing import Any

from .json_copy import json_copy
from .fields import to_flow

VERSION = 3
STREAM_KINDS = ("roundtrip", "oneway", "throughput", "service")
RUN_SECTIONS = ("cpu", "daemons", "link", "hosts", "resilience", "restarts", "wire", "layers",
                "profile", "alloc_sites", "bridge", "resources", "gates", "source")
"""a v2 run-result's run-level sections, kept whole (keyed by role names = node names;
``source``: an imported point's tool and file)"""
GRAPH_KEPT = ("run_id", "started_at", "status", "status_reason", "graph", "run", "edges",
              "chains", "calls", "nodes", "daemons", "link", "cpu", "hosts", "baseline",
              "gates", "layers", "profile", "wire", "alloc_sites", "restarts", "resources",
              "bridge")
"""a v1 graph-result's keys, kept as they are"""
SENDER = {"roundtrip": "ping", "oneway": "pub", "throughput": "pub", "service": "client"}
RECEIVER = {"roundtrip": "pong", "oneway": "sub", "throughput": "sub", "service": "server"}
ONE_TOPIC = {"roundtrip": "rt", "oneway": "t", "throughput": "t", "service": "client"}
"""the name of a stream's one flow (chain rt, topic t, the client's call edge)"""
SERVICE = "s"
ALL_TOPICS = "*"
"""a subscriber's edge when it took several topics (its v2 measurement pools them)"""


class NotAResult(ValueError):
    """The document is none of the results mwperf has written."""


def upgrade(document: dict[str, Any], share: bool = False) -> dict[str, Any]:
    """``document`` as a v3 result (a v3 result: an equal copy). ``share``: the caller owns
    ``document`` (it has just parsed it) and nothing changes either after this, so the new
    document may share its unchanged parts (histograms, series, reports) instead of a deep copy
    of them (a deep copy of a point's histograms cost more than the rest of a report's read:
    tests/test_throughput_report.py)."""
    if not isinstance(document, dict):
        raise NotAResult("not a JSON object")
    kind, version = document.get("kind"), document.get("schema_version", document.get("version"))
    document = dict(document) if share else json_copy(document)
    if kind == "result" and version == VERSION:
        return document
    if kind == "run-result" and version in (1, 2):
        return _from_run_result(document)
    if kind == "graph-result" and version == 1:
        return _from_graph_result(document)
    raise NotAResult(f"kind {kind!r} version {version!r}: mwperf reads run-result 1-2, "
                     f"graph-result 1 and result 3")


def _from_graph_result(old: dict[str, Any]) -> dict[str, Any]:
    new: dict[str, Any] = {"schema_version": VERSION, "kind": "result"}
    new.update({key: old[key] for key in GRAPH_KEPT if key in old})
    new["config"] = {**old["config"], "kind": "graph"}
    new.setdefault("calls", [])
    new["warnings"] = list(old.get("warnings") or [])
    new["upgraded_from"] = {"kind": "graph-result", "version": old["version"], "notes": []}
    return new


def _from_run_result(old: dict[str, Any]) -> dict[str, Any]:
    kind = old["config"]["mode"]
    if kind not in STREAM_KINDS:
        raise NotAResult(f"config.mode {kind!r}: a run-result's mode is one of "
                         f"{', '.join(STREAM_KINDS)}")
    notes: list[str] = []
    new: dict[str, Any] = {"schema_version": VERSION, "kind": "result"}
    new.update({key: old[key] for key in ("run_id", "tool", "host") if key in old})
    new["config"] = {**old["config"], "kind": kind}
    new.update({key: old[key] for key in ("status", "status_reason", "started_at",
                                          "finished_at")})
    new["nodes"] = _nodes(old, kind)
    new["edges"], new["chains"], new["calls"], new["pools"] = [], [], [], []
    if kind == "roundtrip":
        _round_trip(old, new, notes)
    elif kind == "service":
        _service(old, new)
    else:
        _one_way(old, new, notes)
    new["warnings"] = old["warnings"]
    new.update({key: old[key] for key in RUN_SECTIONS if key in old})
    new["upgraded_from"] = {"kind": "run-result", "version": old["schema_version"],
                            "notes": notes}
    return new


def _nodes(old: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """One node per agent report, in the result's order (named by role; several subscribers
    by their per_subscriber names), then any subscriber that left no report."""
    reports = old["agents"]
    subscribers = old.get("per_subscriber") or []
    sub_reports = [r for r in reports if r["role"] == "sub"]
    paired = len(sub_reports) == len(subscribers)
    nodes: list[dict[str, Any]] = []
    subs_seen = 0
    for report in reports:
        node = {"name": report["role"], "role": report["role"], "status": report["status"],
                "status_reason": report["status_reason"], "report": report}
        if subscribers and report["role"] == "sub":
            if paired:
                entry = subscribers[subs_seen]
                node.update(name=entry["name"], status=entry["status"],
                            status_reason=entry["status_reason"])
            else:
                node["name"] = f"sub report {subs_seen}"
            subs_seen += 1
        node.update(_process_summary(report, own_memory=old["schema_version"] >= 2))
        nodes.append(node)
    if subscribers and not paired:
        nodes += [{"name": entry["name"], "role": "sub", "status": entry["status"],
                   "status_reason": entry["status_reason"]} for entry in subscribers]
    sender = next((n for n in nodes if n["name"] == SENDER[kind]), None)
    if "discovery" in old:
        if sender is None:
            sender = {"name": SENDER[kind], "role": SENDER[kind], "status": "failed",
                      "status_reason": "left no report"}
            nodes.append(sender)
        sender["discovery"] = old["discovery"]
    return nodes


def _process_summary(report: dict[str, Any], own_memory: bool) -> dict[str, Any]:
    """A node's CPU and memory as a graph node states them, from its agent's report (memory
    only from version 2 on: version 1's max_rss_kib was the control plane's, inherited through
    fork; the schema's description)."""
    process = report["process"]
    summary = {"cpu_s": round(process["cpu_user_s"] + process["cpu_sys_s"], 6)}
    if own_memory:
        summary["max_rss_kib"] = process["max_rss_kib"]
    return summary


def _round_trip(old: dict[str, Any], new: dict[str, Any], notes: list[str]) -> None:
    topics = old.get("per_topic") or []
    for entry in topics or [None]:
        name = ONE_TOPIC["roundtrip"] if entry is None else entry["name"]
        out, back = ("ping", "pong") if entry is None else (f"{name}:ping", f"{name}:pong")
        new["edges"] += [{"topic": out, "from": "ping", "to": "pong"},
                         {"topic": back, "from": "pong", "to": "ping"}]
        figures = old["measurement"] if entry is None else entry
        chain = {"name": name, "topics": [out, back]}
        chain.update(to_flow(figures, "chains") if figures is not None else {})
        new["chains"].append(chain)
    _pool(old, new, "chains", [c["name"] for c in new["chains"]], bool(topics))
    notes.append("a v2 round trip measured each round trip whole: its figures are its chain's; "
                 "its edges (each direction alone) have none")


def _one_way(old: dict[str, Any], new: dict[str, Any], notes: list[str]) -> None:
    kind = old["config"]["mode"]
    topics = old.get("per_topic") or []
    subscribers = old.get("per_subscriber") or []
    if subscribers:
        topic = ALL_TOPICS if topics else ONE_TOPIC[kind]
        for entry in subscribers:
            edge = {"topic": topic, "from": "pub", "to": entry["name"]}
            if entry["measurement"] is not None:
                edge.update(to_flow(entry["measurement"], "edges"))
            new["edges"].append(edge)
        _pool(old, new, "edges", [e["to"] for e in new["edges"]], True)
        for entry in topics:
            new["pools"].append({"name": entry["name"], "over": "edges",
                                 "of": [e["to"] for e in new["edges"]],
                                 **to_flow(entry, "edges")})
        if topics:
            notes.append(f"each subscriber's edge (topic {ALL_TOPICS!r}) pools its topics; "
                         f"each topic's pool over the subscribers is in pools")
        return
    for entry in topics or [None]:
        edge = {"topic": ONE_TOPIC[kind] if entry is None else entry["name"],
                "from": "pub", "to": "sub"}
        figures = old["measurement"] if entry is None else entry
        edge.update(to_flow(figures, "edges") if figures is not None else {})
        new["edges"].append(edge)
    _pool(old, new, "edges", [e["topic"] for e in new["edges"]], bool(topics))


def _service(old: dict[str, Any], new: dict[str, Any]) -> None:
    clients = old.get("per_topic") or []
    for entry in clients or [None]:
        call = {"name": ONE_TOPIC["service"] if entry is None else entry["name"],
                "service": SERVICE, "client": "client", "server": "server"}
        figures = old["measurement"] if entry is None else entry
        call.update(to_flow(figures, "calls") if figures is not None else {})
        new["calls"].append(call)
    _pool(old, new, "calls", [c["name"] for c in new["calls"]], bool(clients))


def _pool(old: dict[str, Any], new: dict[str, Any], flows: str, names: list[str],
          pooled: bool) -> None:
    """The v2 measurement over several flows, as the v2 run pooled it (``pooled``: it did)."""
    if not pooled:
        return
    pool: dict[str, Any] = {"name": "all", "over": flows, "of": names}
    if old["measurement"] is not None:
        pool.update(to_flow(old["measurement"], flows))
    new["pools"].insert(0, pool)
