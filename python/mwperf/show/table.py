"""The human table: one row per point, then warnings with hints (pure: returns text).

Latency columns are the response time (from the intended send time, so stalls are not hidden).
A value that was not measured is shown as an em dash, never as zero. A p99.9 that rests on fewer
than 10 samples beyond it (count < 10 000) is marked ``*`` with one footnote under the table
(a weak p99, count < 1000, is the agent's ``too-few-samples`` warning instead).
"""

from dataclasses import asdict, dataclass
from collections.abc import Mapping
from typing import Any

from ..roles import ROLES
from ..durations import format_ns
from ..sizes import format_bytes

DASH = "\u2014"
LATENCY = (("p50", "p50_ns"), ("p90", "p90_ns"), ("p99", "p99_ns"), ("p99.9", "p999_ns"),
           ("max", "max_ns"))
P999_NEEDS = 10_000
"""samples a p99.9 needs to rest on >= 10 beyond it (crates/mwperf-core/src/warnings.rs)"""
THIN_MARK = "*"
THIN_NOTE = "* p99.9 rests on fewer than 10 samples beyond it (N < 10 000)"
"""the footnote under a table with a marked p99.9 (the report's too)"""
ACCOUNTING = (("sent", "sent"), ("received", "received"), ("lost", "lost"),
              ("dup", "duplicated"), ("reordered", "reordered"), ("corrupted", "corrupted"),
              ("foreign", "foreign"))


@dataclass(frozen=True)
class Row:
    """One point, as numbers (summary.json) that ``render`` turns into text."""

    transport: str
    mode: str
    rate: float
    payload: str
    payload_bytes: int | None
    count: int | None = None
    p50_ns: int | None = None
    p90_ns: int | None = None
    p99_ns: int | None = None
    p999_ns: int | None = None
    max_ns: int | None = None
    stddev_ns: float | None = None
    loss_pct: float | None = None
    msgs_per_s: float | None = None
    cpu_pct: float | None = None
    """CPU of the agents (user + sys) as a share of one core"""
    rss_kib: int | None = None
    """the agents' peak resident sets, summed"""
    daemon_cpu_pct: float | None = None
    """CPU of the daemons during the measurement; None when the transport needs none"""
    daemon_rss_kib: int | None = None
    first_message_ns: int | None = None
    """time to the first message: discovery + (round trip) the first echo"""
    wire_up_bytes_per_msg: float | None = None
    """--wire-bytes: IP bytes per measured message, sender -> server (first wire)"""
    wire_down_bytes_per_msg: float | None = None
    wire_overhead: float | None = None
    """wire bytes per message (sender -> server) / the message (payload + 56-byte header)"""
    wire_setup_bytes: int | None = None
    wire_idle_bytes_per_s: float | None = None
    sender_allocs_per_msg: float | None = None
    """--count-allocs: the sender's heap allocations per message in the steady state"""
    server_allocs_per_msg: float | None = None
    status: str = "failed"
    status_reason: str | None = None
    result: str | None = None
    """where the point's result directory is, when saved"""

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON-able data."""
        return asdict(self)


def row_from_result(result: dict[str, Any], location: str | None = None) -> Row:
    """Summarise a run-result; fields the run did not measure stay None."""
    config, m = result["config"], result["measurement"]
    numbers: dict[str, Any] = {}
    if m is not None:
        response, acc = m["response"], m["accounting"]
        numbers = {key: response[key] for _, key in LATENCY}
        numbers.update(count=response["count"], stddev_ns=response["stddev_ns"],
                       msgs_per_s=m["throughput"]["msgs_per_s"],
                       loss_pct=100 * acc["lost"] / acc["sent"] if acc["sent"] else None)
    agents = (len(ROLES[config["mode"]]) - (config.get("pong", "agent") != "agent")
              + config.get("subscribers", 1) - 1)
    daemons = result.get("daemons") or []
    return Row(transport=config["transport"], mode=config["mode"], rate=config["rate"],
               payload=config["payload"], payload_bytes=config["payload_bytes"],
               cpu_pct=cpu_percent(result["agents"], agents),
               rss_kib=(sum(a["process"]["max_rss_kib"] for a in result["agents"])
                        if len(result["agents"]) >= agents else None),
               daemon_cpu_pct=daemon_cpu_percent(daemons),
               daemon_rss_kib=_sum_or_none([d.get("peak_rss_kib") for d in daemons]),
               first_message_ns=first_message_ns(result.get("discovery")),
               **cost_fields(result),
               status=result["status"],
               status_reason=result["status_reason"], result=location, **numbers)


def cost_fields(result: dict[str, Any]) -> dict[str, Any]:
    """The row's cost columns from ``wire`` (--wire-bytes) and the agents' ``allocations``."""
    wire = result.get("wire") or {}
    first = next((k for k in wire.get("links") or [] if "up" in k), None)
    sender, server = ROLES[result["config"]["mode"]][1], ROLES[result["config"]["mode"]][0]
    allocs = {a.get("role"): (a.get("allocations") or {}).get("allocs_per_msg")
              for a in result.get("agents") or []}
    return {"wire_up_bytes_per_msg": wire.get("up_bytes_per_message"),
            "wire_down_bytes_per_msg": wire.get("down_bytes_per_message"),
            "wire_overhead": first["up"]["overhead"] if first else None,
            "wire_setup_bytes": wire.get("setup_bytes"),
            "wire_idle_bytes_per_s": wire.get("idle_bytes_per_s"),
            "sender_allocs_per_msg": allocs.get(sender), "server_allocs_per_msg": allocs.get(server)}


def cpu_percent(agents: list[dict[str, Any]], expected: int) -> float | None:
    """CPU time (user + sys) of all agents as a share of the longest agent's wall time.

    None unless all ``expected`` agents reported: a part of the CPU is not the CPU.
    """
    wall = max((a["process"]["wall_s"] for a in agents), default=0)
    if len(agents) < expected or not wall:
        return None
    busy = sum(a["process"]["cpu_user_s"] + a["process"]["cpu_sys_s"] for a in agents)
    return 100 * busy / wall


def daemon_cpu_percent(daemons: list[dict[str, Any]]) -> float | None:
    """The daemons' CPU time during the measurement as a share of its wall time."""
    wall = max((d.get("wall_s") or 0 for d in daemons), default=0)
    busy = _sum_or_none([d.get("cpu_user_s") for d in daemons] + [d.get("cpu_sys_s") for d in daemons])
    if not daemons or not wall or busy is None:
        return None
    return 100 * busy / wall


def first_message_ns(discovery: Mapping[str, Any] | None) -> int | None:
    """Opening the endpoints (a TLS handshake with a broker included), discovery, and (round
    trip) the first echo: how long until messages flow. Results written before the opening was
    measured have no ``open_ns``: theirs start at the open endpoint."""
    if not discovery:
        return None
    return ((discovery.get("open_ns") or 0) + discovery["matched_ns"]
            + (discovery.get("first_reply_ns") or 0))


def _sum_or_none(values: list[Any]) -> Any:
    return None if not values or any(v is None for v in values) else sum(values)


def render(rows: list[Row], markdown: bool = False) -> str:
    """The table as aligned text, or as a Markdown table; then the footnote on marked p99.9
    cells when there is one (after a blank line in Markdown)."""
    header = ["transport", "mode", "rate", "payload", "count",
              *(name for name, _ in LATENCY), "stddev", "loss", "msgs/s", "CPU", "RSS",
              "daemon CPU", "daemon RSS", "1st msg", "status"]
    cells = [header] + [_cells(row) for row in rows]
    marked = any(thin_p999(row.count, row.p999_ns) for row in rows)
    if markdown:
        lines = [_md_line(cells[0]), _md_line(["---"] * 4 + ["---:"] * (len(header) - 4))]
        return ("\n".join(lines + [_md_line(line) for line in cells[1:]]) + "\n"
                + (f"\n\\{THIN_NOTE}\n" if marked else ""))
    widths = [max(len(line[i]) for line in cells) for i in range(len(header))]
    return "".join("  ".join(cell.ljust(w) if i < 4 else cell.rjust(w)
                             for i, (cell, w) in enumerate(zip(line, widths))).rstrip() + "\n"
                   for line in cells) + (f"{THIN_NOTE}\n" if marked else "")


def thin_p999(count: int | None, p999_ns: float | None) -> bool:
    """A measured p99.9 on fewer than 10 samples beyond it (count < 10 000): marked ``*``."""
    return p999_ns is not None and count is not None and 0 < count < P999_NEEDS


def render_notes(rows: list[Row], warnings: list[tuple[str, dict[str, Any]]]) -> str:
    """Why points were not complete (one line per reason), then the warnings, one entry per
    code, with its hint.

    ``warnings`` pairs each warning with the point it came from; a code met at several points
    is shown once, with its message (if the same everywhere) or one example.
    """
    by_reason: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        if row.status != "complete" and row.status_reason:
            by_reason.setdefault((row.status, row.status_reason), []).append(row)
    out = [f"{status}: {label(found[0])}"
           + (f" (and {len(found) - 1} more point{'s' * (len(found) > 2)})" if len(found) > 1 else "")
           + f": {reason}\n" for (status, reason), found in by_reason.items()]
    by_code: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for where, warning in warnings:
        by_code.setdefault(warning["code"], []).append((where, warning))
    for code, found in by_code.items():
        where, first = found[0]
        points = {place for place, _ in found}
        if len(points) <= 1:
            out += [f"warning [{code}]: {w['message']}\n" for _, w in found]
        elif len({w["message"] for _, w in found}) == 1:
            out.append(f"warning [{code}] at {len(points)} points: {first['message']}\n")
        else:
            out.append(f"warning [{code}] at {len(points)} points, e.g. {where}: "
                       f"{first['message']}\n")
        if first.get("hint"):
            out.append(f"  hint: {first['hint']}\n")
    return "".join(out)


def label(row: Row) -> str:
    """A short name for a point: 'udp roundtrip 1000 Hz Array64'."""
    return f"{row.transport} {row.mode} {format_rate(row.rate)} {row.payload}"


def format_rate(rate: float) -> str:
    """1000 Hz, 0.5 Hz, or 'max' for rate 0 (as fast as possible)."""
    return "max" if rate == 0 else f"{rate:.10g} Hz"


def _cells(row: Row) -> list[str]:
    payload = row.payload
    if row.payload_bytes is not None and not payload[:1].isdigit():
        payload = f"{payload} ({format_bytes(row.payload_bytes)})"
    elif row.payload_bytes is not None:
        payload = format_bytes(row.payload_bytes)
    return [row.transport, row.mode, format_rate(row.rate), payload,
            DASH if row.count is None else str(row.count),
            *(format_ns(getattr(row, key))
              + THIN_MARK * (key == "p999_ns" and thin_p999(row.count, row.p999_ns))
              for _, key in LATENCY), format_ns(row.stddev_ns),
            DASH if row.loss_pct is None else f"{row.loss_pct:.2f}%",
            DASH if row.msgs_per_s is None else f"{row.msgs_per_s:,.0f}",
            _percent(row.cpu_pct), kib(row.rss_kib), _percent(row.daemon_cpu_pct),
            kib(row.daemon_rss_kib), format_ns(row.first_message_ns), row.status]


def _percent(value: float | None) -> str:
    return DASH if value is None else f"{value:.0f}%"


def kib(value: int | None) -> str:
    return DASH if value is None else format_bytes(value * 1024)


def _md_line(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"
