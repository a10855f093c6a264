"""A graph run's call edges in the report (a client node's calls of a service, its server
node's side of them): an HTML table in the graph run's block and a Markdown table, both from
the catalogue's ``graph_calls`` rows."""

from html import escape
from typing import Any

from ..durations import format_ns
from ..show.graph import count_text

HEAD = ("service", "client", "server", "period", "p50", "p99", "max", "call p50",
        "server p50", "server p99", "answered/sent", "at server", "timeouts", "errors")


def _ns(value: Any) -> str:
    return "—" if value is None else format_ns(value)


def _cells(c: dict[str, Any]) -> list[str]:
    return [str(c["service"]), str(c["client"]), str(c["server"] or "—"),
            _ns(c["period_ns"]), _ns(c["latency_p50_ns"]), _ns(c["latency_p99_ns"]),
            _ns(c["latency_max_ns"]), _ns(c["call_latency_p50_ns"]),
            _ns(c["server_time_p50_ns"]), _ns(c["server_time_p99_ns"]),
            f"{count_text(c['answered'])}/{count_text(c['sent'])}",
            count_text(c["server_requests"]), count_text(c["timeouts"]),
            count_text(c["errors"])]


def calls_table(graph_id: str, calls: list[dict[str, Any]]) -> str:
    """The HTML table of a graph run's call edges ("" without any)."""
    if not calls:
        return ""
    rows = []
    for c in calls:
        bad = ' class="lost"' if c["timeouts"] or c["errors"] or c["answered"] is None else ""
        rows.append(f"<tr{bad}>" + "".join(f"<td>{escape(x)}</td>" for x in _cells(c))
                    + "</tr>")
    return ('<p><b>Call edges</b> <span class="note">(latency from the intended call time; '
            'call: from the actual call; server: its callback start to reply)</span></p>'
            f'<div class="wide scroll"><table class="graph-calls" data-graph="{escape(graph_id)}">'
            "<tr>" + "".join(f"<th>{h}</th>" for h in HEAD) + "</tr>" + "".join(rows)
            + "</table></div>")


def calls_markdown(found: list[tuple[str, list[dict[str, Any]]]]) -> list[str]:
    """Markdown lines of every graph run's call edges ([] without any)."""
    if not any(calls for _, calls in found):
        return []
    lines = ["", "Graph call edges:", "", "| graph run | " + " | ".join(HEAD) + " |",
             "|---" * (len(HEAD) + 1) + "|"]
    for graph_id, calls in found:
        lines += [f"| {graph_id} | " + " | ".join(_cells(c)) + " |" for c in calls]
    return lines
