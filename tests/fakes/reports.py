"""Hand-made agent reports that follow schema/result.v2.json, for tests and the fake agent.

The numbers are invented and only have to be self-consistent; they stand in for the real
agent's measurements in tests of the control plane.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's import costs each fake agent start ~5 ms of CPU
if TYPE_CHECKING:
    from typing import Any

TOOL = {"name": "mwperf-agent", "version": "0.1.0", "git_rev": "fake"}
HOST = {"hostname": "testhost", "kernel": "6.1.0", "cpu_model": "Fake CPU", "cores": 2,
        "governor": "unavailable", "clocksource": "tsc"}


def stats(count: int, base_ns: int = 10_000) -> dict[str, Any]:
    """A latency summary of ``count`` samples around ``base_ns`` (all null when count is 0)."""
    if count == 0:
        keys = ("min_ns", "mean_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "p9999_ns",
                "max_ns", "stddev_ns", "range_ns")
        return {"count": 0, **{key: None for key in keys}, "histogram": []}
    return {"count": count, "min_ns": base_ns // 2, "mean_ns": base_ns * 1.1, "p50_ns": base_ns,
            "p90_ns": base_ns * 2, "p99_ns": base_ns * 3, "p999_ns": base_ns * 4,
            "p9999_ns": base_ns * 5, "max_ns": base_ns * 6, "stddev_ns": base_ns * 0.3,
            "range_ns": base_ns * 6 - base_ns // 2,
            "histogram": [[base_ns, count - 1], [base_ns * 6, 1]] if count > 1 else [[base_ns, 1]]}


def measurement(mode: str = "roundtrip", *, sent: int = 1000, lost: int = 0,
                payload_bytes: int = 1024, rate: float = 1000.0, duration_s: float = 1.0
                ) -> dict[str, Any]:
    """A measurement where ``sent - lost`` messages arrived intact."""
    received = sent - lost
    return {
        "mode": mode, "latency_kind": {"roundtrip": "rtt", "service": "call"}.get(mode, "one-way"),
        "clock": "CLOCK_MONOTONIC (one host)",
        "payload_bytes": payload_bytes, "message_bytes": payload_bytes + 56,
        "response": stats(received, 12_000), "service": stats(received, 10_000),
        "jitter_rfc3550_ns": 800.0 if received else None,
        "late": ({"threshold_ns": int(1e9 / rate), "count": 0, "fraction": 0.0}
                 if rate > 0 else None),
        "accounting": {"sent": sent, "received": received, "lost": lost, "duplicated": 0,
                       "reordered": 0, "corrupted": 0, "foreign": 0, "malformed": 0,
                       "warmup_sent": 0, "warmup_received": 0},
        "throughput": {"duration_s": duration_s, "msgs_per_s": received / duration_s,
                       "payload_bytes_per_s": received * payload_bytes / duration_s,
                       "message_bytes_per_s": received * (payload_bytes + 56) / duration_s},
        "schedule": ({"period_ns": int(1e9 / rate), "lateness": stats(received, 2_000),
                      "behind_count": 0} if rate > 0 else None),
        "series": [{"t_s": 0, "sent": sent, "received": received, "p50_ns": 12_000,
                    "p99_ns": 36_000, "max_ns": 72_000, "mean_ns": 13_200.0}],
        "samples_file": None,
    }


def agent_report(role: str, status: str = "complete", reason: str | None = None, *,
                 measured: dict[str, Any] | None = None, sent: int | None = None,
                 warnings: list[dict[str, Any]] | None = None, config: dict[str, Any] | None = None,
                 wall_s: float = 1.0, cpu_s: float = 0.1) -> dict[str, Any]:
    """An agent report for ``role``; servers get counters, senders ``sent``."""
    server = role in ("pong", "sub")
    report: dict[str, Any] = {
        "schema_version": 2, "kind": "agent-report", "role": role, "tool": TOOL, "host": HOST,
        "config": config or {}, "status": status, "status_reason": reason,
        "conditions": {"busy_poll": False, "prevent_cpu_idle": "off", "spin_margin_ns": 50_000,
                       "clock_read_overhead_ns": 20.0},
        "started_at": "2026-11-21T22:45:01.000Z", "finished_at": "2026-11-21T22:45:02.000Z",
        "process": {"pid": 4242, "wall_s": wall_s, "cpu_user_s": cpu_s, "cpu_sys_s": cpu_s,
                    "max_rss_kib": 4096, "voluntary_ctx_switches": 10,
                    "involuntary_ctx_switches": 1},
        "measurement": measured,
        "counters": ({"received": 1000, "echoed": 1000 if role == "pong" else 0, "foreign": 0,
                      "malformed": 0, "send_errors": 0, "connections": 1} if server else None),
        "warnings": warnings or [],
    }
    if sent is not None:
        report["sent"] = sent
    return report
