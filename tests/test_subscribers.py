"""--subscribers N: validation, pooling N subscribers' measurements, merging N sub reports,
how subscribers meet the pub, and the summary's ranking (the real agent: test_subscribers_e2e)."""

import math
import statistics
from collections import Counter
from typing import Any

import pytest
from fakes.reports import agent_report, measurement

from mwperf.config import build_point
from mwperf.errors import UsageError
from mwperf.merge import AgentRun, merge
from mwperf.pool import pool_measurements
from mwperf.commandline import role_argv, server_names
from mwperf.scenario.digest import digest
from mwperf.scenario.topics import rank_subscribers
from mwperf.schema import validation_error
from mwperf.subscribers import connect_address, listen_address, names
from mwperf.result.load import as_stream, parse_result

CONFIG = {"transport": "udp", "mode": "oneway", "rate": 1000.0, "payload": "Array1k",
          "payload_bytes": 1024, "duration_ns": 10**9, "count": None, "subscribers": 3}


class Catalogue:
    def transports(self) -> list[str]:
        return ["udp", "tcp", "uds", "cyclonedds", "zenoh", "ros1"]

    def payloads(self) -> dict[str, int]:
        return {"Array1k": 1024}


def point(**options: Any) -> Any:
    return build_point({"mode": "oneway", **options}, Catalogue)


def quantile(buckets: list[list[int]], q: float) -> int:
    """hdrhistogram's value at quantile q of exact [value, count] buckets (the test's truth)."""
    total = sum(n for _, n in buckets)
    wanted, seen = min(max(math.ceil(q * total), 1), total), 0
    for value, n in buckets:
        seen += n
        if seen >= wanted:
            return value
    raise AssertionError("no buckets")


def pool_stats(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The agent's pooling of latency distributions (``mwperf-agent pool``), stats only."""
    def wrap(stats: dict[str, Any]) -> dict[str, Any]:
        m = measurement("oneway", sent=max(stats["count"], 1), lost=0)
        return {**m, "response": stats, "service": stats}
    return pool_measurements([wrap(p) for p in parts])["response"]


def exact_stats(values: list[int]) -> dict[str, Any]:
    """A stats block whose histogram holds every value exactly (one bucket per value)."""
    ordered = sorted(values)
    buckets = sorted(Counter(values).items())
    histogram = [[v, n] for v, n in buckets]
    q = {key: quantile(histogram, f) for key, f in
         (("p50_ns", .5), ("p90_ns", .9), ("p99_ns", .99), ("p999_ns", .999),
          ("p9999_ns", .9999))}
    return {"count": len(values), "min_ns": ordered[0], "mean_ns": statistics.fmean(values),
            **q, "max_ns": ordered[-1], "stddev_ns": statistics.pstdev(values),
            "range_ns": ordered[-1] - ordered[0], "histogram": histogram}


# --- validation ------------------------------------------------------------------------------

def test_subscribers_default_to_one_and_reach_the_config() -> None:
    assert point().subscribers == 1
    cfg = point(subscribers="4")
    assert cfg.subscribers == 4 and cfg.to_dict()["subscribers"] == 4


@pytest.mark.parametrize(("options", "message"), [
    # 16: the agent's limit (cli.rs MAX_SUBSCRIBERS, read through 'mwperf-agent options')
    ({"subscribers": "0"}, "--subscribers: must be from 1 to 16 (each subscriber is an agent "
                           "process of its own), got 0"),
    ({"subscribers": "17"}, "--subscribers: must be from 1 to 16"),
    ({"subscribers": "many"}, "--subscribers: cannot parse 'many'; use a whole number from 1"),
    ({"subscribers": "3", "mode": "roundtrip"}, "--subscribers 3: only with --mode oneway or throughput (one "
                                                "pub, each sub measuring its own stream); a "
                                                "round trip has one pong, use --subscribers 1"),
    ({"subscribers": "2", "samples": True}, "--samples: raw samples are kept only with "
                                            "--subscribers 1 (got --subscribers 2)"),
    ({"subscribers": "2", "transport": "zenoh"}, "--subscribers 2 with zenoh needs --opt "
                                                 "mode=client"),
    ({"subscribers": "2", "cpu_quota": "50%"}, "--cpu-quota: limits one agent per role; not "
                                               "with --subscribers 2"),
])
def test_bad_subscribers_are_usage_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError) as error:
        point(**options)
    assert str(error.value).startswith(message), str(error.value)
    assert error.value.exit_code == 2


def test_zenoh_through_a_router_takes_several_subscribers() -> None:
    assert point(subscribers="3", transport="zenoh", opt=("mode=client",)).subscribers == 3


# --- how the subscribers and the pub meet ----------------------------------------------------

def test_sockets_listen_apart_middleware_shares_the_first_base() -> None:
    assert names(1) == ["sub"] and names(3) == ["sub.0", "sub.1", "sub.2"]
    assert listen_address("udp", "127.0.0.1:0", 2, "127.0.0.1:4000") == "127.0.0.1:0"
    assert listen_address("uds", "/w/mwperf.sock", 2, "/w/mwperf.sock") == "/w/mwperf.sock.s2"
    assert listen_address("cyclonedds", "0/auto", 0, None) == "0/auto"
    assert listen_address("cyclonedds", "0/auto", 1, "0/mwperf-1-2") == "0/mwperf-1-2"
    assert connect_address("udp", ["h:1,h:2", "h:3,h:4"]) == "h:1,h:2;h:3,h:4"
    assert connect_address("ros1", ["http://m:1/#b", "http://m:1/#b"]) == "http://m:1/#b"


def test_the_pub_is_told_how_many_subscribers_to_wait_for(tmp_path: Any) -> None:
    cfg = point(subscribers="3", transport="cyclonedds")
    agent = type("A", (), {"path": "/bin/agent"})()
    pub = role_argv(agent, "pub", cfg, tmp_path, 7, "0/b")  # type: ignore[arg-type]
    assert pub[pub.index("--subscribers") + 1] == "3"
    sub = role_argv(agent, "sub", cfg, tmp_path, 7, "0/b", "sub.2")  # type: ignore[arg-type]
    assert "--subscribers" not in sub and sub[sub.index("--json") + 1].endswith("sub.2.json")
    assert server_names(cfg) == ["sub.0", "sub.1", "sub.2"]
    assert "--subscribers" not in role_argv(agent, "pub", point(), tmp_path, 7, "x")  # type: ignore
    assert server_names(build_point({"mode": "roundtrip"}, Catalogue)) == ["pong"]


# --- pooling ---------------------------------------------------------------------------------

def test_pooled_stats_equal_the_stats_of_all_values_together() -> None:
    parts = [[100, 200, 300, 300], [150, 150, 900], [50, 400, 400, 400, 2000]]
    pooled = pool_stats([exact_stats(p) for p in parts])
    everything = exact_stats([v for p in parts for v in p])
    for key in ("count", "min_ns", "max_ns", "range_ns", "p50_ns", "p90_ns", "p99_ns",
                "histogram"):
        assert pooled[key] == everything[key], key
    assert math.isclose(pooled["mean_ns"], everything["mean_ns"])
    assert math.isclose(pooled["stddev_ns"], everything["stddev_ns"])


def test_pooling_ignores_empty_parts_and_all_empty_is_empty() -> None:
    empty = measurement("oneway", sent=10, lost=10)["response"]
    assert pool_stats([empty, exact_stats([5, 7])])["count"] == 2
    assert pool_stats([empty, empty]) == {**empty, "histogram": []}


def test_pooled_accounting_counts_loss_against_n_times_sent() -> None:
    parts = [measurement("oneway", sent=1000, lost=lost) for lost in (0, 10, 990)]
    pooled = pool_measurements(parts)
    assert pooled["accounting"]["sent"] == 3000
    assert pooled["accounting"]["lost"] == 1000
    assert pooled["response"]["count"] == 2000
    assert pooled["series"][0]["received"] == 2000 and pooled["series"][0]["p50_ns"] is None


# --- merging N sub reports -------------------------------------------------------------------

def sub_run(index: int, report: dict[str, Any] | None, code: int = 0, note: str = "") -> AgentRun:
    return AgentRun("sub", code, report, note, name=f"sub.{index}")


def merged(runs: list[AgentRun]) -> dict[str, Any]:
    result = merge(run_id="20261121T224501Z-udp-oneway-1a2b", mode="oneway", config=CONFIG,
                   runs=runs, started_at="2026-11-21T22:45:01.000Z",
                   finished_at="2026-11-21T22:45:02.000Z")
    assert validation_error(result, "run-result") is None
    return result


def test_each_subscriber_has_its_row_and_the_aggregate_pools_them() -> None:
    subs = [agent_report("sub", measured=measurement("oneway", sent=990, lost=lost))
            for lost in (0, 5, 20)]
    result = merged([*(sub_run(i, r) for i, r in enumerate(subs)),
                     AgentRun("pub", 0, agent_report("pub", sent=1000), "")])
    rows = result["per_subscriber"]
    assert [(r["subscriber"], r["name"], r["status"]) for r in rows] == [
        (0, "sub.0", "complete"), (1, "sub.1", "complete"), (2, "sub.2", "complete")]
    assert [r["measurement"]["accounting"]["lost"] for r in rows] == [10, 15, 30]  # vs pub's 1000
    total = result["measurement"]["accounting"]
    assert (total["sent"], total["lost"]) == (3000, 55)
    assert result["measurement"]["response"]["count"] == 990 + 985 + 970
    assert (result["status"], result["status_reason"]) == ("complete", None)


def test_a_killed_subscriber_fails_alone_and_the_others_keep_their_numbers() -> None:
    good = agent_report("sub", measured=measurement("oneway", sent=1000, lost=0))
    result = merged([sub_run(0, good), sub_run(1, None, -9, "no report written"),
                     sub_run(2, good), AgentRun("pub", 0, agent_report("pub", sent=1000), "")])
    rows = result["per_subscriber"]
    assert rows[1]["status"] == "failed" and rows[1]["measurement"] is None
    assert rows[1]["status_reason"] == "no usable report (no report written)"
    assert result["measurement"]["accounting"]["sent"] == 2000  # the two that reported
    assert result["status"] == "partial"
    assert result["status_reason"] == "sub.1: no usable report (no report written)"


def test_every_subscriber_failing_fails_the_point() -> None:
    with pytest.raises(Exception, match="sub.0: no report"):
        merged([sub_run(0, None, 1, "no report"), sub_run(1, None, 1, "no report")])
    result = merged([sub_run(0, None, 1, "no report"), sub_run(1, None, 1, "no report"),
                     AgentRun("pub", 0, agent_report("pub", sent=1000), "")])
    assert result["status"] == "failed" and result["measurement"] is None


def test_one_subscriber_keeps_the_old_result_shape() -> None:
    sub = agent_report("sub", measured=measurement("oneway", sent=1000, lost=0))
    result = merged([AgentRun("sub", 0, sub, ""), AgentRun("pub", 0, agent_report("pub",
                                                                                 sent=1000), "")])
    assert "per_subscriber" not in result


def test_the_summary_ranks_subscribers_slowest_last() -> None:
    from mwperf.scenario.observe import Observation

    subs = [agent_report("sub", measured=measurement("oneway", sent=1000, lost=0))
            for _ in range(3)]
    for index, report in enumerate(subs):  # subscriber 1 the slowest
        report["measurement"]["response"] = exact_stats([1000 * (1 + 5 * (index == 1))] * 4)
    result = merged([*(sub_run(i, r) for i, r in enumerate(subs)),
                     AgentRun("pub", 0, agent_report("pub", sent=1000), "")])
    kept = digest(as_stream(parse_result(result, "merged")), None)
    planned = type("P", (), {"label": lambda self: "udp oneway 1000 Hz (rep 1)"})()
    (ranking,) = rank_subscribers([Observation(planned, "complete", None, kept.row,  # type: ignore
                                               per_subscriber=kept.per_subscriber)])
    assert [s.topic for s in ranking.topics] == [0, 2, 1]
    assert ranking.spread == 6.0
    assert ranking.line().startswith("udp oneway 1000 Hz: subscriber 0 p50 1.00 µs")


def test_cpu_and_rss_count_every_subscriber() -> None:
    from mwperf.store.rows import process_columns
    from mwperf.show.table import row_from_result

    subs = [agent_report("sub", measured=measurement("oneway", sent=1000, lost=0),
                         wall_s=2.0, cpu_s=0.1 * (i + 1)) for i in range(3)]
    runs = [*(sub_run(i, r) for i, r in enumerate(subs)),
            AgentRun("pub", 0, agent_report("pub", sent=1000), "")]
    result = merged(runs)
    result["config"] = {**CONFIG, "subscribers": 3}
    columns = process_columns(result)
    assert math.isclose(columns["sub_cpu_s"], 2 * (0.1 + 0.2 + 0.3))
    assert columns["sub_rss_kib"] == 3 * 4096 and math.isclose(columns["sub_cpu_pct"], 60.0)
    assert row_from_result(result, None).rss_kib == 4 * 4096
    result["agents"] = result["agents"][1:]  # one subscriber left no report
    assert row_from_result(result, None).cpu_pct is None  # a part of the CPU is not the CPU
