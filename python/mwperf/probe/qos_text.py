"""A DDS endpoint's QoS in one short word: ``reliable/volatile/keep-last:10``, then only what
differs from the ROS 2 defaults (a deadline, a lifespan, a finite liveliness lease, manual
liveliness, exclusive ownership, partitions)."""

from typing import Any

from ..durations import format_ns


def qos_text(qos: dict[str, Any]) -> str:
    """``reliable/volatile/keep-last:10`` (+ ``, deadline 100 ms`` ... where set)."""
    if not qos:
        return "?"
    history = str(qos.get("history", "?"))
    if history == "keep-last" and qos.get("depth") is not None:
        history += f":{qos['depth']}"
    words = [f"{qos.get('reliability', '?')}/{qos.get('durability', '?')}/{history}"]
    if qos.get("deadline_ns") is not None:
        words.append(f"deadline {format_ns(qos['deadline_ns'])}")
    if qos.get("lifespan_ns") is not None:
        words.append(f"lifespan {format_ns(qos['lifespan_ns'])}")
    if qos.get("liveliness") not in (None, "automatic"):
        words.append(f"liveliness {qos['liveliness']}")
    if qos.get("lease_ns") is not None:
        words.append(f"lease {format_ns(qos['lease_ns'])}")
    if qos.get("ownership") not in (None, "shared"):
        words.append(str(qos["ownership"]))
    if qos.get("partitions"):
        words.append("partitions " + ",".join(str(p) for p in qos["partitions"]))
    return ", ".join(words)
