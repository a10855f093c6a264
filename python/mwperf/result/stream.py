"""The stream view of a v3 result: today's single-stream figures (a v2 run-result's
``measurement``, ``per_topic``, ``per_subscriber``, ``agents``, ``discovery``) given back from its
nodes, edges, chains, calls and pools. Pure. docs/architecture.md §2.3.

Which flows a stream kind measures over: a round trip its chains, a one-way or throughput stream
its edges (one per subscriber, or one per topic), a service its call edges (one per client).
With several of them, the measurement is the pool named ``all`` and ``per_topic`` the flows
(or, with several subscribers, the per-topic pools). Nothing is recomputed: a figure the view
gives is a figure the result holds.
"""

from typing import Any

from .fields import from_flow
from .upgrade import SENDER, STREAM_KINDS

FLOWS_OF = {"roundtrip": "chains", "oneway": "edges", "throughput": "edges",
            "service": "calls"}
"""a stream kind -> the v3 list its figures are in"""
CLAIMS = ("measurement", "per_topic", "per_subscriber", "agents", "discovery")
"""what the view gives (per_subscriber only with several subscribers, as a v2 result had it)"""


def stream_view(result: dict[str, Any]) -> dict[str, Any]:
    """The stream figures of a v3 ``result`` of a stream kind (ValueError for a graph)."""
    kind = result["config"].get("kind")
    if kind not in STREAM_KINDS:
        raise ValueError(f"a {kind} result has no stream view (stream kinds: "
                         f"{', '.join(STREAM_KINDS)})")
    flows = FLOWS_OF[kind]
    pools = result.get("pools") or []
    whole = next((p for p in pools if "topic_index" not in p), None)
    own = result[flows]
    nodes = {node["name"]: node for node in result["nodes"]}
    several_subscribers = flows == "edges" and len({edge["to"] for edge in own}) > 1
    view: dict[str, Any] = {
        "measurement": _measurement(whole if whole is not None else own[0], flows, kind),
        "agents": [node["report"] for node in result["nodes"] if "report" in node],
        "discovery": nodes.get(SENDER[kind], {}).get("discovery"),
    }
    if several_subscribers:
        view["per_topic"] = [_topic(pool, flows, kind) for pool in pools
                             if "topic_index" in pool]
        view["per_subscriber"] = [
            {"subscriber": index, "name": edge["to"], "status": nodes[edge["to"]]["status"],
             "status_reason": nodes[edge["to"]]["status_reason"],
             "measurement": _measurement(edge, flows, kind)}
            for index, edge in enumerate(own)]
    else:
        view["per_topic"] = [_topic(flow, flows, kind) for flow in own] if whole else []
    return view


def _measurement(flow: dict[str, Any], flows: str, kind: str) -> dict[str, Any] | None:
    """A flow's figures as a v2 measurement; None when it has none (its run measured nothing)."""
    return from_flow(flow, flows, kind) if "sent" in flow else None


def _topic(flow: dict[str, Any], flows: str, kind: str) -> dict[str, Any]:
    """A flow (or a per-topic pool) as a v2 per_topic entry: its measurement and its name."""
    entry = from_flow(flow, flows, kind)
    entry["name"] = flow["topic"] if flows == "edges" and "topic" in flow and \
        "name" not in flow else flow["name"]
    return entry
