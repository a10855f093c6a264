"""Flattening a run-result (schema/result.v2.json) into catalogue rows.

Pure functions: a result dict in, dicts keyed by the column names of schema.py out. Missing
blocks (a failed point has no measurement) give NULL columns; config fields the catalogue has no
column for are still in the ``result`` JSON column.
"""

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..topicnames import name_and_address
from .schema import (ACCOUNTING, CONFIG_ABSENT, CONFIG_COLUMNS, LATENCIES, LAYER_COLUMNS,
                     LAYER_NAMES, MEASUREMENT_COLUMNS, ROLES, STAT_FIELDS)


@dataclass(frozen=True)
class PointPlace:
    """What the folder layout, not the result, says about a point."""

    run_id: str
    folder: str
    """relative to the results folder"""
    index: int | None
    repetition: int | None


def timestamp(text: Any) -> datetime | None:
    """An RFC 3339 UTC time of a result as a naive UTC datetime (None when absent/invalid)."""
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).replace(tzinfo=None)
    except ValueError:
        return None


def point_row(result: dict[str, Any], place: PointPlace,
              document: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``points`` row of ``result`` (a run-result's fields; ``document``: the result as it
    was written, when those fields were read from it: the ``result`` column)."""
    config = result.get("config") or {}
    row: dict[str, Any] = {
        "point_id": result["run_id"], "run_id": place.run_id, "point_index": place.index,
        "repetition": place.repetition, "folder": place.folder,
        "started_at": timestamp(result.get("started_at")),
        "finished_at": timestamp(result.get("finished_at")),
        "status": result["status"], "status_reason": result.get("status_reason"),
        "mwperf_version": (result.get("tool") or {}).get("version"),
        "agent_version": agent_version(result),
    }
    for name, _ in CONFIG_COLUMNS:
        value = config.get(name, CONFIG_ABSENT.get(name))
        row[name] = json.dumps(value) if isinstance(value, (list, dict)) else value
    row.update(measurement_columns(result.get("measurement")))
    row.update(process_columns(result))
    row.update(resilience_columns(result))
    row.update(cost_columns(result))
    row.update(service_columns(result))
    row.update(throughput_columns(result))
    row.update(layer_columns(result))
    row["result"] = json.dumps(result if document is None else document, ensure_ascii=False)
    return row


def agent_version(result: dict[str, Any]) -> str | None:
    """The version of the agent that measured ``result`` (None when no agent reported)."""
    versions = {(a.get("tool") or {}).get("version") for a in result.get("agents") or []}
    versions.discard(None)
    return ",".join(sorted(versions)) or None


def measurement_columns(measurement: dict[str, Any] | None) -> dict[str, Any]:
    """The summary columns of one measurement block (all NULL for None)."""
    row: dict[str, Any] = dict.fromkeys(name for name, _ in MEASUREMENT_COLUMNS)
    if not measurement:
        return row
    for prefix, block in LATENCIES.items():
        stats = measurement.get(block) or {}
        for field in STAT_FIELDS:
            key = "count" if field == "count" else f"{field}_ns"
            row[f"{prefix}_{key}"] = stats.get(key)
    accounting = measurement.get("accounting") or {}
    row.update({name: accounting.get(name) for name in ACCOUNTING})
    sent, lost = accounting.get("sent"), accounting.get("lost")
    row["loss_pct"] = 100.0 * lost / sent if sent and lost is not None else None
    throughput = measurement.get("throughput") or {}
    if throughput.get("loss_pct") is not None:  # --mode throughput: the publisher's own count
        row["loss_pct"] = throughput["loss_pct"]
    row["msgs_per_s"] = throughput.get("msgs_per_s")
    row["jitter_rfc3550_ns"] = measurement.get("jitter_rfc3550_ns")
    row["late_fraction"] = (measurement.get("late") or {}).get("fraction")
    return row


def process_columns(result: dict[str, Any]) -> dict[str, Any]:
    """CPU (seconds and % of the process's wall time) and peak RSS per role, daemons, discovery.

    Several agents of one role (``--subscribers``): CPU and RSS summed, over the longest wall time.
    A result of schema version 1 has no agent RSS here: its agents reported getrusage's figure,
    which was the control plane's (the process that forked them), not theirs.
    """
    row: dict[str, Any] = {}
    version = (result.get("upgraded_from") or {}).get("version", result.get("schema_version", 2))
    own_memory = version >= 2  # a v3 result: the version it was upgraded from, if any
    agents: dict[str, list[dict[str, Any]]] = {}
    for agent in result.get("agents") or []:
        agents.setdefault(agent.get("role"), []).append(agent.get("process") or {})
    for role in ROLES:
        processes = agents.get(role)
        cpu = (sum(p.get("cpu_user_s", 0) + p.get("cpu_sys_s", 0) for p in processes)
               if processes else None)
        wall = max((p.get("wall_s") or 0 for p in processes), default=0) if processes else None
        rss = [p.get("max_rss_kib") for p in processes or []]
        row[f"{role}_cpu_s"] = cpu
        row[f"{role}_cpu_pct"] = 100.0 * cpu / wall if cpu is not None and wall else None
        row[f"{role}_rss_kib"] = (sum(rss) if own_memory and rss and None not in rss
                                  else None)
    daemons = result.get("daemons") or []
    cpus = [(d.get("cpu_user_s") or 0) + (d.get("cpu_sys_s") or 0) for d in daemons
            if d.get("cpu_user_s") is not None or d.get("cpu_sys_s") is not None]
    rss = [d["peak_rss_kib"] for d in daemons if d.get("peak_rss_kib") is not None]
    row["daemons_cpu_s"] = sum(cpus) if cpus else None
    row["daemons_rss_kib"] = sum(rss) if rss else None
    discovery = result.get("discovery") or {}
    row["discovery_open_ns"] = discovery.get("open_ns")
    row["discovery_matched_ns"] = discovery.get("matched_ns")
    row["discovery_first_reply_ns"] = discovery.get("first_reply_ns")
    return row


def cost_columns(result: dict[str, Any]) -> dict[str, Any]:
    """Bytes on the wire (--wire-bytes, the first wire) and heap allocations per message per
    role (--count-allocs, else --alloc-sites' heaptrack count; several agents of a role: the
    largest)."""
    wire = result.get("wire") or {}
    row: dict[str, Any] = {"wire_up_bytes_per_msg": wire.get("up_bytes_per_message"),
                           "wire_down_bytes_per_msg": wire.get("down_bytes_per_message"),
                           "wire_setup_bytes": wire.get("setup_bytes"),
                           "wire_idle_bytes_per_s": wire.get("idle_bytes_per_s")}
    for role in ROLES:
        per = [(a.get("allocations") or {}).get("allocs_per_msg")
               for a in result.get("agents") or [] if a.get("role") == role]
        per = [p for p in per if p is not None] or [
            p.get("allocs_per_msg") for p in (result.get("alloc_sites") or {}).get("processes", [])
            if p.get("role") == role and p.get("allocs_per_msg") is not None]
        row[f"{role}_allocs_per_msg"] = max(per) if per else None
    return row


def service_columns(result: dict[str, Any]) -> dict[str, Any]:
    """A service point's calls options and outcomes, and the server's time (NULL otherwise)."""
    service = (result.get("config") or {}).get("service") or {}
    calls = (result.get("measurement") or {}).get("calls") or {}
    server_time = (calls.get("server") or {}).get("server_time") or {}
    return {"in_flight": service.get("in_flight"), "clients": service.get("clients"),
            "reply_payload_bytes": service.get("reply_payload_bytes"),
            "server_work_ns": service.get("server_work_ns"),
            "call_timeout_ns": service.get("call_timeout_ns"),
            "calls_timeouts": calls.get("timeouts"), "calls_errors": calls.get("errors"),
            "calls_unmatched": calls.get("unmatched"),
            "server_time_p50_ns": server_time.get("p50_ns"),
            "server_time_p99_ns": server_time.get("p99_ns")}


def throughput_columns(result: dict[str, Any]) -> dict[str, Any]:
    """A throughput point's figures (schema.THROUGHPUT_COLUMNS): the ``measurement.throughput``
    block's delivery, rates, sender and CPU; ``subscribers`` from the configuration (1 when not
    recorded), the delivered bytes/s wherever the result has them."""
    config = result.get("config") or {}
    throughput = (result.get("measurement") or {}).get("throughput") or {}
    sender = throughput.get("sender") or {}
    cpu = throughput.get("cpu") or {}
    subscribers = throughput.get("subscribers") or config.get("subscribers")
    row: dict[str, Any] = {
        "subscribers": subscribers if subscribers is not None else 1,
        "delivery": throughput.get("delivery"), "offered_per_s": throughput.get("offered_per_s"),
        "sent_per_s": throughput.get("sent_per_s"),
        "payload_bytes_per_s": throughput.get("payload_bytes_per_s"),
        "message_bytes_per_s": throughput.get("message_bytes_per_s"),
        "wire_bytes_per_s": throughput.get("wire_bytes_per_s"),
        "checked_every": throughput.get("checked_every"),
        "sending_s": sender.get("sending_s"), "in_send_s": sender.get("in_send_s"),
        "blocked_s": sender.get("blocked_s"), "refused": sender.get("refused"),
        "send_p99_ns": sender.get("send_p99_ns")}
    for side in ("pub", "sub"):
        figures = cpu.get(side) or {}
        for what in ("per_msg_us", "per_mb_ms"):
            row[f"{side}_cpu_{what}"] = figures.get(what)
    return row


def layer_columns(result: dict[str, Any]) -> dict[str, Any]:
    """The ``layers`` section's columns (schema.LAYER_COLUMNS): each known layer's p50, p99
    and share (NULL where absent or not observable), the method and the message counts; all
    NULL without the section."""
    row: dict[str, Any] = dict.fromkeys(name for name, _ in LAYER_COLUMNS)
    section = result.get("layers")
    if not isinstance(section, dict):
        return row
    row.update(layers_method=section.get("method"), layers_split=section.get("split"),
               layers_messages=section.get("messages"))
    for layer in section.get("layers") or []:
        name = layer.get("name")
        if name not in LAYER_NAMES or not layer.get("observable", True):
            continue
        row[f"layer_{name}_p50_ns"] = layer.get("p50_ns")
        row[f"layer_{name}_p99_ns"] = layer.get("p99_ns")
        row[f"layer_{name}_share"] = layer.get("share")
    return row


def resilience_columns(result: dict[str, Any]) -> dict[str, Any]:
    """Time to connect, and around a link outage: sent, lost, recovery, session."""
    resilience = result.get("resilience") or {}
    outage = resilience.get("outage") or {}
    return {"time_to_connect_ns": resilience.get("time_to_connect_ns"),
            "outage_sent": outage.get("sent"), "outage_lost": outage.get("lost"),
            "outage_recovery_ns": outage.get("recovery_ns"),
            "outage_session": outage.get("session")}


def topic_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One ``topics`` row per entry of ``per_topic``, with the topic's name (a replay's recorded
    topic, else ``topic <i>``) and address; a single-topic point: one row, topic 0, named only
    when it replayed a recorded topic."""
    point_id = result["run_id"]
    per_topic = result.get("per_topic") or []
    if not per_topic:
        if not result.get("measurement"):
            return []
        recorded = ((result.get("config") or {}).get("replay") or {}).get("topics") or []
        return [{"point_id": point_id, "topic": 0,
                 "name": recorded[0] if len(recorded) == 1 else None, "address": None,
                 **measurement_columns(result["measurement"])}]
    rows = []
    for i, topic in enumerate(per_topic):
        index = topic.get("topic", i)
        name, address = name_and_address(result, index, topic)
        rows.append({"point_id": point_id, "topic": index, "name": name, "address": address,
                     **measurement_columns(topic)})
    return rows


def subscriber_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One ``subscribers`` row per entry of ``per_subscriber`` (none with one subscriber)."""
    return [{"point_id": result["run_id"], "subscriber": entry.get("subscriber", i),
             "name": entry.get("name"), "status": entry.get("status"),
             "status_reason": entry.get("status_reason"),
             **measurement_columns(entry.get("measurement"))}
            for i, entry in enumerate(result.get("per_subscriber") or [])]


def warning_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One ``warnings`` row per warning of the point, in order."""
    return [{"point_id": result["run_id"], "seq": seq, "code": w.get("code", ""),
             "message": w.get("message", ""), "hint": w.get("hint")}
            for seq, w in enumerate(result.get("warnings") or [])]


def run_row(result: dict[str, Any], run_id: str, kind: str, scenario: str | None,
            folder: str) -> dict[str, Any]:
    """The ``runs`` row a point implies; a sweep's times and status are then widened over all
    its points (see catalogue.refresh_run)."""
    host = result.get("host") or {}
    return {
        "run_id": run_id, "kind": kind, "scenario": scenario,
        "started_at": timestamp(result.get("started_at")),
        "ended_at": timestamp(result.get("finished_at")), "status": result["status"],
        "mwperf_version": (result.get("tool") or {}).get("version"),
        "agent_version": agent_version(result), "hostname": host.get("hostname"),
        "kernel": host.get("kernel"), "cpu_model": host.get("cpu_model"),
        "cores": host.get("cores"), "host": json.dumps(host, ensure_ascii=False),
        "folder": folder,
    }
