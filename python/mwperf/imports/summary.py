"""What an importer extracts from a foreign log, and how it becomes an mwperf run-result.

Foreign tools report less than mwperf: typically count, min, mean, max and a variance per
interval, no percentiles and no histogram. The run-result keeps exactly that: the percentile
fields and the histogram stay empty (null), never invented, so the report draws what exists
and compare says 'not measured on both sides' where it must.
"""

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from .. import __version__
from ..config import PointConfig
from ..schema import RESULT_VERSION

TOOL = {"name": "mwperf-import", "version": __version__, "git_rev": "import"}


@dataclass
class Interval:
    """One interval of a foreign log (performance_test writes one per second)."""

    received: int
    sent: int | None = None
    lost: int | None = None
    min_ns: float | None = None
    max_ns: float | None = None
    mean_ns: float | None = None
    m2_ns2: float | None = None
    """sum of squared deviations from the mean (variance × n)"""


@dataclass
class Imported:
    """One imported measurement: its configuration, intervals or totals, and resources."""

    source: dict[str, Any]
    """tool, format and file it came from"""
    config: dict[str, Any]
    intervals: list[Interval]
    topics: list[tuple[str, Interval]] = field(default_factory=list)
    cpu_s: float | None = None
    max_rss_kib: int | None = None
    wall_s: float | None = None
    host: dict[str, Any] = field(default_factory=dict)


def config(**given: Any) -> dict[str, Any]:
    """A point configuration (PointConfig's fields) with what the foreign log said."""
    base = PointConfig(transport="unknown", mode="oneway", rate=0.0, payload="unknown",
                       payload_bytes=0, duration_ns=None, count=None, warmup_ns=0,
                       peer_timeout_ns=0).to_dict()
    base.update({k: v for k, v in given.items() if v is not None})
    return base


def pooled(intervals: list[Interval]) -> Interval:
    """The intervals combined (Chan et al.'s parallel variance formula for M2)."""
    with_data = [i for i in intervals if i.received and i.mean_ns is not None]
    total = Interval(sum(i.received for i in intervals),
                     _sum([i.sent for i in intervals]), _sum([i.lost for i in intervals]))
    if not with_data:
        return total
    n = sum(i.received for i in with_data)
    mean = sum(i.received * i.mean_ns for i in with_data) / n  # type: ignore[operator]
    total.mean_ns = mean
    total.min_ns = min((i.min_ns for i in with_data if i.min_ns is not None), default=None)
    total.max_ns = max((i.max_ns for i in with_data if i.max_ns is not None), default=None)
    if all(i.m2_ns2 is not None for i in with_data):
        total.m2_ns2 = sum(i.m2_ns2 + i.received * (i.mean_ns - mean) ** 2  # type: ignore
                           for i in with_data)
    return total


def measurement(interval: Interval, intervals: list[Interval], cfg: dict[str, Any],
                duration_s: float | None) -> dict[str, Any]:
    """The schema's measurement block of an imported interval."""
    n = interval.received
    stddev = math.sqrt(interval.m2_ns2 / n) if interval.m2_ns2 is not None and n else None
    stats = {"count": n, "min_ns": _int(interval.min_ns), "mean_ns": interval.mean_ns,
             "p50_ns": None, "p90_ns": None, "p99_ns": None, "p999_ns": None, "p9999_ns": None,
             "max_ns": _int(interval.max_ns), "stddev_ns": stddev,
             "range_ns": _int(interval.max_ns - interval.min_ns)
             if interval.max_ns is not None and interval.min_ns is not None else None,
             "histogram": []}
    sent = interval.sent if interval.sent is not None else n + (interval.lost or 0)
    lost = interval.lost if interval.lost is not None else max(0, sent - n)
    duration = duration_s or float(len(intervals)) or 1.0
    payload = cfg.get("payload_bytes") or 0
    series = [{"t_s": t, "sent": i.sent, "received": i.received, "min_ns": _int(i.min_ns),
               "p50_ns": None, "p90_ns": None, "p99_ns": None, "max_ns": _int(i.max_ns),
               "mean_ns": i.mean_ns} for t, i in enumerate(intervals)]
    return {
        "mode": cfg["mode"], "latency_kind": "rtt" if cfg["mode"] == "roundtrip" else "one-way",
        "clock": "as recorded by the imported tool", "payload_bytes": payload,
        "message_bytes": payload, "response": stats, "service": stats,
        "jitter_rfc3550_ns": None, "late": None,
        "accounting": {"sent": sent, "received": n, "lost": lost, "duplicated": 0,
                       "reordered": 0, "corrupted": 0, "foreign": 0, "malformed": 0,
                       "warmup_sent": 0, "warmup_received": 0},
        "throughput": {"duration_s": duration, "msgs_per_s": n / duration,
                       "payload_bytes_per_s": n * payload / duration,
                       "message_bytes_per_s": n * payload / duration},
        "schedule": None, "series": series, "samples_file": None,
    }


def run_result(imported: Imported, point_id: str) -> dict[str, Any]:
    """The run-result document of ``imported``."""
    cfg = imported.config
    whole = pooled(imported.intervals)
    now = f"{datetime.now(timezone.utc):%Y-%m-%dT%H:%M:%SZ}"
    process = {"pid": 0, "wall_s": imported.wall_s or 0.0, "cpu_user_s": imported.cpu_s or 0.0,
               "cpu_sys_s": 0.0, "max_rss_kib": imported.max_rss_kib or 0,
               "voluntary_ctx_switches": 0, "involuntary_ctx_switches": 0}
    host = {"hostname": "unknown", "kernel": "unknown", "cpu_model": "unknown", "cores": 1,
            "governor": "unavailable", "clocksource": "unknown", **imported.host}
    measured = measurement(whole, imported.intervals, cfg, imported.wall_s)
    agents = []
    if imported.cpu_s is not None or imported.max_rss_kib is not None:
        agents.append({  # the foreign tool's one process, as the measuring role
            "schema_version": RESULT_VERSION, "kind": "agent-report", "role": "sub", "tool": TOOL,
            "host": host, "config": cfg, "status": "complete", "status_reason": None,
            "conditions": {"busy_poll": False, "prevent_cpu_idle": "off", "spin_margin_ns": 0,
                           "clock_read_overhead_ns": 0},
            "started_at": now, "finished_at": now, "process": process,
            "measurement": measured,
            "counters": {"received": whole.received, "echoed": 0, "foreign": 0,
                         "malformed": 0, "send_errors": 0}, "warnings": []})
    return {
        "schema_version": RESULT_VERSION, "kind": "run-result", "run_id": point_id, "tool": TOOL,
        "host": host, "config": cfg, "status": "complete" if whole.received else "failed",
        "status_reason": None if whole.received else "the imported log holds no samples",
        "started_at": now, "finished_at": now,
        "measurement": measured, "agents": agents, "warnings": [{
            "code": "imported", "message": f"imported from {imported.source['tool']} "
            f"({imported.source['file']}): no percentiles or histogram, latency as that tool "
            f"measured it", "hint": None}],
        "daemons": [], "discovery": None,
        "per_topic": [dict(measurement(t, [t], cfg, imported.wall_s), topic=i, name=name)
                      for i, (name, t) in enumerate(imported.topics)],
        "source": imported.source,
    }


def _sum(values: list[int | None]) -> int | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def _int(value: float | None) -> int | None:
    return None if value is None else int(round(value))
