"""A stream point's details: the lines ``mwperf run`` prints under a single point's table row
and ``mwperf show`` prints again. Each is a section (show/__init__.py): ``(result) -> str``,
'' when the result has none of it; ``SECTIONS`` is their order."""

from collections.abc import Callable, Mapping
from typing import Any

from ..durations import format_ns
from ..emulation.cpu import summary_lines
from ..emulation.summary import render_link
from ..sizes import format_bytes
from ..topicnames import label as topic_label, name_and_address
from . import calls, layers, throughput
from .table import ACCOUNTING, DASH, LATENCY, THIN_MARK, kib, thin_p999

Section = Callable[[Mapping[str, Any]], str]
"""one part of a result as whole lines of text; '' when the result has none of it"""


def measured(result: Mapping[str, Any]) -> str:
    """The service-time percentiles and the message accounting."""
    m = result["measurement"]
    service = "  ".join(f"{name} {format_ns(m['service'][key])}" + THIN_MARK * (
        key == "p999_ns" and thin_p999(m["service"]["count"], m["service"][key]))
        for name, key in LATENCY)
    accounting = "  ".join(f"{name} {m['accounting'][key]}" for name, key in ACCOUNTING)
    if m["accounting"].get("undelivered"):  # a reliable stream cut off (merge.py)
        accounting += f"  undelivered {m['accounting']['undelivered']}"
    return f"service time  {service}\naccounting    {accounting}\n"


def discovery(result: Mapping[str, Any]) -> str:
    """How long opening the endpoints took, when the peer matched after that, and (round trip)
    when its first echo came."""
    found = result.get("discovery")
    if not found:
        return ""
    reply, opening = found.get("first_reply_ns"), found.get("open_ns")
    return (f"discovery     matched {format_ns(found['matched_ns'])}"
            + (f"  first echo after {format_ns(reply)}" if reply is not None else "")
            + f"  probes {found['probes']}"
            + (f"  (opening took {format_ns(opening)} before)" if opening is not None else "")
            + "\n")


def security(result: Mapping[str, Any]) -> str:
    """With --secure: the DDS-Security mode the point ran under, TLS, or the WireGuard tunnel
    with its handshakes (security/modes.py)."""
    mode = (result.get("config") or {}).get("secure")
    if not mode:
        return ""
    from ..security.modes import PROTECTION, TLS_MODES, TUNNEL
    if mode in TLS_MODES:
        return (f"security      {'mutual ' if mode == 'mtls' else ''}TLS: the middleware's own "
                f"TLS links, {'every side' if mode == 'mtls' else 'the listening side'} "
                "authenticated by a certificate of a CA made for the run\n")
    if mode == TUNNEL:
        tunnel = (result.get("link") or {}).get("tunnel") or {}
        shakes = [h["ms"] for h in tunnel.get("handshakes") or [] if h.get("ms") is not None]
        missing = len(tunnel.get("handshakes") or []) - len(shakes)
        return (f"security      WireGuard tunnel between the hosts ({tunnel.get('program')}, "
                f"MTU {tunnel.get('mtu')}, keys made for the run): "
                + (f"handshake {max(shakes):.2f} ms" + (" (slowest pair)" if len(shakes) > 1
                                                        else "") if shakes else "")
                + (f"{', ' if shakes else ''}{missing} handshake(s) not made before the start"
                   if missing else "") + "\n")
    return (f"security      DDS-Security {mode}: authenticated, access-controlled, rtps/"
            f"metadata/data protection {PROTECTION[mode]} (a PKI made for the run)\n")


def cpu(result: Mapping[str, Any]) -> str:
    """With --cpu-quota or CPU placement: what each process was given and took."""
    return "".join(f"cpu           {line}\n" for line in summary_lines(result.get("cpu")))


def daemons(result: Mapping[str, Any]) -> str:
    """One line per daemon (broker, router, master): its CPU and peak memory."""
    text = ""
    for daemon in result.get("daemons") or []:
        used = [daemon.get("cpu_user_s"), daemon.get("cpu_sys_s")]
        usage = (f"CPU {used[0]:.2f} s user + {used[1]:.2f} s sys" if None not in used
                 else "CPU \u2014")
        text += (f"daemon        {daemon['name']} {daemon.get('version') or ''}".rstrip()
                 + f"  {usage}  peak RSS {kib(daemon.get('peak_rss_kib'))}\n")
    return text


def bridge(result: Mapping[str, Any]) -> str:
    """With --bridge: one line, the path and the rate it delivered against the offered one."""
    bridge = result.get("bridge")
    if not bridge:
        return ""
    ratio = bridge.get("delivered_ratio")
    rate = (f"; delivered {bridge['achieved_msgs_per_s']:g} of {bridge['offered_msgs_per_s']:g} "
            f"msg/s offered ({100 * ratio:.1f} %)" if ratio is not None else "")
    start = f"; started in {bridge['start_s']:.2f} s" if bridge.get("start_s") is not None else ""
    crossing = bridge.get("crossing")
    named = ", ".join(" ".join((e["topic"], e["from"], "->", e["to"])) for e in
                      (crossing or [])[:3]) + (", ..." if len(crossing or []) > 3 else "")
    across = (f" over the {len(crossing)} edge{'s' if len(crossing) != 1 else ''} crossing it "
              f"({named})" if crossing else "")
    return f"bridge        {bridge['name']}: {bridge['path']}{rate}{across}{start}\n"


def allocations(result: Mapping[str, Any]) -> str:
    """With --count-allocs: one line, each agent's heap allocations per message in the steady
    state (whole process, C libraries included) and its peak live heap."""
    parts = []
    for agent in result.get("agents") or []:
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


def alloc_sites(result: Mapping[str, Any]) -> str:
    """With --alloc-sites: per agent, its allocations per message in the steady state and the
    call sites that make them (the whole table in alloc-sites/<agent>.txt)."""
    section = result.get("alloc_sites")
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


def profile(result: Mapping[str, Any]) -> str:
    """With --profile: per process, its samples and the function with the most of its own."""
    profile = result.get("profile")
    if not profile:
        return ""
    parts = []
    for proc in profile["processes"]:
        top = proc["top"][0] if proc["top"] else None
        parts.append(f"{proc['name']} {proc['samples']} samples"
                     + (f", top {top['function'][:60]} {top['self_pct']:.0f} %" if top else ""))
    return "profile       " + "; ".join(parts) + "  (flame graphs in profile/)\n"


def wire(result: Mapping[str, Any]) -> str:
    """With --wire-bytes: the first wire's bytes per message each way (IP bytes, headers
    included) and overhead, what setup cost, and what an idle session costs per second."""
    wire = result.get("wire")
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


def clock_sync(result: Mapping[str, Any]) -> str:
    """With --clock-sync: the pub clock's offset and drift the one-way figures were corrected by,
    and their error bound."""
    cs = (result.get("measurement") or {}).get("clock_sync")
    if not cs:
        return ""
    if cs["error_bound_ns"] is None:
        return (f"clock sync    {cs['status']}: {cs['probes_answered']} of {cs['probes_sent']} "
                f"probes answered, latencies NOT corrected\n")
    return (f"clock sync    offset {cs['offset_ns'] / 1e9:+.9f} s  drift {cs['drift_ppm']:+.2f} ppm"
            f"  bound \u00b1{format_ns(cs['error_bound_ns'])}  (min probe RTT "
            f"{format_ns(cs['min_rtt_ns'])}, {cs['probes_used']} of {cs['probes_answered']} "
            f"probes used)\n")


def workload(result: Mapping[str, Any]) -> str:
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


def subscribers(result: Mapping[str, Any]) -> str:
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
        held = f"  undelivered {acc['undelivered']}" if acc.get("undelivered") else ""
        text += (f"subscriber {entry['subscriber']:<2} count {response['count']}  {latency}  "
                 f"loss {loss}{held}  ({entry['name']}, {entry['status']})\n")
    return text


def _topic_line(topic: dict[str, Any], head: str, address: str | None) -> str:
    """``topic 1 /scan  count ...  loss ...  (address)``: the topic's name, its numbers, where."""
    response, acc = topic["response"], topic["accounting"]
    latency = "  ".join(f"{name} {format_ns(response[key])}" for name, key in LATENCY)
    loss = f"{100 * acc['lost'] / acc['sent']:.2f}%" if acc["sent"] else DASH
    return (f"{head}  count {response['count']}  {latency}  loss {loss}"
            + (f"  ({address})" if address else "") + "\n")


SECTIONS: tuple[Section, ...] = (
    measured, calls.section, throughput.section, layers.section, workload, subscribers,
    discovery, security, clock_sync, allocations, wire, profile, alloc_sites, cpu, daemons, bridge,
    render_link)
"""a stream point's details, in the order they are printed"""


def render_details(result: Mapping[str, Any]) -> str:
    """Every section of a measured point; nothing for a point that measured nothing."""
    if result["measurement"] is None:
        return ""
    return "".join(section(result) for section in SECTIONS)
