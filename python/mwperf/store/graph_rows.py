"""Flattening a graph-result (graph-result.json, schema/result.v2.json ``$defs/graph_result``)
into the rows of the graph tables (graph_tables.py).

Pure functions: a result dict in, dicts keyed by column name out. What a result lacks (an edge
nothing arrived on has no latency, a run without ``--baseline`` no alone figures) is NULL.
"""

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from .rows import timestamp


@dataclass(frozen=True)
class GraphPlace:
    """What the folder layout, not the result, says about a graph run."""

    run_id: str
    """its run in the ``runs`` table: itself, or its sweep"""
    folder: str
    """relative to the results folder"""
    scenario: str | None
    index: int | None
    repetition: int | None


def p99_share(edge: dict[str, Any]) -> float | None:
    """An edge's latency p99 as a share of its topic's period (None without either)."""
    latency = edge.get("latency") or {}
    if latency.get("p99_ns") is None or not edge.get("period_ns"):
        return None
    return float(latency["p99_ns"]) / float(edge["period_ns"])


def graph_run_row(result: dict[str, Any], place: GraphPlace) -> dict[str, Any]:
    """The ``graph_runs`` row of ``result``."""
    graph = result.get("graph") or {}
    config = result.get("config") or {}
    point = config.get("graph") or {}
    run = result.get("run") or {}
    edges = result.get("edges") or []
    started = timestamp(result.get("started_at"))
    total = run.get("total_s")
    shares = [s for s in map(p99_share, edges) if s is not None]
    link = config.get("link")
    kind = config.get("kind") or "graph"
    return {
        "graph_id": result["run_id"], "run_id": place.run_id, "point_index": place.index,
        "repetition": place.repetition, "folder": place.folder, "scenario": place.scenario,
        "started_at": started,
        "finished_at": (started + timedelta(seconds=total) if started and total else
                        timestamp(result.get("finished_at"))),
        "status": result["status"], "status_reason": result.get("status_reason"),
        "graph_name": graph.get("name") or point.get("name") or (kind if kind != "graph"
                                                                  else "?"),
        "graph_source": graph.get("source"), "graph_spec": point.get("spec"),
        "transport": config.get("transport"),
        "link": link if link is None or isinstance(link, str) else json.dumps(link),
        "reliability": config.get("reliability"), "history": config.get("history"),
        "depth": config.get("depth"), "duration_ns": config.get("duration_ns"),
        "warmup_ns": config.get("warmup_ns"), "copies": point.get("copies"),
        "rate_scale": point.get("rate_scale"),
        "without_nodes": ",".join(point.get("without") or []) or None,
        "baseline": (result.get("baseline") or {}).get("what") or point.get("baseline"),
        "nodes": graph.get("nodes"), "topics": graph.get("topics"), "edges": graph.get("edges"),
        "chains": len(result.get("chains") or []),
        "discovery_ns": run.get("discovery_ns"), "ready_s": run.get("ready_s"),
        "stop_s": run.get("stop_s"), "total_s": total,
        "edges_lost": sum(e.get("lost") or 0 for e in edges),
        "worst_p99_share": max(shares, default=None),
        "result": json.dumps(result, ensure_ascii=False), "kind": kind,
    }


def graph_edge_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One ``graph_edges`` row per edge, in the result's order."""
    alone = {(b["topic"], b["from"], b["to"]): b
             for b in (result.get("baseline") or {}).get("edges") or []}
    rows = []
    for i, e in enumerate(result.get("edges") or []):
        latency, age = e.get("latency") or {}, e.get("age") or {}
        base = alone.get((e["topic"], e["from"], e["to"])) or {}
        rows.append({
            "graph_id": result["run_id"], "edge": i, "topic": e["topic"], "from_node": e["from"],
            "to_node": e["to"], "period_ns": e.get("period_ns"),
            **{k: e.get(k) for k in ("sent", "received", "lost", "duplicated", "reordered",
                                     "corrupted", "jitter_ns", "late", "too_late", "late_ns",
                                     "too_late_ns", "offered_per_s", "achieved_per_s",
                                     "payload_bytes")},
            "latency_count": latency.get("count"), "latency_p50_ns": latency.get("p50_ns"),
            "latency_p90_ns": latency.get("p90_ns"), "latency_p99_ns": latency.get("p99_ns"),
            "latency_max_ns": latency.get("max_ns"), "age_p50_ns": age.get("p50_ns"),
            "age_p99_ns": age.get("p99_ns"), "age_max_ns": age.get("max_ns"),
            "p99_share": p99_share(e), **_alone_and_inside(base),
            "alone_lost": (base.get("alone") or {}).get("lost"),
            "layers": _json_or_null(e.get("layers")),
        })
    return rows


def _json_or_null(section: Any) -> str | None:
    """A ``layers`` section as the JSON column stores it (None: measured without)."""
    return None if section is None else json.dumps(section, ensure_ascii=False)


def graph_chain_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One ``graph_chains`` row per chain, in the result's order."""
    alone = {c["name"]: c for c in (result.get("baseline") or {}).get("chains") or []}
    rows = []
    for i, c in enumerate(result.get("chains") or []):
        e2e = c.get("end_to_end") or {}
        rows.append({
            "graph_id": result["run_id"], "chain": i, "name": c["name"],
            "topics": " -> ".join(c.get("topics") or []), "deadline_ns": c.get("deadline_ns"),
            "e2e_count": e2e.get("count"), "e2e_p50_ns": e2e.get("p50_ns"),
            "e2e_p99_ns": e2e.get("p99_ns"), "e2e_max_ns": e2e.get("max_ns"),
            "over_deadline": c.get("over_deadline"),
            "hops": json.dumps(c.get("hops") or [], ensure_ascii=False),
            **_alone_and_inside(alone.get(c["name"]) or {}),
            "layers": _json_or_null(c.get("layers")),
        })
    return rows


def graph_node_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One ``graph_nodes`` row per node."""
    keys = ("name", "status", "status_reason", "cpu_s", "cpu_percent", "max_rss_kib",
            "discovery_ns", "max_send_lag_ns", "send_errors")
    return [{"graph_id": result["run_id"], **{k: n.get(k) for k in keys}}
            for n in result.get("nodes") or []]


def graph_call_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One ``graph_calls`` row per call edge (none in a result from before services)."""
    keys = ("service", "client", "server", "period_ns", "request_bytes", "in_flight",
            "timeout_ns", "sent", "answered", "timeouts", "errors", "send_errors", "unmatched",
            "skipped", "server_requests", "server_answered", "work_ns", "offered_per_s",
            "achieved_per_s")
    rows = []
    for i, c in enumerate(result.get("calls") or []):
        latency, call = c.get("latency") or {}, c.get("call_latency") or {}
        server = c.get("server_time") or {}
        rows.append({"graph_id": result["run_id"], "call": i, **{k: c.get(k) for k in keys},
                     "latency_count": latency.get("count"),
                     "latency_p50_ns": latency.get("p50_ns"),
                     "latency_p99_ns": latency.get("p99_ns"),
                     "latency_max_ns": latency.get("max_ns"),
                     "call_latency_p50_ns": call.get("p50_ns"),
                     "call_latency_p99_ns": call.get("p99_ns"),
                     "server_time_p50_ns": server.get("p50_ns"),
                     "server_time_p99_ns": server.get("p99_ns")})
    return rows


def _alone_and_inside(item: dict[str, Any]) -> dict[str, Any]:
    """A baseline item's p50/p99 alone and in the graph (NULL where it has none)."""
    alone, inside = item.get("alone") or {}, item.get("in_graph") or {}
    return {"alone_p50_ns": alone.get("p50_ns"), "alone_p99_ns": alone.get("p99_ns"),
            "in_graph_p50_ns": inside.get("p50_ns"), "in_graph_p99_ns": inside.get("p99_ns")}
