"""A throughput point for people: what ``mwperf run`` and ``mwperf show`` print under the
latency table (delivered and accepted rate, loss, the sender's blocked time, CPU per message
and per MB on each side)."""

from collections.abc import Mapping
from typing import Any

from ..durations import format_ns


def rate_text(bytes_per_s: float) -> str:
    """Bytes per second in decimal units, as throughput tools print them: 1.21 GB/s, 950 MB/s."""
    for size, unit in ((1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s")):
        if bytes_per_s >= size:
            return f"{bytes_per_s / size:.3g} {unit}"
    return f"{bytes_per_s:.3g} B/s"


def render_throughput(m: dict[str, Any] | None) -> str:
    """Three lines: delivered/sent/loss; the sender's calls; each side's CPU. Empty for a
    measurement that is not a throughput one."""
    tp = (m or {}).get("throughput") or {}
    if "delivery" not in tp:
        return ""
    sent = f"  sent {tp['sent_per_s']:,.0f} msg/s" if tp.get("sent_per_s") is not None else ""
    offered = (f"  offered {tp['offered_per_s']:,.0f} msg/s" if tp.get("offered_per_s")
               else "  offered max")
    loss = f"  loss {tp['loss_pct']:.2f}%" if tp.get("loss_pct") is not None else ""
    wire = (f"  wire {rate_text(tp['wire_bytes_per_s'])}"
            if tp.get("wire_bytes_per_s") is not None else "")
    subs = f"  {tp['subscribers']} subscribers" if tp.get("subscribers", 1) > 1 else ""
    text = (f"throughput    delivered {tp['msgs_per_s']:,.0f} msg/s  "
            f"{rate_text(tp['payload_bytes_per_s'])} payload{wire}{sent}{offered}{loss}  "
            f"{tp['delivery']}{subs}\n")
    s = tp.get("sender")
    if s and s["sending_s"] > 0:
        calls = "  ".join(f"{name} {format_ns(s[key])}" for name, key in
                          (("p50", "send_p50_ns"), ("p99", "send_p99_ns"), ("max", "send_max_ns"))
                          if s.get(key) is not None)
        held = (f"  held {s['holds']} times >= 100 ms by the middleware (longest "
                f"{format_ns(s['longest_hold_ns'])}; it paces, the publisher kept offering)"
                if s.get("holds") else "")
        text += (f"sender        in send {100 * s['in_send_s'] / s['sending_s']:.1f}%  blocked "
                 f"{100 * s['blocked_s'] / s['sending_s']:.1f}% (flow control)  refused "
                 f"{s['refused']}  send call {calls}{held}\n")
    seconds = tp.get("per_second")
    if seconds:
        text += (f"per second    delivered min {seconds['min']:,}  median {seconds['median']:,}  "
                 f"max {seconds['max']:,} (whole seconds)\n")
    cpu = tp.get("cpu") or {}
    sides = [f"{side} {c['per_msg_us']:.3g} µs/msg {c['per_mb_ms']:.3g} ms/MB"
             for side in ("pub", "sub") if (c := cpu.get(side)) and c.get("per_msg_us") is not None
             and c.get("per_mb_ms") is not None]
    every = tp.get("checked_every")
    checked = (f"  payload checked in full every {_ordinal(every)} message (the rest at both ends)"
               if every and every > 1 else "")
    if sides or checked:
        text += f"cpu           {'   '.join(sides)}{checked}\n"
    return text


def section(result: Mapping[str, Any]) -> str:
    """A throughput point's rates, blocked time and CPU."""
    return render_throughput(result["measurement"])


def _ordinal(n: int) -> str:
    """2nd, 3rd, 16th, 21st, 256th."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
