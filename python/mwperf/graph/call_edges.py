"""A graph result's call edges: one per (client node, service), from the client's report (its
calls, their latency from the intended call time and from the actual call) and its server
node's (the measured requests it got from that client, its server time for them).

``server_requests`` is the server's own count: beside the client's ``sent`` it tells calls
lost on the way (sent - server_requests) from replies lost on the way back
(server_answered - answered, less timeouts that were answered late)."""

from typing import Any

from .model import Graph


def call_edges(graph: Graph, names: dict[int, str],
               reports: dict[str, dict[str, Any] | None], duration_s: float
               ) -> list[dict[str, Any]]:
    """Every call edge of ``graph`` (``names``: node index -> name)."""
    index = {name: i for i, name in names.items()}
    out = []
    for e in graph.call_edges():
        node = graph.node(e.client)
        spec = next(c for c in node.clients if c.service == e.service)
        client = next((c for c in (reports.get(e.client) or {}).get("clients", [])
                       if c["service"] == e.service), None)
        served = next((s for s in (reports.get(e.server or "") or {}).get("servers", [])
                       if s["service"] == e.service), None)
        per = next((c for c in (served or {}).get("clients", [])
                    if c["source"] == index.get(e.client)), None)
        edge: dict[str, Any] = {
            "service": e.service, "client": e.client, "server": e.server,
            "period_ns": spec.period_ns, "request_bytes": spec.request_bytes,
            "in_flight": spec.in_flight, "timeout_ns": spec.timeout_ns,
            "offered_per_s": 1e9 / spec.period_ns,
            "server_requests": (per or {}).get("requests", 0) if served is not None else None,
            "server_answered": (per or {}).get("answered", 0) if served is not None else None,
            "server_time": (per or {}).get("server_time") if per else None,
            "work_ns": served["work_ns"] if served else None,
        }
        if client is None:
            edge.update(slots=None, skipped=None, sent=None, answered=None, timeouts=None,
                        errors=None, send_errors=None, unmatched=None, latency=None,
                        call_latency=None, achieved_per_s=None)
        else:
            m, calls = client["measurement"], client["measurement"]["calls"]
            answered = m["accounting"]["received"]
            edge.update(slots=client["slots"], skipped=client["skipped"],
                        sent=m["accounting"]["sent"], answered=answered,
                        timeouts=calls["timeouts"], errors=calls["errors"],
                        send_errors=calls["send_errors"], unmatched=calls["unmatched"],
                        corrupted=m["accounting"]["corrupted"],
                        latency=m["response"] if answered else None,
                        call_latency=m["service"] if answered else None,
                        achieved_per_s=answered / duration_s if duration_s else None)
        out.append(edge)
    return out
