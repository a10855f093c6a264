"""A throughput point's rules (throughput.py) and result figures (throughput_result.py) from
synthetic agent reports: the arithmetic, the defaults and the refusals."""

from dataclasses import dataclass, field
from typing import Any

import pytest

from mwperf.errors import UsageError
from mwperf.throughput import check_transport, complete, delivery
from mwperf.throughput_result import complete as complete_result, side_cpu, wire_rate


@dataclass(frozen=True)
class FakePoint:
    transport: str = "cyclonedds"
    reliability: str = "reliable"
    history: str = "keep-last"
    rate: float = 1000.0
    qos_given: tuple[str, ...] = ()


@dataclass
class FakeProfile:
    qos: dict[str, Any] = field(default_factory=lambda: {"history": ["keep-last", "keep-all"]})


def test_a_reliable_stream_runs_as_fast_as_possible_with_keep_all_where_there_is_one() -> None:
    point = complete(FakePoint(), {}, FakeProfile())  # type: ignore[arg-type]
    assert (point.rate, point.history, point.qos_given) == (0.0, "keep-all", ("history",))
    # a history the user chose stays; a transport without keep-all keeps its default
    given = FakePoint(history="keep-last:50", qos_given=("history",))
    assert complete(given, {}, FakeProfile()).history == "keep-last:50"  # type: ignore[arg-type]
    assert complete(FakePoint(), {}, FakeProfile({"history": ["keep-last"]})  # type: ignore[arg-type]
                    ).history == "keep-last"


def test_only_best_effort_is_offered_a_rate() -> None:
    with pytest.raises(UsageError, match="--rate: a reliable throughput stream"):
        complete(FakePoint(rate=100.0), {"rate": "100"}, FakeProfile())  # type: ignore[arg-type]
    point = complete(FakePoint(reliability="best-effort", rate=100.0), {"rate": "100"},
                     FakeProfile())  # type: ignore[arg-type]
    assert (point.rate, point.history) == (100.0, "keep-last")
    udp = complete(FakePoint(transport="udp", rate=5.0), {"rate": "5"}, None)  # type: ignore[arg-type]
    assert udp.rate == 5.0 and delivery(udp) == "best-effort"  # type: ignore[arg-type]


def test_sockets_have_the_delivery_they_have() -> None:
    check_transport(FakePoint(transport="udp"))  # type: ignore[arg-type]  # the default QoS: fine
    with pytest.raises(UsageError, match="udp is best-effort by nature"):
        check_transport(FakePoint(transport="udp", qos_given=("reliability",)))  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="uds is reliable by nature"):
        check_transport(FakePoint(transport="uds", reliability="best-effort",  # type: ignore[arg-type]
                                  qos_given=("reliability",)))
    with pytest.raises(UsageError, match="--topics: not with --mode throughput"):
        complete(FakePoint(), {"topics": "2"}, None)  # type: ignore[arg-type]


def measurement(sent: int, received: int, lost: int) -> dict[str, Any]:
    return {"payload_bytes": 1000, "accounting": {"sent": sent, "received": received, "lost": lost},
            "throughput": {"duration_s": 2.0, "msgs_per_s": received / 2,
                           "payload_bytes_per_s": received * 500, "message_bytes_per_s": 0},
            "series": [{"t_s": t, "sent": 0, "received": received // 3} for t in range(3)]}


PUB = {"role": "pub", "throughput": {
    "messages": 1000, "steady_wall_s": 2.0, "steady_cpu_s": 0.5,
    "sending": {"in_send_s": 1.5, "blocked_s": 1.0, "refused": 3, "send_p10_ns": 100,
                "send_p50_ns": 200, "send_p99_ns": 900, "send_max_ns": 5000,
                "series": [600, 400]}}}


def sub(messages: int, cpu_s: float) -> dict[str, Any]:
    return {"role": "sub", "throughput": {"messages": messages, "steady_wall_s": 2.0,
                                          "steady_cpu_s": cpu_s, "checked_every": 1}}


def test_the_figures_come_from_both_sides() -> None:
    m = measurement(1000, 900, 100)
    complete_result(m, {"rate": 0.0, "subscribers": 1}, "best-effort", PUB, [sub(900, 0.9)])
    tp = m["throughput"]
    assert (tp["delivery"], tp["offered_per_s"], tp["sent_per_s"]) == ("best-effort", None, 500.0)
    assert tp["loss_pct"] == 10.0
    assert tp["sender"] == {"sending_s": 2.0, "in_send_s": 1.5, "blocked_s": 1.0, "refused": 3,
                            "send_p10_ns": 100, "send_p50_ns": 200, "send_p99_ns": 900,
                            "send_max_ns": 5000}
    assert tp["cpu"]["pub"] == {"cpu_s": 0.5, "per_msg_us": 500.0, "per_mb_ms": 500.0}
    assert tp["cpu"]["sub"] == {"cpu_s": 0.9, "per_msg_us": 1000.0, "per_mb_ms": 1000.0}
    assert [p["sent"] for p in m["series"]] == [600, 400, 0]


def test_several_subscribers_lose_against_sent_times_subscribers() -> None:
    # the pooled accounting (merge.py) already counts pub's 1000 once per subscriber
    m = measurement(2000, 1900, 100)
    complete_result(m, {"rate": 0.0, "subscribers": 2}, "reliable", PUB,
                    [sub(1000, 0.5), sub(900, 0.4)])
    tp = m["throughput"]
    assert tp["loss_pct"] == 5.0 and tp["subscribers"] == 2
    assert tp["cpu"]["sub"]["cpu_s"] == 0.9
    assert tp["cpu"]["sub"]["per_msg_us"] == pytest.approx(0.9 / 1900 * 1e6, rel=1e-3)


def test_nothing_delivered_has_no_per_message_figure() -> None:
    assert side_cpu(0.1, 0, 1000) == {"cpu_s": 0.1, "per_msg_us": None, "per_mb_ms": None}


def test_wire_bytes_per_second_from_the_links_steady_phase() -> None:
    steady = {"phases": {"steady": {"bytes": 3000, "packets": 3, "seconds": 2.0}}}
    wire = {"links": [{"up": steady, "down": {"phases": {"steady": {"bytes": 1000,
                                                                      "seconds": 2.0}}}}]}
    assert wire_rate(wire) == 2000.0
    assert wire_rate({"status": "udp stays on one machine", "links": []}) is None
    assert wire_rate(None) is None


def test_per_second_extremes_leave_the_partial_last_second_out() -> None:
    from mwperf.throughput_result import per_second, unsteady
    rows = [{"received": n} for n in (100, 90, 110, 7)]
    assert per_second(rows) == {"whole": 3, "min": 90, "median": 100, "max": 110}
    assert per_second(rows[:2]) is None
    assert unsteady({"per_second": per_second(rows)}) is None
    collapsed = per_second([{"received": n} for n in (100, 100, 30, 5)])
    assert unsteady({"per_second": per_second([{"received": n} for n in (100, 30, 5)])}) is None
    assert "not steady: 30 messages" in (unsteady({"per_second": collapsed}) or "")


def test_the_middlewares_holds_reach_the_summary_and_its_line() -> None:
    """A publisher the middleware paced (Fast DDS's heartbeat-paced keep-all: issue 41) kept
    offering; how often and how long it was held comes from its report to the printed line."""
    from mwperf.show.throughput import render_throughput

    held = {**PUB, "throughput": {**PUB["throughput"], "sending": {
        **PUB["throughput"]["sending"], "holds": 2, "longest_hold_ns": 2_070_000_000}}}
    m = measurement(1000, 1000, 0)
    complete_result(m, {"rate": 0.0, "subscribers": 1}, "reliable", held, [sub(1000, 0.9)])
    assert (m["throughput"]["sender"]["holds"],
            m["throughput"]["sender"]["longest_hold_ns"]) == (2, 2_070_000_000)
    text = render_throughput(m)
    assert "held 2 times >= 100 ms by the middleware (longest 2.07 s" in text
    # none: no word of it (and an older report without the fields reads as before)
    complete_result(plain := measurement(1000, 1000, 0), {"rate": 0.0, "subscribers": 1},
                    "reliable", PUB, [sub(1000, 0.9)])
    assert "held" not in render_throughput(plain)


def test_the_sampling_line_says_its_ordinal_in_english():
    from mwperf.show.throughput import _ordinal

    assert [_ordinal(n) for n in (2, 3, 4, 11, 12, 13, 16, 21, 22, 101, 112, 256)] == [
        "2nd", "3rd", "4th", "11th", "12th", "13th", "16th", "21st", "22nd", "101st", "112th",
        "256th"]
