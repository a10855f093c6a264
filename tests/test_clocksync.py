"""clocksync.py: the agents' clock-sync flags and the test-only clocks (no root needed)."""

from dataclasses import replace

import pytest

from mwperf.clocksync import (clock_address, clock_args, in_test_clock, parse_test_clock,
                              true_drift_ppm, true_offset_ns)
from mwperf.config import PointConfig
from mwperf.errors import UsageError

POINT = PointConfig(transport="udp", mode="oneway", rate=100.0, payload="64", payload_bytes=64,
                    duration_ns=10**9, count=None, warmup_ns=0, peer_timeout_ns=2 * 10**9,
                    clock_sync=True)


class Hosts:
    def address_of(self, name: str) -> str:
        return {"pub": "10.1.2.1", "sub": "10.1.2.2"}[name]


def test_clock_args_per_role() -> None:
    address = clock_address(POINT, Hosts())
    assert address == "10.1.2.1:47999"
    assert clock_args("pub", POINT, address) == ["--clock-serve", "0.0.0.0:47999"]
    assert clock_args("sub", POINT, address) == ["--clock-peer", "10.1.2.1:47999"]
    assert clock_args("ping", POINT, address) == []
    assert clock_args("sub", replace(POINT, clock_sync=False), address) == []
    assert clock_address(replace(POINT, mode="roundtrip"), Hosts()) is None
    loop = clock_address(POINT, None)
    assert loop is not None and loop.startswith("127.0.0.1:")


def test_parse_test_clock_and_errors() -> None:
    assert parse_test_clock("b=1000,30; a=0,-10", ("a", "b")) == (("b", 1000, 30.0),
                                                                  ("a", 0, -10.0))
    assert parse_test_clock(None, None) == ()
    for bad in ("c=10", "b=1.5", "b=10,x", "b=-1", "b=10,2000", "b"):
        with pytest.raises(UsageError, match="--test-clock"):
            parse_test_clock(bad, ("a", "b"))
    with pytest.raises(UsageError, match="emulated hosts"):
        parse_test_clock("b=10", None)


def test_argv_in_a_time_namespace_with_drift() -> None:
    cfg = replace(POINT, test_clock=(("b", 1000, 30.0),))
    assert in_test_clock(cfg, "pub", ["agent", "pub"]) == ["agent", "pub"]  # pub on host a
    assert in_test_clock(cfg, "sub.1", ["agent", "sub"]) == [
        "unshare", "--time", "--monotonic=1000", "--fork", "--kill-child", "--",
        "agent", "sub", "--test-clock-drift-ppm", "30.0"]


def test_true_offset_from_the_injected_clocks() -> None:
    cfg = replace(POINT, test_clock=(("b", 1000, 0.0),))  # sub 1000 s ahead
    assert true_offset_ns(cfg, 5_000 * 10**9) == pytest.approx(-1000e9)
    cfg = replace(POINT, test_clock=(("a", 0, 50.0),))  # pub 50 ppm fast since CLOCK_MONOTONIC 0
    assert true_offset_ns(cfg, 2_000 * 10**9) == pytest.approx(2000e9 * 50e-6)
    assert true_drift_ppm(cfg) == pytest.approx(50.0)
    assert true_offset_ns(POINT, 1) is None


def test_details_line() -> None:
    from mwperf.show.details import clock_sync

    def render_clock_sync(cs: dict | None) -> str:
        return clock_sync({"measurement": {"clock_sync": cs}})
    cs = {"status": "ok", "offset_ns": -1_000_000_123_456, "drift_ppm": -40.4,
          "error_bound_ns": 5_100_000, "min_rtt_ns": 10_100_000, "probes_used": 43,
          "probes_answered": 239, "probes_sent": 240}
    line = render_clock_sync(cs)
    assert "offset -1000.000123456 s" in line and "drift -40.40 ppm" in line and "5.10 ms" in line
    failed = render_clock_sync({**cs, "status": "no-answer", "error_bound_ns": None,
                                "probes_answered": 0})
    assert "NOT corrected" in failed
    assert render_clock_sync(None) == ""
