"""Combining the agent reports of one point into a ``run-result`` document (pure, no I/O).

Status: the worst of every agent (by its report and by its exit code; an agent killed after it
wrote its whole report keeps its report's status) and of the run itself, in the order failed >
partial > complete. Warnings: the agents' and ours, each (code, message)
once. One-way loss is recomputed from the publisher's own send count. ``per_topic``: the measuring
agent's per-topic measurements (empty for one topic), each under its topic's name (a replay's
recorded topic: topicnames.py) with its address and its own samples file; a one-way topic's loss
stays counted against the count its end-of-stream marker announced (the pub reports only its
total).

Several subscribers (``--subscribers N``, one ``sub`` agent each): ``per_subscriber`` lists each
one's status and measurement (loss recounted against pub's sends), the top-level measurement
pools those that measured (pool.py: the distribution over all their messages, loss against
k x sent for k subscribers that reported), and ``per_topic`` pools each topic over them. A
subscriber that failed while others measured makes the point partial, not failed: its failure
stays in its own row, the others' numbers stay.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .result.json_copy import json_copy
from .roles import MEASURING_ROLE, ONE_WAY, SENDERS
from .errors import RunError
from .pool import pool_measurements
from .result_types import (Accounting, AgentReport, Daemon, Measurement, RunResult, SubscriberMeasurement,
                           TopicMeasurement, Warning)
from .schema import RESULT_VERSION, validation_error
from .throughput import INHERENT

SEVERITY = {"complete": 0, "partial": 1, "failed": 2}
EXIT_CODES = {"complete": 0, "partial": 3, "failed": 1}
StatusName = Literal["complete", "partial", "failed"]
Status = tuple[StatusName, str | None]


@dataclass
class AgentRun:
    """What one agent left behind: its exit code, its report (None if absent or invalid)."""

    role: str
    exit_code: int | None
    report: AgentReport | None
    note: str
    """the last stderr line, or why the report could not be used"""
    killed: bool = False
    name: str = ""
    """this agent among several of one role (``sub.2``); empty = the role"""

    @property
    def label(self) -> str:
        """How the result names this agent: its name, else its role."""
        return self.name or self.role


def make_warning(code: str, message: str, hint: str | None = None) -> Warning:
    """A warning as the schema wants it: code (kebab-case), message, hint."""
    return {"code": code, "message": message, "hint": hint}


def worst(statuses: list[Status]) -> Status:
    """The most severe (status, reason); on a tie the first one given wins."""
    return max(statuses, key=lambda status: SEVERITY[status[0]], default=("complete", None))


def worst_of_all(statuses: list[Status]) -> Status:
    """The most severe status with every reason given at that severity, in order, "; "-joined
    (a complete run's publisher that left messages unacknowledged and its subscriber stopped
    before the end-of-stream marker: both said)."""
    status, _ = worst(statuses)
    reasons = [reason for s, reason in statuses if s == status and reason]
    return status, "; ".join(dict.fromkeys(reasons)) or None


def exit_status(run: AgentRun) -> Status:
    """What an agent's exit code says about the run (docs/agent-contract.md)."""
    code = run.exit_code
    if run.killed:
        return "partial", "did not stop when asked and was killed"
    if code == 0:
        return "complete", None
    if code == 3:
        return "partial", f"exit code 3: {run.note}"
    if code is not None and code < 0:
        return "failed", f"killed by signal {-code}"
    return "failed", f"exit code {code}: {run.note}"


def agent_status(run: AgentRun) -> Status:
    """The worse of what the report says and what the exit code says. An agent killed after its
    stop grace that had written its whole report was killed tearing its middleware down (the
    report is written first: docs/agent-contract.md): its measurement stands as reported (the
    runner's ``agent-killed`` warning says it was killed); one killed without a report failed."""
    if run.report is None:
        reported: Status = ("failed", f"no usable report ({run.note})")
    else:
        reported = (run.report["status"], run.report["status_reason"])
        if run.killed:
            return reported
    return worst([reported, exit_status(run)])


def merge(*, run_id: str, mode: str, config: dict[str, Any], runs: list[AgentRun],
          started_at: str, finished_at: str, interrupted: str | None = None,
          own_warnings: list[Warning] | None = None,
          samples_file: str | None = None,
          topic_samples: Mapping[int, str] | None = None,
          daemons: list[Daemon] | None = None) -> RunResult:
    """Build and validate the run-result; raise RunError if no agent left a usable report.
    ``samples_file``: the saved samples file of a single topic; ``topic_samples``: topic ->
    its saved file with several topics (the agents' paths were in a scratch folder)."""
    reports = {run.label: run.report for run in runs if run.report is not None}
    sender = next((reports[r] for r in SENDERS if r in reports), None)
    origin = sender or next(iter(reports.values()), None)
    if origin is None:
        notes = "; ".join(f"{run.label}: {run.note}" for run in runs)
        raise RunError(f"no agent wrote a usable report ({notes})")
    warnings = [w for report in reports.values() for w in report["warnings"]]
    warnings += own_warnings or []
    warnings += _foreign_warnings(reports)
    subscribers = [run for run in runs if run.role == "sub"] if mode in ONE_WAY else []
    per_subscriber: list[SubscriberMeasurement] = []
    if len(subscribers) > 1:
        per_subscriber = _per_subscriber(mode, config, subscribers, reports.get("pub"), warnings,
                                         interrupted)
        measured = [s["measurement"] for s in per_subscriber if s["measurement"] is not None]
        measurement = pool_measurements(measured) if measured else None
        synced = [m["clock_sync"] for m in measured if m.get("clock_sync")]
        if measurement is not None and synced:  # the loosest subscriber's qualifies the pool
            measurement["clock_sync"] = max(synced, key=lambda c: float("inf") if c[
                "error_bound_ns"] is None else c["error_bound_ns"])
        per_topic = _pooled_topics([run.report for run in subscribers if run.report])
    else:
        measurement = _measurement(mode, config, reports, warnings, interrupted)
        per_topic = _per_topic(mode, reports)
    if measurement is not None and samples_file is not None:
        measurement["samples_file"] = samples_file
    for topic in per_topic:
        topic["samples_file"] = (topic_samples or {}).get(topic["topic"])
    statuses: list[Status] = [("partial", interrupted)] if interrupted else []
    for run in runs:
        status, reason = agent_status(run)
        if status == "failed" and per_subscriber and run.role == "sub" and measurement:
            status = "partial"  # the other subscribers measured: their numbers stand
        statuses.append((status, f"{run.label}: {reason}" if reason else None))
    cut_off = ([(s["name"], undelivered_reason(s["measurement"])) for s in per_subscriber]
               if per_subscriber else [("sub", undelivered_reason(measurement))])
    if not interrupted:  # a stopped run is partial for that reason already
        statuses += [("partial", f"{name}: {why}") for name, why in cut_off if why]
    status, reason = worst_of_all(statuses)
    if interrupted and status == "partial":
        reason = interrupted  # the cause; the agents' "interrupted by signal" follows from it
    result: RunResult = {
        "schema_version": RESULT_VERSION, "kind": "run-result", "run_id": run_id,
        "tool": origin["tool"], "host": origin["host"], "config": config,
        "status": status, "status_reason": reason,
        "started_at": started_at, "finished_at": finished_at,
        "measurement": measurement, "agents": list(reports.values()),
        "warnings": _dedupe(warnings),
        "daemons": daemons or [],
        "discovery": json_copy(sender.get("discovery")) if sender else None,
        "per_topic": per_topic,
    }
    if per_subscriber:
        result["per_subscriber"] = per_subscriber
    problem = validation_error(result, "run-result")
    if problem:
        raise RunError(f"bug: the run-result does not match schema/result.v2.json at {problem}")
    return result


def _foreign_warnings(reports: Mapping[str, AgentReport]) -> list[Warning]:
    """A pong's or sub's packets that were not from this run (another program, a scan, a late
    run): counted and dropped by the agent, never echoed or measured, and said here."""
    found = []
    for label, report in reports.items():
        counters = report.get("counters")
        foreign = counters["foreign"] if counters else 0
        malformed = counters["malformed"] if counters else 0
        if foreign or malformed:
            found.append(make_warning(
                "foreign-traffic", f"{label} received {foreign} packet(s) not from this run "
                f"and {malformed} malformed; they were dropped, not measured",
                "another program sends to this address or port: a stray client, a scan, or "
                "an earlier run's late replies; measure on a quiet network for clean numbers"))
    return found


def _per_subscriber(mode: str, config: Mapping[str, Any], subscribers: list[AgentRun],
                    pub: AgentReport | None, warnings: list[Warning],
                    interrupted: str | None = None) -> list[SubscriberMeasurement]:
    """Each subscriber's status and measurement (loss against pub's sends), in order."""
    rows: list[SubscriberMeasurement] = []
    for index, run in enumerate(subscribers):
        reports: dict[str, AgentReport] = {"sub": run.report} if run.report is not None else {}
        if pub is not None:
            reports["pub"] = pub
        status, reason = agent_status(run)
        rows.append({"subscriber": index, "name": run.label, "status": status,
                     "status_reason": reason,
                     "measurement": _measurement(mode, config, reports, warnings, interrupted)})
    return rows


def _pooled_topics(reports: list[AgentReport]) -> list[TopicMeasurement]:
    """Each topic pooled over the subscribers that measured it (empty for one topic)."""
    by_topic: dict[int, list[TopicMeasurement]] = {}
    for report in reports:
        for topic in report.get("per_topic") or []:
            by_topic.setdefault(topic["topic"], []).append(topic)
    pooled = []
    for index, found in sorted(by_topic.items()):
        topic = TopicMeasurement(**pool_measurements(found), topic=index, name=found[0]["name"])
        addresses = list(dict.fromkeys(t["address"] for t in found if "address" in t))
        if addresses:  # each subscriber's (one, shared, for middleware), as pub's --connect
            topic["address"] = ";".join(addresses)
        pooled.append(topic)
    return pooled


def _measurement(mode: str, config: Mapping[str, Any], reports: Mapping[str, AgentReport],
                 warnings: list[Warning], interrupted: str | None = None) -> Measurement | None:
    """The measuring role's measurement; for one-way, with loss counted against pub's sends
    (``interrupted``: the run was stopped, which says why a queue was cut off)."""
    measuring = reports.get(MEASURING_ROLE[mode])
    if measuring is None or measuring["measurement"] is None:
        return None
    measurement = json_copy(measuring["measurement"])
    measured_any = measurement["accounting"]["sent"] > measurement["accounting"]["lost"]
    if measured_any and measurement["payload_bytes"] != config["payload_bytes"]:
        warnings.append(make_warning(
            "payload-mismatch", f"the agent measured {measurement['payload_bytes']} B payloads, "
            f"{config['payload_bytes']} B were asked for", "check the agent's payload catalogue"))
    if mode in ONE_WAY:
        pub = reports.get("pub")
        _recount_oneway(measurement["accounting"], pub, warnings,
                        backlog=queued(config) and _ended_before_marker(measuring),
                        warn=not interrupted)
        if pub is not None and pub.get("schedule") is not None:
            measurement["schedule"] = json_copy(pub["schedule"])  # the sender's accuracy
    server = reports.get("server")
    if mode == "service" and measurement.get("calls") and server and server.get("serving"):
        measurement["calls"]["server"] = json_copy(server["serving"])
    return measurement


def _per_topic(mode: str, reports: Mapping[str, AgentReport]) -> list[TopicMeasurement]:
    """The measuring role's per-topic measurements, ordered by topic."""
    measuring = reports.get(MEASURING_ROLE[mode])
    topics = (measuring.get("per_topic") if measuring is not None else None) or []
    return sorted(json_copy(topics), key=lambda t: t["topic"])


def queued(config: Mapping[str, Any]) -> bool:
    """A one-way stream whose unreceived tail is still queued when it is cut off, not lost:
    reliable by nature (tcp, uds) or by QoS with a keep-all history (a keep-last writer
    overwrites what was not acknowledged: that is loss; udp is best-effort whatever the QoS)."""
    transport = config.get("transport")
    if transport in INHERENT:
        return INHERENT[transport] == "reliable"
    return config.get("reliability") == "reliable" and config.get("history") == "keep-all"


def _ended_before_marker(sub: AgentReport) -> bool:
    """The sub ended without the end-of-stream marker: stopped, timed out idle or gave up
    reopening (an agent's sub gives a reason exactly then; one that got the marker gives none:
    docs/agent-contract.md)."""
    return sub["status"] == "complete" and sub["status_reason"] is not None


def undelivered_reason(measurement: Measurement | None) -> str | None:
    """Why a one-way point whose reliable stream was cut off is partial (None: it was not)."""
    accounting = measurement["accounting"] if measurement else None
    held = accounting.get("undelivered", 0) if accounting else 0
    if not held:
        return None
    assert accounting is not None
    return (f"stopped before the end-of-stream marker with {held} of {accounting['sent']} sent "
            "messages undelivered (the reliable stream's backlog)")


def _recount_oneway(accounting: Accounting, pub: AgentReport | None,
                    warnings: list[Warning], backlog: bool = False, warn: bool = True) -> None:
    """Replace sub's idea of 'sent' by pub's own count: lost = pub.sent - arrived. ``backlog``:
    a reliable stream whose sub was stopped before the end-of-stream marker: what pub sent
    after the last message that arrived is still the writer's to deliver (its backlog), so it
    is counted ``undelivered``, not lost; gaps before it stay lost (``warn``: and said, unless
    the run was stopped, which already says why)."""
    if pub is None or pub.get("sent") is None:
        warnings.append(make_warning(
            "sender-count-missing", "no send count from pub; loss is counted from the "
            "subscriber's view (announced count or highest sequence number + 1)",
            "the tail of the stream may be lost unseen"))
        return
    arrived = accounting["sent"] - accounting["lost"]
    lost = pub["sent"] - arrived
    if lost < 0:
        warnings.append(make_warning(
            "accounting-mismatch", f"sub saw {arrived} distinct messages but pub reports only "
            f"{pub['sent']} sent; loss set to 0", "this is a bug in the agents' accounting"))
        lost = 0
    if backlog and lost > accounting["lost"]:
        held = min(lost, pub["sent"] - accounting["sent"]) if pub["sent"] > accounting["sent"] else 0
        if held:
            accounting["undelivered"] = held
            lost -= held
        if held and warn:
            warnings.append(make_warning(
                "reliable-backlog", f"the reliable stream was cut off: {held} of {pub['sent']} "
                f"messages pub sent were not yet delivered when sub was stopped before the "
                f"end-of-stream marker (it had taken {accounting['received']} measured and "
                f"{accounting['warmup_received']} warm-up messages); they are counted "
                "undelivered, not lost, and the delivered rate is what arrived",
                "the subscriber took far fewer messages than were offered and the rest "
                "queued (in the middleware's writer or the kernel's buffers): offer a rate it "
                "sustains (--rate), or bound the queue where the middleware can (--history "
                "keep-last)"))
    accounting["sent"] = pub["sent"]
    accounting["lost"] = lost


def _dedupe(warnings: list[Warning]) -> list[Warning]:
    seen: set[tuple[str, str]] = set()
    unique: list[Warning] = []
    for warning in warnings:
        key = (warning["code"], warning["message"])
        if key not in seen:
            seen.add(key)
            unique.append(warning)
    return unique
