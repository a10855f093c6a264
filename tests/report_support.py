"""Helpers of the report/compare/import tests (no tests here): synthetic run-results whose
statistics are computed from given latency samples (so percentiles, histograms and the raw
samples agree), written as point folders and sweeps and catalogued with the store's own ingest.
"""

import copy
import functools
import json
import math
import random
from pathlib import Path
from typing import Any

from mwperf.config import PointConfig
from mwperf.store import ingest_point
from mwperf.store.catalogue import connect

GOLDENS = Path(__file__).parent / "vectors" / "results"
TOOL = {"name": "mwperf", "version": "0.1.0", "git_rev": "synthetic"}
HOST = {"hostname": "testhost", "kernel": "6.1.0", "cpu_model": "Synthetic CPU", "cores": 2,
        "governor": "unavailable", "clocksource": "tsc"}


def config(**changes: Any) -> dict[str, Any]:
    """A point configuration as mwperf records it, with ``changes``."""
    base = PointConfig(transport="udp", mode="roundtrip", rate=1000.0, payload="Array1k",
                       payload_bytes=1024, duration_ns=1_000_000_000, count=None,
                       warmup_ns=0, peer_timeout_ns=2_000_000_000).to_dict()
    base.update(changes)
    return base


def hdr_value(ns: int) -> int:
    """``ns`` rounded up to three significant digits (as an HDR bucket's highest value)."""
    if ns < 1000:
        return int(ns)
    scale = 10 ** (int(math.log10(ns)) - 2)
    return int(math.ceil(ns / scale) * scale)


def quantile(values: list[int], q: float) -> int:
    """The nearest-rank quantile of sorted ``values``."""
    return values[max(0, math.ceil(q * len(values)) - 1)]


def stats(values: list[int]) -> dict[str, Any]:
    """The schema's stats block of ``values``."""
    if not values:
        keys = ("min_ns", "mean_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "p9999_ns",
                "max_ns", "stddev_ns", "range_ns")
        return {"count": 0, **dict.fromkeys(keys), "histogram": []}
    ordered = sorted(values)
    mean = sum(ordered) / len(ordered)
    buckets: dict[int, int] = {}
    for v in ordered:
        key = hdr_value(v)
        buckets[key] = buckets.get(key, 0) + 1
    return {"count": len(ordered), "min_ns": ordered[0], "mean_ns": mean,
            "p50_ns": hdr_value(quantile(ordered, 0.5)),
            "p90_ns": hdr_value(quantile(ordered, 0.9)),
            "p99_ns": hdr_value(quantile(ordered, 0.99)),
            "p999_ns": hdr_value(quantile(ordered, 0.999)),
            "p9999_ns": hdr_value(quantile(ordered, 0.9999)), "max_ns": ordered[-1],
            "stddev_ns": math.sqrt(sum((v - mean) ** 2 for v in ordered) / len(ordered)),
            "range_ns": ordered[-1] - ordered[0],
            "histogram": [[k, c] for k, c in sorted(buckets.items())]}


def measurement(values: list[int], cfg: dict[str, Any], lost: int = 0) -> dict[str, Any]:
    """A measurement block for latencies ``values`` (in arrival order) and ``lost`` messages."""
    rate = cfg["rate"]
    duration = max(1.0, len(values) / rate) if rate else 1.0
    per_second = max(1, int(rate) or len(values))
    series = []
    for t in range(math.ceil(len(values) / per_second)):
        chunk = sorted(values[t * per_second:(t + 1) * per_second])
        series.append({"t_s": t, "sent": len(chunk), "received": len(chunk), "min_ns": chunk[0],
                       "p50_ns": quantile(chunk, 0.5), "p90_ns": quantile(chunk, 0.9),
                       "p99_ns": quantile(chunk, 0.99), "max_ns": chunk[-1],
                       "mean_ns": sum(chunk) / len(chunk)})
    jitter = sum(abs(a - b) for a, b in zip(values, values[1:])) / max(1, len(values) - 1)
    sent = len(values) + lost
    return {
        "mode": cfg["mode"], "latency_kind": "rtt" if cfg["mode"] == "roundtrip" else "one-way",
        "clock": "CLOCK_MONOTONIC (one host)", "payload_bytes": cfg["payload_bytes"],
        "message_bytes": cfg["payload_bytes"] + 56, "response": stats(values),
        "service": stats([max(1, v - 100) for v in values]), "jitter_rfc3550_ns": jitter,
        "late": ({"threshold_ns": int(1e9 / rate), "count": sum(v > 1e9 / rate for v in values),
                  "fraction": sum(v > 1e9 / rate for v in values) / max(1, len(values))}
                 if rate else None),
        "accounting": {"sent": sent, "received": len(values), "lost": lost, "duplicated": 0,
                       "reordered": 0, "corrupted": 0, "foreign": 0, "malformed": 0,
                       "warmup_sent": 0, "warmup_received": 0},
        "throughput": {"duration_s": duration, "msgs_per_s": len(values) / duration,
                       "payload_bytes_per_s": len(values) * cfg["payload_bytes"] / duration,
                       "message_bytes_per_s": len(values) * (cfg["payload_bytes"] + 56) / duration},
        "schedule": None, "series": series, "samples_file": None,
    }


ROLES = {"roundtrip": ("pong", "ping"), "service": ("server", "client")}
"""a mode -> its (server, sender) roles (pub and sub otherwise)"""
GOLDEN_OF_ROLE = {"ping": "roundtrip.json", "pong": "roundtrip.json", "pub": "throughput.json",
                  "sub": "throughput.json", "client": "service.json", "server": "service.json"}
"""the golden result (tests/vectors/results/) whose agent report of a role is the template"""


@functools.lru_cache(maxsize=None)
def _golden_report(role: str) -> dict[str, Any]:
    """The golden result's agent report of ``role`` (read once; callers copy it), its own
    latency histograms coarsened to one significant digit (the counts kept: a real sub's
    ~7,700 buckets made every synthetic point cost a tenth of a second to write and read)."""
    golden = json.loads((GOLDENS / GOLDEN_OF_ROLE[role]).read_text("utf-8"))
    report = next(a for a in golden["agents"] if a["role"] == role)
    for stats in ((report.get("measurement") or {}).get(k) for k in ("response", "service")):
        if stats and stats.get("histogram"):
            stats["histogram"] = _coarse(stats["histogram"])
    return report


def _coarse(histogram: list[list[int]]) -> list[list[int]]:
    """``histogram`` ([value, count] rows) with its values rounded up to one significant digit."""
    buckets: dict[int, int] = {}
    for value, count in histogram:
        scale = 10 ** int(math.log10(value)) if value >= 10 else 1
        key = int(math.ceil(value / scale) * scale)
        buckets[key] = buckets.get(key, 0) + count
    return [[k, c] for k, c in sorted(buckets.items())]


def agent(role: str, cfg: dict[str, Any], status: str = "complete", reason: str | None = None,
          cpu_s: float = 0.2, rss_kib: int = 4096,
          started_at: str = "2026-11-22T10:00:00Z") -> dict[str, Any]:
    """A whole agent report of ``role`` (a golden result's, so that the result is one a reader
    takes): its config, status, start and process (``cpu_s`` user, half that system,
    ``rss_kib``) set."""
    report = copy.deepcopy(_golden_report(role))
    report["process"].update(pid=1, wall_s=1.0, cpu_user_s=cpu_s, cpu_sys_s=cpu_s / 2,
                             max_rss_kib=rss_kib, voluntary_ctx_switches=1,
                             involuntary_ctx_switches=0)
    report.update(tool={"name": "mwperf-agent", "version": "0.1.0", "git_rev": "synthetic"},
                  config=cfg, status="complete" if status == "partial" else status,
                  status_reason=None if status == "partial" else reason,
                  started_at=started_at, finished_at=started_at)
    return report


def result(run_id: str, values: list[int], cfg: dict[str, Any] | None = None, *, lost: int = 0,
           status: str = "complete", reason: str | None = None,
           warnings: list[dict[str, Any]] | None = None, topics: list[list[int]] | None = None,
           daemons: list[dict[str, Any]] | None = None, cpu_s: float = 0.2,
           rss_kib: int = 4096, started_at: str = "2026-11-22T10:00:00Z") -> dict[str, Any]:
    """A run-result of latencies ``values`` (``topics``: each topic's own latencies)."""
    cfg = cfg or config()
    server, sender = ROLES.get(cfg["mode"], ("sub", "pub"))
    agents = [agent(role, cfg, status, reason, cpu_s, rss_kib, started_at)
              for role in (sender, server)]
    per_topic = [dict(measurement(t, cfg), topic=i, name=f"topic{i}")
                 for i, t in enumerate(topics or [])]
    return {"schema_version": 2, "kind": "run-result", "run_id": run_id, "tool": TOOL,
            "host": HOST, "config": cfg, "status": status, "status_reason": reason,
            "started_at": started_at, "finished_at": started_at,
            "measurement": measurement(values, cfg, lost) if values else None,
            "agents": agents, "warnings": warnings or [], "daemons": daemons or [],
            "discovery": None, "per_topic": per_topic}


def write_point(folder: Path, document: dict[str, Any], values: list[int] | None = None) -> Path:
    """Write ``document`` as ``folder/result.json`` (and ``values`` as samples.csv)."""
    folder.mkdir(parents=True, exist_ok=True)
    if values is not None:
        lines = ["seq,intended_ns,sent_ns,peer_rx_ns,recv_ns,response_ns,service_ns"]
        lines += [f"{i},{i * 1000},{i * 1000 + 50},{i * 1000 + v // 2},{i * 1000 + v},{v},"
                  f"{v - 50}" for i, v in enumerate(values)]
        (folder / "samples.csv").write_text("\n".join(lines) + "\n")
        document["config"]["samples"] = True
    (folder / "result.json").write_text(json.dumps(document))
    return folder


def add_point(root: Path, run_id: str, values: list[int], samples: bool = False,
              **options: Any) -> Path:
    """A single-point run ``run_id`` in results folder ``root``, catalogued."""
    folder = write_point(root / run_id, result(run_id, values, **options),
                         values if samples else None)
    ingest_point(folder)
    return folder


def add_sweep(root: Path, name: str, points: list[tuple[str, list[int], dict[str, Any]]],
              samples: bool = False) -> Path:
    """A sweep folder ``name`` with one point per (point id, values, result options), each
    catalogued in order; its sweep.json lists them."""
    sweep = root / name
    entries = []
    root.mkdir(parents=True, exist_ok=True)
    with connect(root, views=False):  # one attachment for the sweep (its last release checkpoints)
        for index, (point_id, values, options) in enumerate(points, start=1):
            folder = write_point(sweep / "points" / point_id, result(point_id, values, **options),
                                 values if samples else None)
            entries.append({"index": index, "label": point_id, "result": f"points/{point_id}"})
            (sweep / "sweep.json").write_text(json.dumps({"scenario": "synthetic",
                                                           "entries": entries}))
            ingest_point(folder, index=index)
    return sweep


def latencies(n: int, median_ns: float = 50_000, seed: int = 1, spread: float = 0.25
              ) -> list[int]:
    """``n`` log-normal latencies around ``median_ns`` (reproducible)."""
    rng = random.Random(seed)
    return [max(1, int(median_ns * math.exp(rng.gauss(0, spread)))) for _ in range(n)]


def throughput_result(run_id: str, transport: str = "udp", payload_bytes: int = 1024,
                      msgs_per_s: float = 100_000.0, *, delivery: str = "best-effort",
                      subscribers: int = 1, offered_per_s: float | None = None,
                      loss_pct: float | None = 0.0, blocked_s: float = 0.1,
                      seconds: int = 2, per_second: list[int] | None = None,
                      status: str = "complete", reason: str | None = None) -> dict[str, Any]:
    """A ``--mode throughput`` run-result as the shared spec has it (measurement.throughput
    with delivery, offered/sent rates, loss, subscribers, sender, CPU): ``msgs_per_s``
    delivered (summed over ``subscribers``) of ``payload_bytes`` for ``seconds`` (the per-second
    series: ``per_second``, else even)."""
    cfg = config(transport=transport, mode="throughput", rate=offered_per_s or 0.0,
                 payload=str(payload_bytes), payload_bytes=payload_bytes,
                 reliability=delivery, subscribers=subscribers,
                 duration_ns=seconds * 1_000_000_000)
    values = latencies(200, median_ns=80_000, seed=payload_bytes % 97)
    m = measurement(values, dict(cfg, rate=1000.0))
    received = per_second or [int(msgs_per_s)] * seconds
    delivered = sum(received)
    sent = delivered if not loss_pct else int(round(delivered / (1 - loss_pct / 100)))
    m.update(mode="throughput", latency_kind="one-way")
    m["accounting"].update(sent=sent // subscribers, received=delivered // subscribers,
                           lost=(sent - delivered) // subscribers)
    m["series"] = [dict(m["series"][0], t_s=t, sent=sent // len(received), received=r)
                   for t, r in enumerate(received)]
    rate = delivered / seconds
    mb = rate * payload_bytes / 1e6
    m["throughput"] = {
        "duration_s": float(seconds), "msgs_per_s": rate,
        "payload_bytes_per_s": rate * payload_bytes,
        "message_bytes_per_s": rate * (payload_bytes + 56), "delivery": delivery,
        "offered_per_s": offered_per_s, "sent_per_s": sent / seconds / subscribers,
        "loss_pct": loss_pct, "subscribers": subscribers, "checked_every": 1,
        "sender": {"sending_s": float(seconds), "in_send_s": seconds * 0.6,
                   "blocked_s": blocked_s, "refused": 0, "send_p50_ns": 900,
                   "send_p99_ns": 4000, "send_max_ns": 90_000},
        "cpu": {"pub": {"cpu_s": 1.0, "per_msg_us": 1e6 / (rate * seconds) * subscribers,
                        "per_mb_ms": 1e3 / (mb * seconds) if mb else None},
                "sub": {"cpu_s": 0.8 * subscribers,
                        "per_msg_us": 0.8e6 * subscribers / (rate * seconds),
                        "per_mb_ms": 0.8e3 * subscribers / (mb * seconds) if mb else None}},
        "wire_bytes_per_s": None}
    document = result(run_id, values, cfg, status=status, reason=reason)
    document["measurement"] = m
    document["agents"] += [dict(document["agents"][1]) for _ in range(subscribers - 1)]
    return document


def add_throughput_sweep(root: Path, name: str, points: list[dict[str, Any]]) -> Path:
    """A sweep folder ``name`` of throughput points (each: throughput_result's keyword
    arguments, with ``point_id``), catalogued in order."""
    sweep = root / name
    entries = []
    root.mkdir(parents=True, exist_ok=True)
    with connect(root, views=False):  # one attachment for the sweep (its last release checkpoints)
        for index, options in enumerate(points, start=1):
            options = dict(options)
            point_id = options.pop("point_id")
            folder = write_point(sweep / "points" / point_id, throughput_result(point_id, **options))
            entries.append({"index": index, "label": point_id, "result": f"points/{point_id}"})
            (sweep / "sweep.json").write_text(json.dumps({"scenario": "throughput",
                                                           "entries": entries}))
            ingest_point(folder, index=index)
    return sweep
