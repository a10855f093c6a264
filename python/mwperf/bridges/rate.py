"""Achieved vs offered rate on a bridged path, and the warning when a bridge falls short.

zenoh-plugin-ros2dds#192: a 1 kHz topic arrived at ~50 Hz through the bridge, with nothing in
the bridge's output saying so. The messages that arrived intact at the measuring agent against
those the sender was asked to send (``--rate`` x topics x ``--duration``) show it, whether the
bridge dropped them or held the sender back.
"""

from typing import Any

SHORT_RATIO = 0.95
"""below this share of the offered rate a point is flagged"""


def achieved(cfg_rate: float, topics: int, measurement: dict[str, Any] | None,
             duration_s: float | None = None, count: int | None = None) -> dict[str, Any]:
    """{offered_msgs_per_s, achieved_msgs_per_s, delivered_ratio}: what the sender was asked to
    send in the measurement (``--rate`` x topics over ``--duration``, or ``--count`` per topic)
    against what arrived intact (after warm-up). Over the measurement's own length, not until
    the last reply: a path with a long round trip is not charged for its tail. None where
    unknown (rate 0: closed loop, nothing offered; no measurement)."""
    offered = cfg_rate * topics if cfg_rate > 0 else None
    received = None
    if measurement is not None:
        received = (measurement.get("accounting") or {}).get("received")
    if offered is None or received is None:
        return {"offered_msgs_per_s": offered, "achieved_msgs_per_s": None,
                "delivered_ratio": None}
    window_s = duration_s if duration_s else (count or 0) / cfg_rate
    planned = offered * window_s
    return {"offered_msgs_per_s": offered,
            "achieved_msgs_per_s": round(received / window_s, 3) if window_s else None,
            "delivered_ratio": round(received / planned, 4) if planned else None}


def short_warning(name: str, rates: dict[str, Any]) -> tuple[str, str, str] | None:
    """(code, message, hint) when the path delivered < 95 % of the offered rate."""
    ratio = rates.get("delivered_ratio")
    if ratio is None or ratio >= SHORT_RATIO:
        return None
    return ("bridge-rate-short",
            f"{name} delivered {rates['achieved_msgs_per_s']:g} msg/s of the "
            f"{rates['offered_msgs_per_s']:g} msg/s offered ({100 * ratio:.1f} %, below "
            f"{100 * SHORT_RATIO:.0f} %)",
            "the path cannot sustain this rate: compare with --bridge direct at the same rate, "
            "and see the bridge's CPU in 'daemons'")
