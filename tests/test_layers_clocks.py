"""--layers across two clocks (python/mwperf/layers_clocks.py, through parts/layers.py's
``build``): a pong or a sub on another host stamps on another CLOCK_MONOTONIC. The rows here
are written as the agents write them, the far side's stamps shifted by an offset (days, either
way), so a layer that mixed the clocks would be off by that much."""

import csv
from pathlib import Path

import pytest
from test_layers_schema import with_layers

from mwperf.layers_clocks import aligned_pong, on_pub_clock
from mwperf.layers_rows import COLUMNS, Row
from mwperf.parts.layers import build
from mwperf.schema import validation_error

DAY_NS = 86_400 * 10**9
WHERE = {"pong": "ping on this machine, pong on host 'b'"}


def row(seq, intended=None, write=None, send_first=None, recv_last=None, take=None,
        callback=None, topic=0):
    return Row(topic, seq, intended, write, send_first, send_first, recv_last, recv_last, take,
               callback)


def write_rows(path: Path, rows: list[Row]) -> None:
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(COLUMNS)
        for r in rows:
            out.writerow(["" if getattr(r, c) is None else getattr(r, c) for c in COLUMNS])


def shifted(r: Row, by: int) -> Row:
    return on_pub_clock(r, {"offset_ns": by, "t0_ns": 0, "drift_ppm": 0.0})


def by_name(layers):
    return {layer["name"]: layer for layer in layers}


def round_trips(theta: int) -> tuple[list[Row], list[Row]]:
    """Three round trips: forward and return network times differ (700/300, 900/100, ...),
    the pong's clock ``theta`` ahead of the ping's."""
    pings, pongs = [], []
    for seq, (there, back) in enumerate([(700, 300), (900, 100), (500, 500)], start=1):
        t = seq * 1_000_000
        pings.append(row(seq, intended=t, write=t + 100, send_first=t + 300,
                         recv_last=t + 300 + there + 2000 + back, take=t + 3400 + there + back,
                         callback=t + 3400 + there + back))
        pongs.append(shifted(row(seq, recv_last=t + 300 + there, take=t + 500 + there,
                                 callback=t + 550 + there, write=t + 2200 + there,
                                 send_first=t + 2300 + there), theta))
    return pings, pongs


@pytest.mark.parametrize("theta", [5 * DAY_NS, -5 * DAY_NS, 0])
def test_a_round_trip_across_two_clocks_sums_kernel_network_clock_free(tmp_path, theta):
    pings, pongs = round_trips(theta)
    write_rows(tmp_path / "ping.csv", pings)
    write_rows(tmp_path / "pong.csv", pongs)
    s, warnings = build("roundtrip", tmp_path, [], {}, None, {}, apart=WHERE)
    assert warnings == [] and s["split"] == s["messages"] == 3
    totals = sorted(p.take - p.intended for p in pings)
    assert s["total"]["max_ns"] == totals[-1] and s["total"]["q_ns"][0] == totals[0]
    layers = by_name(s["layers"])
    assert sorted(layers["kernel_network"]["q_ns"][i] for i in (0, -1)) == [1000, 1000]
    assert layers["executor_callback"]["p50_ns"] == 1700  # the pong's, on its own clock
    assert abs(sum(layer["share"] for layer in s["layers"]) - 1) < 1e-12
    for direction in ("forward", "return"):
        layers = by_name(s["directions"][direction])
        kn = layers["kernel_network"]
        assert kn["observable"] is False and kn["p50_ns"] is None
        assert kn["note"].startswith("two clocks (ping on this machine, pong on host 'b')")
        assert all(layer["share"] is None for layer in layers.values())
        assert layers["middleware_send"]["p50_ns"] in (200, 100)
    assert by_name(s["directions"]["forward"])["app_send"]["p50_ns"] == 100
    assert any(n.startswith("two clocks") for n in s["notes"])
    assert validation_error(with_layers(s), "run-result") is None


def test_aligned_pong_splits_the_round_trip_s_network_time_in_halves():
    ping = row(1, intended=0, write=10, send_first=20, recv_last=3020, take=3030)
    pong = row(1, recv_last=DAY_NS + 1000, take=DAY_NS + 1100, write=DAY_NS + 2000,
               send_first=DAY_NS + 2020)
    aligned = aligned_pong(ping, pong)
    assert aligned.recv_last - ping.send_first == ping.recv_last - aligned.send_first == 990
    assert aligned.take - aligned.recv_last == 100  # the pong's own durations unchanged
    assert aligned_pong(ping, row(1)) == row(1)  # nothing to align with


def test_a_one_way_across_two_clocks_uses_the_clock_sync_estimate_and_carries_its_bound(
        tmp_path):
    offset = 3 * DAY_NS  # the pub's clock minus the sub's
    pub = [row(s, intended=s * 10**6, write=s * 10**6 + 50, send_first=s * 10**6 + 150)
           for s in (1, 2)]
    sub = [row(s, recv_last=s * 10**6 + 950 - offset, take=s * 10**6 + 1000 - offset,
               callback=s * 10**6 + 1010 - offset) for s in (1, 2)]
    write_rows(tmp_path / "pub.csv", pub)
    write_rows(tmp_path / "sub.csv", sub)
    sync = {"status": "ok", "offset_ns": offset, "t0_ns": 10**6, "drift_ppm": 0.0,
            "error_bound_ns": 40_000}
    reports = [("sub", {"measurement": {"clock_sync": sync}})]
    s, warnings = build("oneway", tmp_path, reports, {}, None, {}, apart=
                        {"sub": "pub on host 'b', sub on this machine"})
    assert warnings == [] and s["split"] == 2 and s["clock_bound_ns"] == 40_000
    assert s["total"]["p50_ns"] == 1010
    assert by_name(s["layers"])["kernel_network"]["p50_ns"] == 800
    assert any("±40.0 µs" in n for n in s["notes"])
    assert validation_error(with_layers(s), "run-result") is None


def test_a_one_way_across_two_clocks_without_an_estimate_withholds_what_mixes_them(tmp_path):
    write_rows(tmp_path / "pub.csv", [row(1, intended=0, write=50, send_first=150)])
    write_rows(tmp_path / "sub.csv", [row(1, recv_last=DAY_NS, take=DAY_NS + 40,
                                          callback=DAY_NS + 45)])
    reports = [("sub", {"measurement": {"clock_sync": {"status": "no-answer"}}})]
    s, warnings = build("oneway", tmp_path, reports, {}, None, {}, apart=
                        {"sub": "pub on host 'b', sub on this machine"})
    layers = by_name(s["layers"])
    assert layers["kernel_network"]["observable"] is False
    assert "no estimate of their offset" in layers["kernel_network"]["note"]
    assert layers["app_send"]["p50_ns"] == 50 and layers["middleware_receive"]["p50_ns"] == 40
    assert s["total"]["p50_ns"] is None and all(lay["share"] is None for lay in s["layers"])
    assert [w["code"] for w in warnings] == ["layers-incomplete"]
    assert validation_error(with_layers(s), "run-result") is None


def test_one_clock_is_unchanged(tmp_path):
    pings, pongs = round_trips(0)
    write_rows(tmp_path / "ping.csv", pings)
    write_rows(tmp_path / "pong.csv", pongs)
    s, _ = build("roundtrip", tmp_path, [], {}, None, {})
    forward = by_name(s["directions"]["forward"])["kernel_network"]
    assert forward["q_ns"][0] == 500 and forward["max_ns"] == 900
    assert "clock_bound_ns" not in s
