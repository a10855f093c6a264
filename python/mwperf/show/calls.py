"""A service point's calls for people: what ``mwperf run`` and ``mwperf show`` print under the
latency table (the call outcomes, the server's time per call)."""

from collections.abc import Mapping
from typing import Any

from ..durations import format_ns

SHOWN = (("p50", "p50_ns"), ("p99", "p99_ns"), ("max", "max_ns"))


def render_calls(calls: dict[str, Any] | None,
                 clients: list[dict[str, Any]] | None = None) -> str:
    """Two lines: the calls' outcomes and limits; the server's time per call; then one line
    per client when there are several (``clients``: the result's per_topic)."""
    if not calls:
        return ""
    connections = (f"  connections {calls['connections']}"
                   if calls.get("connections") is not None else "")
    text = (f"calls         answered {calls['answered']}  timeouts {calls['timeouts']}  "
            f"errors {calls['errors']}  send errors {calls['send_errors']}  "
            f"unmatched {calls['unmatched']}  clients {calls['clients']}  in flight "
            f"{calls['in_flight']} (most at once {calls['max_outstanding']}){connections}\n")
    server = calls.get("server")
    if server:
        time = server["server_time"]
        shown = "  ".join(f"{name} {format_ns(time[key])}" for name, key in SHOWN)
        work = f" (work {format_ns(server['work_ns'])})" if server["work_ns"] else ""
        foreign = f"  foreign requests {server['foreign']}" if server["foreign"] else ""
        text += (f"server time   {shown}{work}  requests {server['requests']}  answered "
                 f"{server['answered']}{foreign}\n")
    for client in clients or []:
        latency = "  ".join(f"{name} {format_ns(client['response'][key])}" for name, key in SHOWN)
        own = client.get("calls") or {}
        text += (f"{client.get('name', 'client'):<13} answered {client['accounting']['received']}"
                 f"  {latency}  timeouts {own.get('timeouts', 0)}\n")
    return text


def section(result: Mapping[str, Any]) -> str:
    """The calls of a service point (and its clients when there are several)."""
    m = result["measurement"]
    service = result["config"].get("mode") == "service"
    return render_calls(m.get("calls"), result.get("per_topic") if service else None)
