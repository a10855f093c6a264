"""The graph result: every node's report merged into edges (publisher -> subscriber: latency,
loss, late and too late, achieved vs offered rate), chains (end-to-end age from the origin's due
time, each hop's share), nodes (CPU, memory, discovery) and the run (discovery, start, stop).

Loss is counted here, from the publisher's own count of what it sent on that topic (a
subscriber cannot know it): lost = sent - distinct sequence numbers that arrived."""

from datetime import datetime
from pathlib import Path
from typing import Any

from ..config import PointConfig
from .call_edges import call_edges
from .clocks import bound_ns
from .commands import carried, is_command
from .model import Graph
from .plan import SAMPLES_DIR

GRAPH_RESULT_VERSION = 1


def merge(graph: Graph, cfg: PointConfig, specs: list[dict[str, Any]],
          reports: dict[str, dict[str, Any] | None], failed: dict[str, str],
          interrupted: str | None, *, run_id: str, started: datetime, ready_s: float,
          stop_s: float | None, total_s: float, daemons: list[Any], link: Any = None,
          cpu: Any = None, hosts: Any = None,
          commands: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """``commands``: the command nodes' entries (command_run.py), which have no report."""
    index = {n.name: i for i, n in enumerate(graph.nodes)}
    names = {index[n.name]: n.name for n in graph.nodes}
    names.update({spec["index"]: spec["name"] for spec in specs})
    sent: dict[tuple[str, str], int] = {}
    for name, report in reports.items():
        for pub in (report or {}).get("publishers", []):
            sent[(name, pub["topic"])] = sent.get((name, pub["topic"]), 0) + pub["sent"]
        for sub in (report or {}).get("subscriptions", []):
            stage = sub.get("stage")
            if stage:
                sent[(name, stage["topic"])] = sent.get((name, stage["topic"]), 0) + stage["sent"]
    measured: dict[tuple[str, str, str], dict[str, Any]] = {}
    for name, report in reports.items():
        for sub in (report or {}).get("subscriptions", []):
            for edge in sub["edges"]:
                measured[(edge["topic"], names.get(edge["source"], "?"), name)] = edge
    stage_times = {(name, sub["topic"]): sub["stage_time"]
                   for name, report in reports.items()
                   for sub in (report or {}).get("subscriptions", []) if sub.get("stage_time")}
    duration_s = (cfg.measure_ns or 0) / 1e9  # the measured time (--min-samples: stretched)
    edges = []
    ids = {topic: i for i, topic in enumerate(graph.topics())}
    for e in graph.edges():
        # out of a command node: its inputs' messages, as mwperf sent them there
        origins = [(c["topic"], graph.publishers_of(c["topic"])[0])
                   for c in carried(graph, e.topic, ids) if c["via"] == index[e.publisher]]
        sent_here = (sum(sent.get((p, t), 0) for t, p in origins)
                     if origins and all((p, t) in sent for t, p in origins)
                     else None) if origins else sent.get((e.publisher, e.topic))
        edge = _edge(e.topic, e.publisher, e.subscriber,
                     measured.get((e.topic, e.publisher, e.subscriber)),
                     sent_here, graph.period_ns(e.topic),
                     reports.get(e.subscriber) is not None, duration_s,
                     graph.saturating(e.topic))
        if origins:
            edge["carried"] = [{"topic": t, "from": p} for t, p in origins]
        if is_command(graph.node(e.subscriber)):  # not seen arriving: measured where it
            edge.update(command_input=True, achieved_per_s=None,  # comes out
                        payload_bytes_per_s=None)
        if any((r or {}).get("clock") for r in reports.values()):  # across clocks
            edge["clock_bound_ns"] = bound_ns(reports.get(e.publisher), reports.get(e.subscriber))
        edges.append(edge)
    status = "complete"
    reason = None
    # a node that reported but not as complete (it failed or was stopped) is named as well
    unwell = {n: f"{r['status']}: {r.get('status_reason') or 'no reason given'}"
              for n, r in reports.items() if r is not None and r["status"] != "complete"
              and n not in failed}
    if failed or interrupted or unwell:
        status = "partial"
        reason = interrupted or "; ".join(f"node '{n}' {why}"
                                          for n, why in {**failed, **unwell}.items())
    if all(r is None for r in reports.values()):
        status = "failed"
    return {
        "kind": "graph-result", "version": GRAPH_RESULT_VERSION, "run_id": run_id,
        "started_at": started.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "status": status, "status_reason": reason,
        "graph": {"name": graph.name, "source": graph.source, "nodes": len(graph.nodes),
                  "topics": len(graph.topics()), "edges": len(edges),
                  "services": len(graph.services())},
        "config": {"transport": cfg.transport, "link": cfg.link, "duration_ns": cfg.duration_ns,
                   "warmup_ns": cfg.warmup_ns, "reliability": cfg.reliability,
                   "history": cfg.history, "depth": cfg.depth,
                   **({"min_samples": cfg.min_samples, "measure_ns": cfg.measure_ns}
                      if cfg.min_samples is not None else {}),
                   **({"graph": cfg.graph.to_dict()} if cfg.graph is not None else {}),
                   **({"secure": cfg.secure} if cfg.secure is not None else {})},
        "run": {"ready_s": round(ready_s, 3), "total_s": round(total_s, 3),
                "stop_s": round(stop_s, 3) if stop_s is not None else None,
                "discovery_ns": max((r["discovery_ns"] for r in reports.values() if r),
                                    default=None)},
        "edges": edges,
        "calls": call_edges(graph, names, reports, duration_s),
        "chains": [_chain_bound(graph, _chain(graph, c.name, c.topics, c.deadline_ns, edges,
                                              stage_times), reports)
                   for c in graph.chains],
        "nodes": [{**_node(spec["name"], reports.get(spec["name"]), failed.get(spec["name"])),
                   **_client(graph, spec["name"])} for spec in specs] + list(commands or []),
        "daemons": daemons,
        "link": link,
        "cpu": cpu,
        **({"hosts": hosts} if hosts is not None else {}),
    }


def _edge(topic: str, publisher: str, subscriber: str, edge: dict[str, Any] | None,
          sent: int | None, period_ns: int | None, reported: bool,
          duration_s: float, saturating: bool = False) -> dict[str, Any]:
    """One edge; delivered rates over the measurement: ``achieved_per_s`` (messages),
    ``payload_bytes_per_s`` (its payload bytes); a saturating topic's (``rate: max``) has no
    period and no offered rate."""
    out: dict[str, Any] = {"topic": topic, "from": publisher, "to": subscriber,
                           "period_ns": period_ns, "sent": sent}
    if saturating:
        out["saturating"] = True
    if edge is None:
        out.update(received=0 if reported else None, lost=sent if reported else None,
                   latency=None, age=None, late=None, too_late=None,
                   offered_per_s=1e9 / period_ns if period_ns else None, achieved_per_s=0.0,
                   payload_bytes_per_s=0.0)
        return out
    m = edge["measurement"]
    acc = m["accounting"]
    distinct = acc["received"] + acc["corrupted"]
    out.update(received=acc["received"],
               lost=max(0, sent - distinct) if sent is not None else None,
               duplicated=acc["duplicated"], reordered=acc["reordered"],
               corrupted=acc["corrupted"],
               latency=m["service"], age=m["response"], jitter_ns=m["jitter_rfc3550_ns"],
               late=edge["late"], too_late=edge["too_late"], late_ns=edge["late_ns"],
               too_late_ns=edge["too_late_ns"], offered_per_s=edge["offered_per_s"] or None,
               achieved_per_s=acc["received"] / duration_s if duration_s else None,
               payload_bytes=m["payload_bytes"],
               received_bytes=round(m["throughput"]["payload_bytes_per_s"]
                                    * m["throughput"]["duration_s"]))
    out["payload_bytes_per_s"] = out["received_bytes"] / duration_s if duration_s else None
    if m.get("samples_file"):  # --samples: saved beside the result (measure.py)
        out["samples_file"] = f"{SAMPLES_DIR}/{Path(m['samples_file']).name}"
    return out


def _chain(graph: Graph, name: str, topics: tuple[str, ...], deadline_ns: int | None,
           edges: list[dict[str, Any]], stage_times: dict[tuple[str, str], Any]
           ) -> dict[str, Any]:
    """A chain: its last topic's age where it is received (from the origin's due time), and
    for each topic the hop's latency, the age it had reached and the time the stage that
    published it spent from its callback's start to its send (p50s)."""
    stage_nodes = [
        {n.name for n in graph.nodes for s in n.subscribers
         if s.topic == here and s.publish == there} for here, there in zip(topics, topics[1:])]
    hops = []
    for i, topic in enumerate(topics):
        publishers = stage_nodes[i - 1] if i > 0 else set(graph.publishers_of(topic))
        receivers = stage_nodes[i] if i < len(topics) - 1 else None
        on = [e for e in edges if e["topic"] == topic and e["from"] in publishers
              and (receivers is None or e["to"] in receivers) and e["latency"]]
        stages = [stage_times[(n, topics[i - 1])]["p50_ns"] for n in sorted(publishers)
                  if i > 0 and (n, topics[i - 1]) in stage_times]
        hops.append({"topic": topic,
                     "stage_p50_ns": _median(stages),
                     "latency_p50_ns": _median([e["latency"]["p50_ns"] for e in on]),
                     "age_p50_ns": _median([e["age"]["p50_ns"] for e in on])})
    last = [e for e in edges if e["topic"] == topics[-1] and e["from"] in stage_nodes[-1]
            and e["age"]]
    end = max(last, key=lambda e: e["age"]["count"], default=None)
    return {"name": name, "topics": list(topics), "deadline_ns": deadline_ns,
            "end_to_end": end["age"] if end else None,
            "over_deadline": (end["age"]["count"] - _count_below(end, deadline_ns))
            if end and deadline_ns else None,
            "hops": hops}


def _chain_bound(graph: Graph, chain: dict[str, Any],
                 reports: dict[str, dict[str, Any] | None]) -> dict[str, Any]:
    """Across clocks: how far the chain's end to end may be off (its origins' worst clock
    bound and its last subscribers')."""
    if not any((r or {}).get("clock") for r in reports.values()):
        return chain
    origins = [bound_ns(reports.get(p)) for p in graph.publishers_of(chain["topics"][0])]
    last = [bound_ns(reports.get(n.name)) for n in graph.nodes
            if any(s.topic == chain["topics"][-1] for s in n.subscribers)]
    known = None not in origins + last
    chain["clock_bound_ns"] = (max(origins, default=0) + max(last, default=0)) if known else None
    return chain


def _count_below(edge: dict[str, Any], limit_ns: int) -> int:
    return sum(n for value, n in edge["age"].get("histogram") or [] if value <= limit_ns)


def _node(name: str, report: dict[str, Any] | None, failed: str | None) -> dict[str, Any]:
    if report is None:
        return {"name": name, "status": "failed", "status_reason": failed}
    process = report["process"]
    wall = process["wall_s"] or 0
    cpu = process["cpu_user_s"] + process["cpu_sys_s"]
    return {"name": name, "status": report["status"] if not failed else "partial",
            "status_reason": failed or report.get("status_reason"),
            "discovery_ns": report["discovery_ns"], "sessions": report.get("sessions"),
            "cpu_s": round(cpu, 4),
            "cpu_percent": round(100 * cpu / wall, 2) if wall else None,
            "max_rss_kib": process["max_rss_kib"],
            "sent": {p["topic"]: p["sent"] for p in report["publishers"]},
            "max_send_lag_ns": max((p["max_send_lag_ns"] for p in report["publishers"]),
                                   default=None),
            "send_errors": sum(p["send_errors"] for p in report["publishers"])
            + sum((s.get("stage") or {}).get("send_errors", 0) for s in report["subscriptions"]),
            **({"clock": report["clock"]} if report.get("clock") else {}),
            **(_allocs(report["allocations"]) if report.get("allocations") else {})}


def _client(graph: Graph, name: str) -> dict[str, Any]:
    """Who ran the node, when not mwperf's agent (graph/clients.py): a result says it was rclpy's
    cost that was measured there; and the process it shared with other nodes (processes.py),
    whose CPU and memory its figures are. A clock node is no node of the graph."""
    node = next((n for n in graph.nodes if n.name == name), None)
    if node is None:
        return {}
    return ({"client": node.client} if node.client != "agent" else {}) | (
        {"process": node.process} if node.process else {})


def _allocs(allocations: dict[str, Any]) -> dict[str, Any]:
    """--count-allocs: a node's heap allocations per measured message it sent or received."""
    return {"allocs_per_msg": allocations["allocs_per_msg"],
            "alloc_bytes_per_msg": allocations["bytes_per_msg"],
            "alloc_messages": allocations["steady_messages"]}


def _median(values: list[int]) -> int | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def interference(alone: dict[str, Any], together: dict[str, Any], what: str) -> dict[str, Any]:
    """What the rest of the graph costs ``what``: each of its edges (and its chain) measured
    alone, then inside the whole graph, in the same run."""
    full = {(e["topic"], e["from"], e["to"]): e for e in together["edges"]}
    edges = []
    for e in alone["edges"]:
        inside = full.get((e["topic"], e["from"], e["to"]))
        edges.append({"topic": e["topic"], "from": e["from"], "to": e["to"],
                      "alone": _figures(e.get("latency"), e.get("lost")),
                      "in_graph": _figures((inside or {}).get("latency"),
                                           (inside or {}).get("lost"))})
    chains = []
    for c in alone["chains"]:
        inside = next((x for x in together["chains"] if x["name"] == c["name"]), None)
        chains.append({"name": c["name"], "alone": _figures(c["end_to_end"], None),
                       "in_graph": _figures((inside or {}).get("end_to_end"), None)})
    return {"what": what, "edges": edges, "chains": chains, "alone_run_id": alone["run_id"],
            "alone_status": alone["status"]}


def _figures(stats: dict[str, Any] | None, lost: int | None) -> dict[str, Any] | None:
    if not stats:
        return None
    return {"p50_ns": stats["p50_ns"], "p99_ns": stats["p99_ns"], "max_ns": stats["max_ns"],
            "count": stats["count"], "lost": lost}
