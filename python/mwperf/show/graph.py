"""The summary after a graph run: one line per edge (worst first: p99 as a share of the
topic's period), one per call edge (a client node's calls of a service), one per chain, then
the nodes' CPU and memory."""

from typing import Any

from ..durations import format_ns
from .details import alloc_sites, bridge, profile, security, wire
from .graph_layers import layer_rows, why_not


def _share(edge: dict[str, Any]) -> float:
    if not edge.get("latency") or not edge.get("period_ns"):
        return float("inf") if edge.get("received") == 0 else 0.0
    return (edge["latency"]["p99_ns"] or 0) / edge["period_ns"]


def _processes(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The nodes, those sharing a process (graph/processes.py) as that one process: their CPU
    and memory are its own, counted once."""
    members: dict[str, list[str]] = {}
    for node in nodes:
        if node.get("process"):
            members.setdefault(node["process"], []).append(node["name"])
    out: list[dict[str, Any]] = []
    for node in nodes:
        process = node.get("process")
        if not process:
            out.append(node)
        elif members[process][0] == node["name"]:
            out.append({**node, "name": f"process {process} ({', '.join(members[process])})"})
    return out


def render(result: dict[str, Any]) -> str:
    g, run = result["graph"], result["run"]
    lines = [f"graph {g['name']} over {result['config']['transport']}: {g['nodes']} nodes, "
             f"{g['topics']} topics, {g['edges']} edges"
             + (f", {g['services']} services, {len(result['calls'])} call edges"
                if result.get("calls") else "") + f"; {result['status']}"
             + (f" ({result['status_reason']})" if result["status_reason"] else "")]
    if run["discovery_ns"] is not None:
        stop = f", stopped {run['stop_s']:.2f} s after its end" if run.get("stop_s") is not None \
            else ""
        lines.append(f"all matched after {format_ns(run['discovery_ns'])} (slowest node); "
                     f"every node ready after {run['ready_s']:.2f} s{stop}; whole run "
                     f"{run['total_s']:.2f} s")
    rows = [("edge", "period", "p50", "p99", "max", "lost", "late", "too late", "rate")]
    for e in sorted(result["edges"], key=_share, reverse=True):
        lat = e.get("latency")
        rows.append((f"{e['topic']} {e['from']} -> {e['to']}",
                     format_ns(e["period_ns"]) if e["period_ns"] else "-",
                     format_ns(lat["p50_ns"]) if lat else "-",
                     format_ns(lat["p99_ns"]) if lat else "-",
                     format_ns(lat["max_ns"]) if lat else "-",
                     count_text(e.get("lost")), count_text(e.get("late")), count_text(e.get("too_late")),
                     rate_text(e)))
    if result["edges"] or not result.get("calls"):
        lines += _table(rows)
    lines += call_lines(result.get("calls") or [])
    lines += command_lines(result)
    for c in result["chains"]:
        e2e = c["end_to_end"]
        if e2e is None:
            lines.append(f"chain {c['name']}: nothing arrived at its end")
            continue
        hops = ", ".join((f"stage {format_ns(h['stage_p50_ns'])} + "
                          if h.get("stage_p50_ns") is not None else "")
                         + f"{h['topic']} {format_ns(h['latency_p50_ns'])}"
                         for h in c["hops"] if h["latency_p50_ns"] is not None)
        over = (f", {c['over_deadline']} over its {format_ns(c['deadline_ns'])} deadline"
                if c["over_deadline"] is not None else "")
        lines.append(f"chain {c['name']}: end to end p50 {format_ns(e2e['p50_ns'])}, p99 "
                     f"{format_ns(e2e['p99_ns'])}, max {format_ns(e2e['max_ns'])} "
                     f"({e2e['count']} messages{over}); hops p50: {hops}")
    lines += outage_lines(result["edges"])
    lines += restart_lines(result.get("restarts") or [])
    layer_table = layer_rows(result)
    if len(layer_table) > 1:
        lines += _table(layer_table)
    lines += [line for line in (why_not(result),) if line]
    lines += _interference(result.get("baseline"))
    if result.get("baseline"):
        lines += load_lines(result)
    nodes = _processes([n for n in result["nodes"] if n.get("cpu_percent") is not None])
    if nodes:
        busiest = sorted(nodes, key=lambda n: n["cpu_percent"], reverse=True)[:5]
        lines.append("busiest nodes: " + ", ".join(
            f"{n['name']} {n['cpu_percent']:.1f} % CPU {n['max_rss_kib'] / 1024:.1f} MiB"
            + (f" {n['allocs_per_msg']:.2f} allocs/msg" if n.get("allocs_per_msg") is not None
               else "")
            for n in busiest))
    for n in result["nodes"]:
        if n["status"] != "complete":
            lines.append(f"node {n['name']}: {n['status']}: {n.get('status_reason')}")
    lines += [line.rstrip("\n") for line in (bridge(result), security(result), wire(result),
                                               profile(result), alloc_sites(result)) if line]
    lines += [f"warning {w['code']}: {w['message']}" + (f" ({w['hint']})" if w.get("hint") else "")
              for w in result.get("warnings") or []]
    return "\n".join(lines) + "\n"


def outage_lines(edges: list[dict[str, Any]]) -> list[str]:
    """One line per edge that crossed a link outage (graph/outages.py): each window's loss and
    recovery, or why it has none."""
    lines = []
    for e in edges:
        section = e.get("outages")
        if not section:
            continue
        said = []
        for item in section["items"]:
            if item["lost"] is None:
                said.append(item["note"] or "no figures")
                continue
            recovery = (f", recovered {format_ns(item['recovery_ns'])} after"
                        if item["recovery_ns"] is not None else ", never recovered")
            said.append(f"lost {item['lost']} of {item['sent_in_gap']} sent in the gap{recovery}")
        lines.append(f"outage {e['topic']} {e['from']} -> {e['to']}: " + "; ".join(said))
    return lines


def restart_lines(restarts: list[dict[str, Any]]) -> list[str]:
    """One line per ``--restart NODE@T`` of a graph (graph/restarts.py): when its process was
    ready again, and per edge and chain what it lost and when a message sent after the kill
    arrived."""
    lines = []
    for r in restarts:
        head = f"restart {r['target']}@{format_ns(r['at_ns'])}"
        if r["killed_ns"] is None:
            lines.append(f"{head}: {'; '.join(r['notes']) or 'not restarted'}")
            continue
        ready = (f"ready again {format_ns(r['ready_ns'] - r['killed_ns'])} after the kill"
                 if r["ready_ns"] is not None else "never ready again")
        said = []
        for e in r["edges"]:
            never = f" ({e['never_sent']} due while down, never sent)" if e["never_sent"] else ""
            back = (f"first after {format_ns(e['rediscovery_ns'])}" if e["recovered"]
                    else "never recovered")
            said.append(f"{e['topic']} {e['from']} -> {e['to']} lost {e['lost']} of "
                        f"{e['sent_in_gap']} sent in the gap{never}, {back}")
        said += [f"chain {c['name']} " + (f"whole again after {format_ns(c['rediscovery_ns'])}"
                                          if c["rediscovery_ns"] is not None
                                          else "never whole again") for c in r["chains"]]
        lines.append(f"{head}: {ready}; " + "; ".join(said))
    return lines


def _interference(baseline: dict[str, Any] | None) -> list[str]:
    """What the rest of the graph costs the baseline's edges and chain (p99, alone -> inside)."""
    if not baseline:
        return []
    out = [f"interference ({baseline['what']} alone, then in the whole graph):"]
    items = [(f"{e['topic']} {e['from']} -> {e['to']}", e) for e in baseline["edges"]]
    items += [(f"chain {c['name']}", c) for c in baseline["chains"]]
    for label, item in items:
        alone, inside = item["alone"], item["in_graph"]
        if not alone or not inside:
            out.append(f"  {label}: not measured both ways")
            continue
        delta = inside["p99_ns"] - alone["p99_ns"]
        out.append(f"  {label}: p99 {format_ns(alone['p99_ns'])} alone, "
                   f"{format_ns(inside['p99_ns'])} in the graph ({'+' if delta >= 0 else '-'}"
                   f"{format_ns(abs(delta))}); p50 {format_ns(alone['p50_ns'])} -> "
                   f"{format_ns(inside['p50_ns'])}")
    return out


def call_lines(calls: list[dict[str, Any]]) -> list[str]:
    """The call edges' table: latency from the intended call time, the server's time, counts
    (answered of sent, the server's own count of requests, timeouts, errors)."""
    if not calls:
        return []
    rows = [("call", "period", "p50", "p99", "max", "server p50", "server p99", "answered",
             "at server", "timeouts", "errors")]
    for c in calls:
        lat, srv = c.get("latency"), c.get("server_time")
        rows.append((f"{c['service']} {c['client']} -> {c['server']}",
                     format_ns(c["period_ns"]),
                     format_ns(lat["p50_ns"]) if lat else "-",
                     format_ns(lat["p99_ns"]) if lat else "-",
                     format_ns(lat["max_ns"]) if lat else "-",
                     format_ns(srv["p50_ns"]) if srv else "-",
                     format_ns(srv["p99_ns"]) if srv else "-",
                     f"{count_text(c.get('answered'))}/{count_text(c.get('sent'))}",
                     count_text(c.get("server_requests")), count_text(c.get("timeouts")),
                     count_text(c.get("errors"))))
    return _table(rows)


def count_text(value: int | None) -> str:
    """A count, or '-' when not known."""
    return "-" if value is None else str(value)


def command_lines(result: dict[str, Any]) -> list[str]:
    """Per command node (a program of the user's): each output's latency input -> output,
    rate kept and messages lost, then its process group's CPU and memory."""
    lines = []
    for node in (n for n in result["nodes"] if "command" in n):
        for e in (e for e in result["edges"] if e["from"] == node["name"] and e.get("carried")
                  and not e.get("command_input")):
            lat = e.get("latency")
            inputs = ", ".join(c["topic"] for c in e["carried"])
            lines.append(f"{node['name']} (command) {inputs} -> {e['topic']} (at {e['to']}): "
                         + (f"p50 {format_ns(lat['p50_ns'])}, p99 {format_ns(lat['p99_ns'])}, "
                            if lat else "nothing arrived, ")
                         + f"rate {rate_text(e)}, lost {count_text(e.get('lost'))} of "
                         f"{count_text(e.get('sent'))}")
        if node.get("cpu_percent") is not None:
            lines.append(f"{node['name']} (command, process group of "
                         f"{node['command'].get('processes', '?')}): {node['cpu_percent']:.1f} % "
                         f"CPU, peak RSS {node['max_rss_kib'] / 1024:.1f} MiB")
    return lines


def rate_text(edge: dict[str, Any]) -> str:
    """An edge's achieved/offered rate ('-' without an offered rate); a saturating edge's
    (``rate: max``) delivered messages and MB (1e6 bytes of payload) per second."""
    offered, achieved = edge.get("offered_per_s"), edge.get("achieved_per_s")
    if edge.get("saturating") and achieved is not None:
        return f"{figure(achieved)}/max Hz" + (
            f" {figure(edge['payload_bytes_per_s'] / 1e6)} MB/s"
            if edge.get("payload_bytes_per_s") is not None else "")
    if not offered or achieved is None:
        return "-"
    return f"{achieved:.4g}/{offered:.4g} Hz"


def figure(value: float) -> str:
    """A rate: four significant digits, whole from 1000 on (41300, not 4.13e+04)."""
    return f"{value:.0f}" if value >= 1000 else f"{value:.4g}"


def load_lines(result: dict[str, Any]) -> list[str]:
    """The saturating edges (``rate: max``) of ``result``: what the load beside the measured
    topics delivered."""
    return [f"  under load: {e['topic']} {e['from']} -> {e['to']} delivered "
            f"{figure(e['achieved_per_s'])} msgs/s, {figure(e['payload_bytes_per_s'] / 1e6)} MB/s "
            f"(sent {count_text(e.get('sent'))}, lost {count_text(e.get('lost'))})"
            for e in result["edges"] if e.get("saturating")
            and e.get("achieved_per_s") is not None and e.get("payload_bytes_per_s") is not None]


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                      enumerate(zip(r, widths))).rstrip() for r in rows]
