"""Merging agent reports into a run-result: loss, status, warnings, validation."""

from typing import Any

import pytest
from fakes.reports import agent_report, measurement

from mwperf.errors import RunError
from mwperf.merge import AgentRun, merge, worst
from mwperf.schema import validation_error

CONFIG = {"transport": "udp", "mode": "oneway", "rate": 1000.0, "payload": "Array1k",
          "payload_bytes": 1024, "duration_ns": 10**9, "count": None}
WARN = {"code": "cpu-idle", "message": "CPU idle states are enabled", "hint": "h"}


def run(role: str, report: dict[str, Any] | None, code: int = 0, note: str = "") -> AgentRun:
    return AgentRun(role, code, report, note)


def merged(runs: list[AgentRun], mode: str = "oneway", **kwargs: Any) -> dict[str, Any]:
    result = merge(run_id="20261121T224501Z-udp-oneway-1a2b", mode=mode,
                   config={**CONFIG, "mode": mode}, runs=runs,
                   started_at="2026-11-21T22:45:01.000Z", finished_at="2026-11-21T22:45:02.000Z",
                   **kwargs)
    assert validation_error(result, "run-result") is None
    return result


def test_oneway_loss_uses_pub_count() -> None:
    sub = agent_report("sub", measured=measurement("oneway", sent=990, lost=5))
    result = merged([run("sub", sub), run("pub", agent_report("pub", sent=1000))])
    accounting = result["measurement"]["accounting"]
    assert (accounting["sent"], accounting["lost"], accounting["received"]) == (1000, 15, 985)
    assert sub["measurement"]["accounting"]["sent"] == 990  # the agent report is untouched
    assert [a["role"] for a in result["agents"]] == ["sub", "pub"]


def test_oneway_takes_the_pubs_schedule_accuracy() -> None:
    sub = agent_report("sub", measured=measurement("oneway", sent=1000, lost=0))
    sub["measurement"]["schedule"] = None  # a real sub cannot know the sender's accuracy
    pub = agent_report("pub", sent=1000)
    lateness = sub["measurement"]["response"]  # any valid stats block
    pub["schedule"] = {"period_ns": 1_000_000, "lateness": lateness, "behind_count": 2}
    result = merged([run("sub", sub), run("pub", pub)])
    assert result["measurement"]["schedule"]["behind_count"] == 2
    assert sub["measurement"]["schedule"] is None  # the agent report is untouched


def test_oneway_loss_never_negative() -> None:
    sub = agent_report("sub", measured=measurement("oneway", sent=1000, lost=0))
    result = merged([run("sub", sub), run("pub", agent_report("pub", sent=900))])
    assert result["measurement"]["accounting"]["lost"] == 0
    assert "accounting-mismatch" in [w["code"] for w in result["warnings"]]


def test_oneway_without_pub_report_keeps_sub_view() -> None:
    sub = agent_report("sub", measured=measurement("oneway", sent=990, lost=5))
    result = merged([run("sub", sub), run("pub", None, 1, "connection refused")])
    assert result["measurement"]["accounting"]["lost"] == 5
    assert result["status"] == "failed"
    assert "pub: no usable report (connection refused)" in result["status_reason"]
    assert "sender-count-missing" in [w["code"] for w in result["warnings"]]


def test_roundtrip_takes_ping_measurement_and_tool() -> None:
    ping = agent_report("ping", measured=measurement(), sent=1000)
    ping["tool"] = {"name": "mwperf-agent", "version": "9.9", "git_rev": "abc"}
    result = merged([run("pong", agent_report("pong")), run("ping", ping)], mode="roundtrip")
    assert result["measurement"] == ping["measurement"]
    assert result["tool"]["version"] == "9.9"
    assert (result["status"], result["status_reason"]) == ("complete", None)


@pytest.mark.parametrize(("pong", "ping", "status", "reason"), [
    (("complete", None, 0), ("partial", "peer silent for 2 s", 3), "partial",
     "ping: peer silent for 2 s"),
    (("failed", "send error", 1), ("partial", "peer silent", 3), "failed", "pong: send error"),
    (("complete", None, 0), ("complete", None, 1), "failed", "ping: exit code 1: boom"),
    (("complete", None, -11), ("complete", None, 0), "failed", "pong: killed by signal 11"),
])
def test_status_is_the_worst(pong: tuple, ping: tuple, status: str, reason: str) -> None:
    runs = [run("pong", agent_report("pong", pong[0], pong[1]), pong[2], "boom"),
            run("ping", agent_report("ping", ping[0], ping[1], measured=measurement()),
                ping[2], "boom")]
    result = merged(runs, mode="roundtrip")
    assert (result["status"], result["status_reason"]) == (status, reason)


def test_an_agent_killed_after_writing_its_report_keeps_its_measurement() -> None:
    # its report written, it was killed tearing its middleware down (past the stop grace)
    pong = AgentRun("pong", -9, agent_report("pong"), "", killed=True)
    ping = run("ping", agent_report("ping", measured=measurement()))
    assert merged([ping, pong], mode="roundtrip")["status"] == "complete"
    gone = AgentRun("pong", -9, None, "no report written", killed=True)  # killed before it
    result = merged([ping, gone], mode="roundtrip")
    assert result["status"] == "failed" and "pong: no usable report" in result["status_reason"]


def test_interrupt_makes_partial_and_wins_ties() -> None:
    ping = agent_report("ping", "partial", "interrupted by signal", measured=measurement())
    result = merged([run("pong", agent_report("pong")), run("ping", ping, 3)], mode="roundtrip",
                    interrupted="interrupted by Ctrl-C")
    assert (result["status"], result["status_reason"]) == ("partial", "interrupted by Ctrl-C")


def test_every_agents_reason_at_the_worst_status_is_said_in_order() -> None:
    # a saturating keep-all stream: the pub left messages unacknowledged at its end and the sub
    # was stopped before the end-of-stream marker; both explain the loss, neither hides the other
    sub = agent_report("sub", "complete", "stopped by signal before the end-of-stream marker",
                       measured=measurement("oneway", sent=1000, lost=600))
    pub = agent_report("pub", "complete", "left with messages its subscribers had not "
                       "acknowledged after --peer-timeout 5 s", sent=1000)
    result = merged([run("sub", sub), run("pub", pub)])
    assert result["status"] == "complete"
    assert result["status_reason"] == (
        "sub: stopped by signal before the end-of-stream marker; pub: left with messages its "
        "subscribers had not acknowledged after --peer-timeout 5 s")
    # a worse status alone speaks: the complete one's reason is not mixed in
    failed = merged([run("sub", sub), run("pub", agent_report("pub", "failed", "send failed",
                                                              sent=1000), 1)])
    assert failed["status"] == "failed" and "stopped by signal" not in failed["status_reason"]


def test_warnings_deduplicated_in_order() -> None:
    own = {"code": "agent-killed", "message": "pong was killed", "hint": None}
    runs = [run("pong", agent_report("pong", warnings=[WARN])),
            run("ping", agent_report("ping", measured=measurement(), warnings=[WARN, own]))]
    result = merged(runs, mode="roundtrip", own_warnings=[own])
    assert result["warnings"] == [WARN, own]


def test_payload_mismatch_is_warned() -> None:
    ping = agent_report("ping", measured=measurement(payload_bytes=64))
    result = merged([run("ping", ping)], mode="roundtrip")
    assert "payload-mismatch" in [w["code"] for w in result["warnings"]]


def test_no_report_at_all_is_an_error() -> None:
    with pytest.raises(RunError, match="no agent wrote a usable report"):
        merged([run("pong", None, 1, "address in use"), run("ping", None, 1, "refused")])


def test_invalid_result_is_reported_with_its_path() -> None:
    ping = agent_report("ping", measured=measurement())
    with pytest.raises(RunError, match=r"bug: .* at \$\.run_id: 42 is not of type 'string'"):
        merge(run_id=42, mode="roundtrip", config=CONFIG, runs=[run("ping", ping)],  # type: ignore[arg-type]
              started_at="a", finished_at="b")


def test_worst_prefers_first_on_ties() -> None:
    assert worst([("partial", "a"), ("partial", "b"), ("complete", None)]) == ("partial", "a")
    assert worst([]) == ("complete", None)


CUT_OFF = "stopped by signal before the end-of-stream marker"
QUEUED = {"transport": "cyclonedds", "reliability": "reliable", "history": "keep-all"}


def cut_off(config: dict[str, Any], subs: int = 1, interrupted: str | None = None,
            mode: str = "throughput") -> dict[str, Any]:
    """A point whose sub(s) saw up to seq 599 (5 gaps) and were stopped before the marker;
    pub sent 1000. With several subscribers, only the first is cut off."""
    runs = [run("sub", agent_report("sub", reason=CUT_OFF,
                                    measured=measurement("oneway", sent=600, lost=5)))]
    runs += [AgentRun("sub", 0, agent_report("sub", measured=measurement(
        "oneway", sent=1000, lost=0)), "", name=f"sub.{i}") for i in range(1, subs)]
    runs.append(run("pub", agent_report("pub", sent=1000)))
    result = merge(run_id="20261121T224501Z-udp-oneway-1a2b", mode=mode,
                   config={**CONFIG, "mode": mode, **config}, runs=runs,
                   started_at="2026-11-21T22:45:01.000Z", finished_at="2026-11-21T22:45:02.000Z",
                   interrupted=interrupted)
    assert validation_error(result, "run-result") is None
    return result


@pytest.mark.parametrize("config", [QUEUED, {"transport": "tcp"}], ids=["keep-all", "tcp"])
def test_a_cut_off_queues_tail_is_undelivered_not_lost(config: dict[str, Any]) -> None:
    result = cut_off(config)
    accounting = result["measurement"]["accounting"]
    assert (accounting["sent"], accounting["lost"], accounting["undelivered"]) == (1000, 5, 400)
    assert accounting["received"] + accounting["lost"] + accounting["undelivered"] == 1000
    assert result["status"] == "partial"
    assert "400 of 1000 sent messages undelivered" in result["status_reason"]
    assert "reliable-backlog" in [w["code"] for w in result["warnings"]]


@pytest.mark.parametrize("config", [
    {"transport": "udp", "reliability": "reliable", "history": "keep-all"},  # best-effort by nature
    {**QUEUED, "reliability": "best-effort"},
    {**QUEUED, "history": "keep-last:10"},  # the writer overwrote what was not acknowledged
], ids=["udp", "best-effort", "keep-last"])
def test_a_cut_off_tail_nothing_queues_is_lost(config: dict[str, Any]) -> None:
    result = cut_off(config)
    accounting = result["measurement"]["accounting"]
    assert (accounting["lost"], accounting.get("undelivered")) == (405, None)
    assert result["status"] == "complete"
    assert "reliable-backlog" not in [w["code"] for w in result["warnings"]]


def test_a_stopped_run_counts_the_queue_undelivered_and_says_only_why_it_stopped() -> None:
    result = cut_off(QUEUED, interrupted="interrupted by Ctrl-C")
    assert result["measurement"]["accounting"]["undelivered"] == 400
    assert (result["status"], result["status_reason"]) == ("partial", "interrupted by Ctrl-C")
    assert "reliable-backlog" not in [w["code"] for w in result["warnings"]]


def test_the_cut_off_subscriber_among_several_is_named_and_its_queue_pooled() -> None:
    result = cut_off(QUEUED, subs=2, mode="oneway")
    rows = result["per_subscriber"]
    assert [r["measurement"]["accounting"].get("undelivered") for r in rows] == [400, None]
    assert result["measurement"]["accounting"]["undelivered"] == 400  # the pool sums it
    assert result["status"] == "partial"
    assert result["status_reason"].startswith("sub: stopped before the end-of-stream marker")


def test_a_queue_that_ended_with_its_marker_counts_every_gap_lost() -> None:
    # the sub's report gives no reason exactly when the marker came: its sent is pub's count
    sub = agent_report("sub", measured=measurement("oneway", sent=1000, lost=5))
    result = merge(run_id="20261121T224501Z-udp-oneway-1a2b", mode="oneway",
                   config={**CONFIG, **QUEUED}, runs=[run("sub", sub), run("pub", agent_report(
                       "pub", sent=1000))],
                   started_at="2026-11-21T22:45:01.000Z", finished_at="2026-11-21T22:45:02.000Z")
    assert result["measurement"]["accounting"]["lost"] == 5
    assert "undelivered" not in result["measurement"]["accounting"]
    assert result["status"] == "complete"


def test_no_measured_message_is_no_payload_mismatch() -> None:
    sub = agent_report("sub", reason=CUT_OFF,
                       measured=measurement("oneway", sent=0, lost=0, payload_bytes=0))
    result = merged([run("sub", sub), run("pub", agent_report("pub", sent=1000))])
    assert "payload-mismatch" not in [w["code"] for w in result["warnings"]]
