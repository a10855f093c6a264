"""What a sweep's summary keeps of a graph point: its table row (the worst edge's latency, all
edges' loss, the nodes' CPU and memory summed, the time until every node matched) and a few
lines: each chain's end to end, the worst edges (p99 as a share of the period) and the worst
call edges (by p99 from the intended call time)."""

from typing import Any

from ..durations import format_ns
from ..show.table import Row, daemon_cpu_percent

WORST_EDGES = 3


def worst_edges(result: dict[str, Any], n: int = WORST_EDGES) -> list[dict[str, Any]]:
    """The ``n`` measured edges with the largest p99 as a share of their period."""
    measured = [e for e in result["edges"] if e.get("latency") and e.get("period_ns")]
    return sorted(measured, key=lambda e: e["latency"]["p99_ns"] / e["period_ns"],
                  reverse=True)[:n]


def graph_row(result: dict[str, Any], location: str | None) -> Row:
    """The summary table's row of graph result ``result``: rate = the messages per second its
    publishers offer, payload = the graph's name, latency = its worst edge's."""
    config, edges, nodes = result["config"], result["edges"], result["nodes"]
    worst = worst_edges(result, 1)
    latency = worst[0]["latency"] if worst else None
    sent = sum(e["sent"] or 0 for e in edges if e.get("lost") is not None)
    lost = sum(e["lost"] or 0 for e in edges if e.get("lost") is not None)
    reported = [n for n in nodes if n.get("cpu_percent") is not None]
    daemons = result.get("daemons") or []
    return Row(
        transport=config["transport"], mode="graph",
        rate=round(sum(e["offered_per_s"] or 0 for e in _one_per_topic(edges)), 3),
        payload=result["graph"]["name"], payload_bytes=None,
        count=sum(e.get("received") or 0 for e in edges),
        p50_ns=latency["p50_ns"] if latency else None,
        p90_ns=latency.get("p90_ns") if latency else None,
        p99_ns=latency["p99_ns"] if latency else None,
        p999_ns=latency.get("p999_ns") if latency else None,
        max_ns=latency.get("max_ns") if latency else None,
        stddev_ns=latency.get("stddev_ns") if latency else None,
        loss_pct=100 * lost / sent if sent else None,
        msgs_per_s=round(sum(e.get("achieved_per_s") or 0 for e in edges), 3),
        cpu_pct=round(sum(n["cpu_percent"] for n in reported), 2) if reported else None,
        rss_kib=sum(n["max_rss_kib"] for n in reported) if reported else None,
        daemon_cpu_pct=daemon_cpu_percent(daemons),
        daemon_rss_kib=_sum([d.get("peak_rss_kib") for d in daemons]),
        first_message_ns=result["run"]["discovery_ns"],
        status=result["status"], status_reason=result["status_reason"], result=location)


def graph_lines(result: dict[str, Any]) -> list[str]:
    """Each chain's end to end and the worst edges, one line each."""
    lines = []
    for chain in result["chains"]:
        end = chain.get("end_to_end")
        over = chain.get("over_deadline")
        lines.append(f"chain {chain['name']}: " + (
            f"p50 {format_ns(end['p50_ns'])} p99 {format_ns(end['p99_ns'])}"
            + (f", {over} over its deadline" if over else "") if end else "not measured"))
    for e in worst_edges(result):
        lines.append(f"edge {e['topic']} {e['from']} -> {e['to']}: p99 "
                     f"{format_ns(e['latency']['p99_ns'])} "
                     f"({100 * e['latency']['p99_ns'] / e['period_ns']:.1f} % of its period), "
                     f"lost {e['lost']}, late {e['late']}, too late {e['too_late']}")
    calls = [c for c in result.get("calls") or [] if c.get("latency")]
    for c in sorted(calls, key=lambda c: c["latency"]["p99_ns"], reverse=True)[:WORST_EDGES]:
        server = c.get("server_time") or {}
        lines.append(f"call {c['service']} {c['client']} -> {c['server']}: p99 "
                     f"{format_ns(c['latency']['p99_ns'])} (server "
                     + (format_ns(server["p99_ns"]) if server.get("p99_ns") is not None
                        else "-")
                     + f"), answered {c['answered']}/{c['sent']}, timeouts {c['timeouts']}")
    return lines


def _one_per_topic(edges: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One edge per (topic, publisher): what is offered, counted once per publisher."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for e in edges:
        seen.setdefault((e["topic"], e["from"]), e)
    return list(seen.values())


def _sum(values: list[Any]) -> Any:
    known = [v for v in values if v is not None]
    return round(sum(known), 2) if known else None
