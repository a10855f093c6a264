"""The result schema both ways: valid documents pass, broken ones fail at the right field."""

import copy

from fakes.reports import agent_report, measurement

from mwperf.schema import validation_error


def test_valid_reports_pass() -> None:
    assert validation_error(agent_report("ping", measured=measurement(), sent=1000),
                            "agent-report") is None
    assert validation_error(agent_report("pong"), "agent-report") is None
    assert validation_error(agent_report("sub", measured=measurement("oneway", rate=0)),
                            "agent-report") is None


def test_negative_count_fails_with_path() -> None:
    report = agent_report("ping", measured=measurement(), sent=1000)
    report["measurement"]["accounting"]["lost"] = -3
    problem = validation_error(report, "agent-report")
    assert problem is not None and "$.measurement" in problem


def test_missing_field_and_wrong_kind_fail() -> None:
    report = agent_report("ping", measured=measurement())
    broken = copy.deepcopy(report)
    del broken["host"]
    assert "'host' is a required property" in validation_error(broken, "agent-report")
    assert validation_error(report, "run-result") is not None
    report["role"] = "relay"
    assert "$.role" in validation_error(report, "agent-report")


def test_run_result_with_daemons_and_discovery() -> None:
    from mwperf.merge import AgentRun, merge
    ping = agent_report("ping", measured=measurement(), sent=1000)
    ping["discovery"] = {"matched_ns": 1000, "first_reply_ns": 5000, "probes": 2}
    daemon = {"name": "mosquitto", "argv": ["/usr/sbin/mosquitto", "-c", "x.conf"],
              "version": "2.0.11", "address": "127.0.0.1:1", "cpu_user_s": 0.01,
              "cpu_sys_s": 0.02, "wall_s": 1.0, "peak_rss_kib": 8000, "killed": False,
              "log": "daemons/mosquitto.log"}
    result = merge(run_id="r", mode="roundtrip", config={"payload_bytes": 1024},
                   runs=[AgentRun("ping", 0, ping, "")], started_at="t", finished_at="t",
                   daemons=[daemon])
    assert result["discovery"] == ping["discovery"] and result["daemons"] == [daemon]
    assert validation_error(result, "run-result") is None
    broken = copy.deepcopy(result)
    del broken["daemons"][0]["peak_rss_kib"]
    assert "$.daemons[0]" in validation_error(broken, "run-result")
