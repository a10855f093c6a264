"""What a throughput point's result says beyond its latency (docs/throughput.md): the
subscribers' delivered rate (already in ``measurement.throughput``, summed over subscribers)
completed from both sides' ``throughput`` reports — the delivery, the offered and the accepted
rate, the loss, the publisher's send calls (time inside them, the part flow control held back,
refusals), each side's CPU per message and per MB over its steady window, the payload sampling,
the bytes on the wire per second where counted — and the per-second series' ``sent`` column
from the publisher (``received`` is the subscribers')."""

from collections.abc import Mapping, Sequence
from typing import Any

MB = 1e6
UNSTEADY_MIN_SECONDS = 3
"""whole seconds a stream needs before a slow one is called unsteady (the first may still ramp)"""


def side_cpu(cpu_s: float, messages: int, payload_bytes: int) -> dict[str, float | None]:
    """CPU seconds over a steady window, per message (us) and per MB of payload (ms)."""
    volume = messages * payload_bytes / MB
    return {"cpu_s": round(cpu_s, 6),
            "per_msg_us": round(cpu_s / messages * 1e6, 4) if messages else None,
            "per_mb_ms": round(cpu_s / volume * 1e3, 4) if volume else None}


def complete(measurement: dict[str, Any], config: Mapping[str, Any], delivery: str,
             pub: Mapping[str, Any] | None, subs: Sequence[Mapping[str, Any]],
             wire: Mapping[str, Any] | None = None) -> None:
    """Fill ``measurement['throughput']`` and the series' ``sent`` in place."""
    tp = measurement["throughput"]
    acc = measurement["accounting"]
    payload = int(measurement["payload_bytes"])
    pub_side = (pub or {}).get("throughput") or None
    sub_sides = [s["throughput"] for s in subs if s.get("throughput")]
    subscribers = int(config.get("subscribers") or 1)
    expected = acc["sent"]  # with N subscribers the pooled count: each one's sent, summed
    tp["delivery"] = delivery
    tp["offered_per_s"] = config["rate"] or None
    tp["subscribers"] = subscribers
    tp["sent_per_s"] = (pub_side["messages"] / pub_side["steady_wall_s"]
                        if pub_side and pub_side["steady_wall_s"] > 0 else None)
    tp["loss_pct"] = round(100 * acc["lost"] / expected, 4) if expected else None
    checked = [s["checked_every"] for s in sub_sides if s.get("checked_every")]
    tp["checked_every"] = max(checked) if checked else None
    sending = (pub_side or {}).get("sending")
    tp["sender"] = None if not sending or not pub_side else {
        "sending_s": pub_side["steady_wall_s"],
        **{k: sending[k] for k in ("in_send_s", "blocked_s", "refused", "send_p10_ns",
                                   "send_p50_ns", "send_p99_ns", "send_max_ns")},
        **{k: sending[k] for k in ("holds", "longest_hold_ns") if k in sending}}
    delivered = sum(int(s["messages"]) for s in sub_sides)
    tp["cpu"] = {
        "pub": side_cpu(pub_side["steady_cpu_s"], int(pub_side["messages"]), payload)
        if pub_side else None,
        "sub": side_cpu(sum(s["steady_cpu_s"] for s in sub_sides), delivered, payload)
        if sub_sides else None}
    tp["wire_bytes_per_s"] = wire_rate(wire)
    series = (sending or {}).get("series") or []
    for point in measurement.get("series") or []:
        t = int(point["t_s"])
        point["sent"] = series[t] if t < len(series) else 0
    tp["per_second"] = per_second(measurement.get("series") or [])


def per_second(series: Sequence[Mapping[str, Any]]) -> dict[str, int] | None:
    """Messages delivered in the slowest, the median and the fastest whole second (the last
    row of the series is a partial second and left out); None under two whole seconds."""
    whole = sorted(int(p["received"]) for p in series[:-1])
    if len(whole) < 2:
        return None
    return {"whole": len(whole), "min": whole[0], "median": whole[len(whole) // 2],
            "max": whole[-1]}


def unsteady(tp: Mapping[str, Any]) -> str | None:
    """Why the delivered rate was not steady (a second below half the median), or None."""
    seconds = tp.get("per_second")
    if not seconds or seconds.get("whole", 0) < UNSTEADY_MIN_SECONDS or \
            seconds["min"] >= seconds["median"] / 2:
        return None
    return (f"the delivered rate was not steady: {seconds['min']} messages in the slowest whole "
            f"second against a median of {seconds['median']} (measurement.series has each second)")


def wire_rate(wire: Mapping[str, Any] | None) -> float | None:
    """Bytes on the wire per second in the steady state, every link both ways, where the
    emulated links counted them (``--wire-bytes``); None elsewhere."""
    total, seconds = 0, 0.0
    for link in (wire or {}).get("links") or []:
        for way in ("up", "down"):
            steady = ((link.get(way) or {}).get("phases") or {}).get("steady")
            if steady:
                total += steady["bytes"]
                seconds = max(seconds, float(steady.get("seconds") or 0))
    return total / seconds if seconds else None
