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
