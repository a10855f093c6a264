"""Achieved vs offered rate on a bridged path, and the warning when a bridge falls short.

zenoh-plugin-ros2dds#192: a 1 kHz topic arrived at ~50 Hz through the bridge, with nothing in
the bridge's output saying so. The measuring agent's throughput (messages that arrived intact,
per second of the measurement) against the offered rate (``--rate`` x topics) shows it.
"""

from typing import Any

SHORT_RATIO = 0.95
"""below this share of the offered rate a point is flagged"""


def achieved(cfg_rate: float, topics: int, measurement: dict[str, Any] | None
             ) -> dict[str, Any]:
    """{offered_msgs_per_s, achieved_msgs_per_s, delivered_ratio}; None where unknown (rate 0:
    nothing was offered, closed loop; no measurement)."""
    offered = cfg_rate * topics if cfg_rate > 0 else None
    got = None
    if measurement is not None:
        got = measurement.get("throughput", {}).get("msgs_per_s")
    ratio = round(got / offered, 4) if offered and got is not None else None
    return {"offered_msgs_per_s": offered,
            "achieved_msgs_per_s": None if got is None else round(got, 3),
            "delivered_ratio": ratio}


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
