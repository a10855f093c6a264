"""The human table: one row per point, then warnings with hints (pure: returns text).

Latency columns are the response time (from the intended send time, so stalls are not hidden).
A value that was not measured is shown as an em dash, never as zero. A p99.9 that rests on fewer
than 10 samples beyond it (count < 10 000) is marked ``*`` with one footnote under the table
(a weak p99, count < 1000, is the agent's ``too-few-samples`` warning instead).
"""

from dataclasses import asdict, dataclass
from collections.abc import Mapping
from typing import Any

from .roles import ROLES
from .calls_show import render_calls
from .throughput_show import render_throughput
from .layers_show import render_layers
from .durations import format_ns
from .emulation.summary import render_link
from .emulation.cpu import summary_lines
from .sizes import format_bytes
from .topicnames import label as topic_label, name_and_address

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
    """Discovery plus (round trip) the first echo: how long until messages flow."""
    if not discovery:
        return None
    return discovery["matched_ns"] + (discovery.get("first_reply_ns") or 0)


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


def render_details(result: dict[str, Any]) -> str:
    """For a single run: service-time percentiles and the message accounting."""
    m = result["measurement"]
    if m is None:
        return ""
    service = "  ".join(f"{name} {format_ns(m['service'][key])}" + THIN_MARK * (
        key == "p999_ns" and thin_p999(m["service"]["count"], m["service"][key]))
        for name, key in LATENCY)
    accounting = "  ".join(f"{name} {m['accounting'][key]}" for name, key in ACCOUNTING)
    text = f"service time  {service}\naccounting    {accounting}\n"
    text += render_calls(m.get("calls"), result.get("per_topic")
                         if result["config"].get("mode") == "service" else None)
    text += render_throughput(m)
    text += render_layers(result.get("layers"))
    text += render_workload(result) + render_subscribers(result)
    discovery = result.get("discovery")
    if discovery:
        reply = discovery.get("first_reply_ns")
        text += (f"discovery     matched {format_ns(discovery['matched_ns'])}"
                 + (f"  first echo after {format_ns(reply)}" if reply is not None else "")
                 + f"  probes {discovery['probes']}\n")
    text += render_clock_sync(m.get("clock_sync"))
    text += render_allocations(result.get("agents") or [])
    text += render_wire(result.get("wire"))
    text += render_profile(result.get("profile"))
    text += render_alloc_sites(result.get("alloc_sites"))
    for line in summary_lines(result.get("cpu")):
        text += f"cpu           {line}\n"
    for daemon in result.get("daemons") or []:
        cpu = [daemon.get("cpu_user_s"), daemon.get("cpu_sys_s")]
        usage = (f"CPU {cpu[0]:.2f} s user + {cpu[1]:.2f} s sys" if None not in cpu
                 else "CPU \u2014")
        rss = daemon.get("peak_rss_kib")
        text += (f"daemon        {daemon['name']} {daemon.get('version') or ''}".rstrip()
                 + f"  {usage}  peak RSS {_kib(rss)}\n")
    return text + render_bridge(result.get("bridge")) + render_link(result)


def render_bridge(bridge: dict[str, Any] | None) -> str:
    """With --bridge: one line, the path and the rate it delivered against the offered one."""
    if not bridge:
        return ""
    ratio = bridge.get("delivered_ratio")
    rate = (f"; delivered {bridge['achieved_msgs_per_s']:g} of {bridge['offered_msgs_per_s']:g} "
            f"msg/s offered ({100 * ratio:.1f} %)" if ratio is not None else "")
    start = f"; started in {bridge['start_s']:.2f} s" if bridge.get("start_s") is not None else ""
    return f"bridge        {bridge['name']}: {bridge['path']}{rate}{start}\n"


def render_allocations(agents: list[dict[str, Any]]) -> str:
    """With --count-allocs: one line, each agent's heap allocations per message in the steady
    state (whole process, C libraries included) and its peak live heap."""
    parts = []
    for agent in agents:
        a = agent.get("allocations")
        if not a:
            continue
        name = agent.get("name") or agent.get("role", "?")
        if a["allocs_per_msg"] is None:
            parts.append(f"{name} — ({a['steady_messages'] + 1} measured messages)")
            continue
        parts.append(f"{name} {a['allocs_per_msg']:.3f}/msg {a['bytes_per_msg']:.0f} B/msg "
                     f"(peak heap {format_bytes(a['peak_live_bytes'])})")
    return f"allocations   {'  '.join(parts)}\n" if parts else ""


ALLOC_SITES_SHOWN = 3


def render_alloc_sites(section: dict[str, Any] | None) -> str:
    """With --alloc-sites: per agent, its allocations per message in the steady state and the
    call sites that make them (the whole table in alloc-sites/<agent>.txt)."""
    if not section:
        return ""
    lines = []
    for proc in section["processes"]:
        if "error" in proc:
            lines.append(f"{proc['name']}: {proc['error']}")
            continue
        if proc["allocs_per_msg"] is None:
            lines.append(f"{proc['name']}: no steady state ({proc['total_allocs']} allocations "
                         "in the whole run)")
            continue
        busy = [s for s in proc["sites"] if s["steady_count"] > 0][:ALLOC_SITES_SHOWN]
        where = "; ".join(f"{s['per_msg']:.2f} {s['function'][:70]}" for s in busy)
        lines.append(f"{proc['name']} {proc['allocs_per_msg']:.2f}/msg"
                     + (f": {where}" if where else " (none per message)"))
    return "".join(f"{'alloc sites' if i == 0 else '':<14}{line}\n"
                   for i, line in enumerate(lines)) + ("" if not lines else
                                                       f"{'':<14}(tables in alloc-sites/)\n")


def render_profile(profile: dict[str, Any] | None) -> str:
    """With --profile: per process, its samples and the function with the most of its own."""
    if not profile:
        return ""
    parts = []
    for proc in profile["processes"]:
        top = proc["top"][0] if proc["top"] else None
        parts.append(f"{proc['name']} {proc['samples']} samples"
                     + (f", top {top['function'][:60]} {top['self_pct']:.0f} %" if top else ""))
    return "profile       " + "; ".join(parts) + "  (flame graphs in profile/)\n"


def render_wire(wire: dict[str, Any] | None) -> str:
    """With --wire-bytes: the first wire's bytes per message each way (IP bytes, headers
    included) and overhead, what setup cost, and what an idle session costs per second."""
    if not wire:
        return ""
    if "up_bytes_per_message" not in wire:
        return f"wire          {wire.get('status', 'not counted')}\n"
    link = next(k for k in wire["links"] if "up" in k)
    up, down = link["up"], link["down"]

    def way(d: dict[str, Any]) -> str:
        if d["bytes_per_message"] is None:
            return "—"
        return (f"{d['bytes_per_message']:g} B/msg ({d['packets_per_message']:g} pkt, "
                f"×{d['overhead']:.2f})")
    idle = wire["idle_bytes_per_s"]
    text = (f"wire          {link['from']}→{link['to']} {way(up)}  "
            f"{link['to']}→{link['from']} {way(down)}  setup {format_bytes(wire['setup_bytes'])}"
            f"  idle {'—' if idle is None else format_bytes(idle) + '/s'}\n")
    if any(k.get("truncated") for k in wire["links"]):
        text += "wire          (the packet log ran out of room: the figures are short)\n"
    return text


def render_clock_sync(cs: dict[str, Any] | None) -> str:
    """With --clock-sync: the pub clock's offset and drift the one-way figures were corrected by,
    and their error bound."""
    if not cs:
        return ""
    if cs["error_bound_ns"] is None:
        return (f"clock sync    {cs['status']}: {cs['probes_answered']} of {cs['probes_sent']} "
                f"probes answered, latencies NOT corrected\n")
    return (f"clock sync    offset {cs['offset_ns'] / 1e9:+.9f} s  drift {cs['drift_ppm']:+.2f} ppm"
            f"  bound \u00b1{format_ns(cs['error_bound_ns'])}  (min probe RTT "
            f"{format_ns(cs['min_rtt_ns'])}, {cs['probes_used']} of {cs['probes_answered']} "
            f"probes used)\n")


def render_workload(result: dict[str, Any]) -> str:
    """With several topics or a callback busy-loop: the workload, then one line per topic."""
    config = result["config"]
    topics, busy = config.get("topics", 1), config.get("busy_loop_ns", 0)
    if topics == 1 and not busy:
        return ""
    executor = f", {config.get('executor', 'single')} executor" if topics > 1 else ""
    text = (f"workload      {topics} topic{'s' * (topics > 1)}{executor}, "
            f"callback busy-loop {format_ns(busy) if busy else 'none'}\n")
    named = [(t, *name_and_address(result, t.get("topic", i), t))
             for i, t in enumerate(result.get("per_topic") or [])]
    heads = [topic_label(name, topic.get("topic", i)) for i, (topic, name, _) in enumerate(named)]
    width = max((len(head) for head in heads), default=0)
    for head, (topic, _, address) in zip(heads, named):
        text += _topic_line(topic, head.ljust(width), address)
    return text


def render_subscribers(result: dict[str, Any]) -> str:
    """With --subscribers N: one line per subscriber (the table row pools them all)."""
    text = ""
    for entry in result.get("per_subscriber") or []:
        measured = entry["measurement"]
        if measured is None:
            text += f"subscriber {entry['subscriber']:<2} {entry['status']}: {entry['status_reason']}\n"
            continue
        response, acc = measured["response"], measured["accounting"]
        latency = "  ".join(f"{name} {format_ns(response[key])}" for name, key in LATENCY)
        loss = f"{100 * acc['lost'] / acc['sent']:.2f}%" if acc["sent"] else DASH
        text += (f"subscriber {entry['subscriber']:<2} count {response['count']}  {latency}  "
                 f"loss {loss}  ({entry['name']}, {entry['status']})\n")
    return text


def _topic_line(topic: dict[str, Any], head: str, address: str | None) -> str:
    """``topic 1 /scan  count ...  loss ...  (address)``: the topic's name, its numbers, where."""
    response, acc = topic["response"], topic["accounting"]
    latency = "  ".join(f"{name} {format_ns(response[key])}" for name, key in LATENCY)
    loss = f"{100 * acc['lost'] / acc['sent']:.2f}%" if acc["sent"] else DASH
    return (f"{head}  count {response['count']}  {latency}  loss {loss}"
            + (f"  ({address})" if address else "") + "\n")


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
            _percent(row.cpu_pct), _kib(row.rss_kib), _percent(row.daemon_cpu_pct),
            _kib(row.daemon_rss_kib), format_ns(row.first_message_ns), row.status]


def _percent(value: float | None) -> str:
    return DASH if value is None else f"{value:.0f}%"


def _kib(value: int | None) -> str:
    return DASH if value is None else format_bytes(value * 1024)


def _md_line(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"
