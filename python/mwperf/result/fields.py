"""Where each figure of a v2 stream ``measurement`` lives in a v3 flow, the one table both
directions read: ``upgrade.py`` (v2 -> v3) and ``stream.py`` (v3 -> the stream view).

A *flow* is what v3 measures messages over: an edge (one topic, publisher -> subscriber), a
chain (a round trip: ``ping`` then ``pong``), a call edge (client -> server) or a pool of several
of them (a v2 result's measurement over N topics or N subscribers). docs/architecture.md §2.3.
"""

from typing import Any

FLOWS = ("edges", "chains", "calls")
"""the v3 result's lists of flows"""

LATENCIES = {
    "edges": ("age", "latency"),
    "chains": ("end_to_end", "end_to_end_sent"),
    "calls": ("latency", "call_latency"),
}
"""flow list -> (its latency from the intended time, its latency from the actual send): a v2
measurement's ``response`` and ``service``"""

RENAMED = {"jitter_rfc3550_ns": "jitter_ns"}
"""v2 measurement key -> v3 flow key, where the name changes"""

ACCOUNTING = ("sent", "received", "lost", "duplicated", "reordered", "corrupted", "foreign",
              "malformed", "warmup_sent", "warmup_received", "undelivered")
"""v2 ``accounting``'s keys: flat fields of a v3 flow, as a graph edge has them (undelivered
only where a reliable stream was cut off)"""

COPIED = ("clock", "payload_bytes", "message_bytes", "throughput", "schedule", "series",
          "samples_file", "clock_sync", "calls")
"""v2 measurement keys a v3 flow keeps under the same name"""

DERIVED = ("mode", "latency_kind")
"""v2 measurement keys the run's kind says (``LATENCY_KIND``), not stored in a flow"""

LATENCY_KIND = {"roundtrip": "rtt", "oneway": "one-way", "throughput": "one-way",
                "service": "call"}
"""a stream kind -> its measurement's latency_kind"""

TOPIC_KEYS = {"topic": "topic_index", "address": "address"}
"""a v2 per_topic entry's own keys -> v3 flow keys (its ``name`` names the flow)"""


def to_flow(measurement: dict[str, Any], flows: str) -> dict[str, Any]:
    """The v3 flow fields of a v2 ``measurement`` (or per-topic entry) in list ``flows``."""
    intended, sent = LATENCIES[flows]
    flow: dict[str, Any] = {intended: measurement["response"], sent: measurement["service"]}
    flow.update({key: measurement["accounting"][key] for key in ACCOUNTING
                 if key in measurement["accounting"]})
    late = measurement["late"]
    flow["late"] = None if late is None else late["count"]
    if late is not None:
        flow["late_ns"], flow["late_fraction"] = late["threshold_ns"], late["fraction"]
    flow.update({RENAMED.get(key, key): measurement[key]
                 for key in (*COPIED, *RENAMED) if key in measurement})
    flow.update({new: measurement[old] for old, new in TOPIC_KEYS.items() if old in measurement})
    return flow


def from_flow(flow: dict[str, Any], flows: str, kind: str) -> dict[str, Any]:
    """The v2 ``measurement`` a v3 flow of list ``flows`` in a run of ``kind`` gives back."""
    intended, sent = LATENCIES[flows]
    back = {new: old for old, new in RENAMED.items()}
    late = None if flow.get("late") is None else {
        "threshold_ns": flow["late_ns"], "count": flow["late"], "fraction": flow["late_fraction"]}
    measurement: dict[str, Any] = {
        "mode": kind, "latency_kind": LATENCY_KIND[kind],
        "response": flow[intended], "service": flow[sent], "late": late,
        "accounting": {key: flow[key] for key in ACCOUNTING if key in flow}}
    measurement.update({back.get(key, key): flow[key]
                        for key in (*COPIED, *back) if key in flow})
    measurement.update({old: flow[new] for old, new in TOPIC_KEYS.items() if new in flow})
    return measurement
