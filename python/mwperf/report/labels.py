"""Names for points and groups of points in a report: only what tells them apart.

A sweep varies a few settings; a label made of every setting would bury those. A point's label
is the transport plus the settings that differ between the points shown (rate left out when
the plot's x axis is the rate); with several runs in one report each label starts with the
run's tag (R1, R2, ...), which the report's header maps to run ids — unless every run is a
single point (separate ``mwperf run`` invocations read as one collection).
"""

from collections.abc import Iterable, Sequence
from typing import Any

from ..durations import format_ns
from ..sizes import format_bytes
from ..show.table import format_rate
from .data import Point, Run

SETTINGS = ("transport", "mode", "rate", "payload", "topics", "executor", "busy_loop_ns",
            "reliability", "history", "depth", "durability", "opts", "pong", "busy_poll",
            "prevent_cpu_idle", "keep_awake", "in_flight", "clients", "reply_payload_bytes",
            "server_work_ns", "subscribers", "delivery", "secure")
"""the catalogue columns that define what a point measured (its configuration key); a
throughput point's offered rate is ``rate`` (0: as fast as possible), its delivery
``delivery`` (NULL for the other modes); ``secure`` the --secure mode (NULL: plain)"""
USUAL = {"topics": 1, "executor": "single", "busy_loop_ns": 0, "reliability": "reliable",
         "history": "keep-last", "depth": 10, "durability": "volatile", "opts": "[]",
         "pong": "agent", "busy_poll": False, "prevent_cpu_idle": False, "keep_awake": False,
         "in_flight": 1, "clients": 1, "server_work_ns": 0, "subscribers": 1}
"""mwperf's defaults: a one-line description leaves them out"""


def run_tags(runs: Sequence[Run]) -> dict[str, str]:
    """run id -> its tag in labels ('' for a single run, and when every run is a single point:
    then they are read as one collection, e.g. one line per transport across rates)."""
    if len(runs) == 1 or all(len(run.points) <= 1 for run in runs):
        return {run.run_id: "" for run in runs}
    return {run.run_id: f"R{i}" for i, run in enumerate(runs, start=1)}


def varying(points: Iterable[Point], leave_out: Sequence[str] = ()) -> list[str]:
    """The settings whose values differ between ``points`` (transport always)."""
    points = list(points)
    found = ["transport"]
    for name in SETTINGS[1:]:
        if name not in leave_out and len({_key(p.get(name)) for p in points}) > 1:
            found.append(name)
    return found


def setting_text(name: str, value: Any) -> str:
    """One setting as a label shows it."""
    if name == "secure":
        return f"secure {value}" if value else "plain"
    if value is None:
        return f"{name}=?"
    if name == "rate":
        return format_rate(float(value))
    if name == "busy_loop_ns":
        return f"busy {format_ns(value)}" if value else "no busy loop"
    if name == "topics":
        return f"{value} topic{'s' if value != 1 else ''}"
    if name == "depth":
        return f"depth {value}"
    if name in ("busy_poll", "prevent_cpu_idle", "keep_awake"):
        return name.replace("_", "-") if value else f"no {name.replace('_', '-')}"
    if name == "executor":
        return f"{value} executor"
    if name == "in_flight":
        return f"{value} in flight"
    if name == "clients":
        return f"{value} client{'s' if value != 1 else ''}"
    if name == "reply_payload_bytes":
        return f"reply {format_bytes(value)}"
    if name == "server_work_ns":
        return f"server work {format_ns(value)}" if value else "no server work"
    if name == "subscribers":
        return f"{value} subscriber{'s' if value != 1 else ''}"
    if name == "delivery":
        return f"{value} delivery"
    return str(value)


def label(point: Point, fields: Sequence[str], tag: str = "") -> str:
    """``point`` named by ``fields`` (and its run's ``tag``)."""
    text = " ".join(setting_text(name, point.get(name)) for name in fields)
    if point.get("repetition") and point.get("repetition") > 1:
        text += f" #{point.get('repetition')}"
    return f"{tag}: {text}" if tag else text


def describe(point: Point) -> str:
    """Every setting of ``point`` in one line (for hover read-outs and tables)."""
    bytes_ = point.get("payload_bytes")
    payload = f"{point.get('payload')} ({format_bytes(bytes_)})" if bytes_ is not None else ""
    parts = [point.get("transport") or "?", point.get("mode") or "?",
             format_rate(float(point.get("rate") or 0)), payload]
    for name in SETTINGS[4:]:
        value = point.get(name)
        if name == "delivery" and value == point.get("reliability"):
            continue  # said by the reliability (or its default) already
        if value is not None and value != "" and USUAL.get(name) != value:
            parts.append(setting_text(name, value))
    return " ".join(p for p in parts if p)


def _key(value: Any) -> str:
    return repr(value)
