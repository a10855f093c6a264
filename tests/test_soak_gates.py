"""Soak gates (issue 29): every gate's text, its pass and its fail on a result with known
figures, a figure not measured failing, the exit code, and the growth method (least-squares
slope over the steady state x its duration, not last - first) on series with a known slope."""

import pytest

from mwperf.errors import UsageError
from mwperf.soak import growth as g
from mwperf.soak.gates import FORMS, evaluate, exit_code, failed, parse_gate, parse_gates
from mwperf.show.soak import gate_lines, render

S = 1_000_000_000
MiB = 1024 * 1024


def series(values, field="rss_bytes", step_s=1.0, start_s=0.0):
    rows = []
    for i, v in enumerate(values):
        row = {"t_ns": int((start_s + i * step_s) * S), "rss_bytes": 1000, "fds": 5,
               "threads": 2, "live_heap_bytes": None}
        row[field] = v
        rows.append(row)
    return rows


def process(name, rss_growth=0.0, fds=0.0, threads=0.0, heap=None, live=False):
    return {"name": name, "kind": "agent", "pid": 1, "live_heap": live,
            "series": [{"t_ns": 0, "rss_bytes": 1, "fds": 1, "threads": 1,
                        "live_heap_bytes": 1 if live else None}],
            "growth": {"method": g.METHOD, "samples": 50, "start_ns": 5 * S, "end_ns": 55 * S,
                       "rss_bytes": rss_growth, "fds": fds, "threads": threads,
                       "live_heap_bytes": heap}}


def result(processes=(), count=10_000, matched_ns=3_000_000, p50=50_000, p99=900_000,
           max_ns=5_000_000, sent=10_000, lost=3, measured=True):
    return {"measurement": {"response": {"count": count, "p50_ns": p50, "p99_ns": p99,
                                         "max_ns": max_ns},
                            "accounting": {"sent": sent, "lost": lost}} if measured else None,
            "discovery": {"matched_ns": matched_ns, "first_reply_ns": 1000, "probes": 1}
            if measured else None,
            "resources": {"interval_ns": S, "origin_ns": 0, "steady": None,
                          "processes": list(processes)}}


@pytest.mark.parametrize("text,metric,limit", [
    ("rss-growth<=2MiB", "rss-growth", 2 * MiB), ("rss-growth<=0", "rss-growth", 0),
    ("fd-growth<=0", "fd-growth", 0), ("threads-growth<=1", "threads-growth", 1),
    ("live-allocs-growth<=0", "live-allocs-growth", 0),
    ("live-allocs-growth<=64KiB", "live-allocs-growth", 65536),
    ("min-samples=100000", "min-samples", 100000), ("matched-within=5s", "matched-within", 5 * S),
    ("p50<=100us", "p50", 100_000), ("p99<=2ms", "p99", 2_000_000), ("max<=1s", "max", S),
    ("lost<=0", "lost", 0), ("loss<=0.5%", "loss", 0.5), (" p99 <= 2ms ", "p99", 2_000_000),
    ("cpu<=20%", "cpu", 20), ("rss<=20480KiB", "rss", 20 * MiB), ("late<=1.9%", "late", 1.9),
    ("too-late<=0.1%", "too-late", 0.1)])
def test_every_form_parses(text, metric, limit):
    gate = parse_gate(text)
    assert (gate.metric, gate.limit) == (metric, limit)


@pytest.mark.parametrize("text", ["rss<1MiB", "rss-growth<1MiB", "rss-growth<=lots",
                                  "min-samples<=5", "p99=2ms", "matched-within<=5s",
                                  "lost<=1.5", "loss<=-1%", "fd-growth<=-1", "", "p99"])
def test_bad_gate_is_a_usage_error_naming_the_flag_and_the_forms(text):
    with pytest.raises(UsageError) as caught:
        parse_gate(text)
    message = str(caught.value)
    assert message.startswith("--gate:") and all(form in message for form in FORMS)
    assert caught.value.exit_code == 2


def check(text, res):
    entry = evaluate(parse_gates([text]), res)[0]
    return entry["passed"], entry


@pytest.mark.parametrize("text,passes,fails", [
    ("min-samples=10000", {}, {"count": 9999}),
    ("matched-within=5ms", {}, {"matched_ns": 5_000_001}),
    ("p50<=50us", {}, {"p50": 50_001}),
    ("p99<=1ms", {}, {"p99": 1_000_001}),
    ("max<=5ms", {}, {"max_ns": 5_000_001}),
    ("lost<=3", {}, {"lost": 4}),
    ("loss<=0.03%", {}, {"lost": 4}),
])
def test_point_gates_pass_at_the_limit_and_fail_past_it(text, passes, fails):
    assert check(text, result(**passes))[0] is True
    ok, entry = check(text, result(**fails))
    assert ok is False and entry["figure"] is not None
    assert "needs" in entry["what"]


@pytest.mark.parametrize("text", ["min-samples=1", "matched-within=1h", "p99<=1h", "lost<=100",
                                  "loss<=100%"])
def test_a_figure_not_measured_fails(text):
    ok, entry = check(text, result(measured=False))
    assert ok is False and entry["figure"] is None and entry["what"].startswith("not measured")


@pytest.mark.parametrize("text,field", [("rss-growth<=1MiB", "rss_growth"),
                                        ("fd-growth<=1", "fds"), ("threads-growth<=1", "threads")])
def test_growth_gates_check_every_process_and_name_the_failed_ones(text, field):
    limit = parse_gate(text).limit
    good = [process("ping", **{field: limit}), process("mosquitto", **{field: 0})]
    ok, entry = check(text, result(good))
    assert ok and entry["figure"] == limit and len(entry["processes"]) == 2
    bad = good + [process("zenoh-router", **{field: limit + 1})]
    ok, entry = check(text, result(bad))
    assert not ok and entry["figure"] == limit + 1
    assert "zenoh-router" in entry["what"] and "ping" not in entry["what"].split("(limit")[0]
    assert [p["passed"] for p in entry["processes"]] == [True, True, False]


def test_a_process_with_too_few_samples_fails_a_growth_gate():
    ok, entry = check("rss-growth<=1MiB", result([process("pong", rss_growth=None)]))
    assert not ok and "pong" in entry["what"]


def test_live_allocs_gate_applies_to_processes_with_a_live_heap_only():
    procs = [process("pong", heap=0.0, live=True), process("mosquitto")]  # a daemon: no heap
    ok, entry = check("live-allocs-growth<=0", result(procs))
    assert ok and [p["name"] for p in entry["processes"]] == ["pong"]
    ok, entry = check("live-allocs-growth<=0", result([process("pong", heap=8.0, live=True)]))
    assert not ok
    ok, entry = check("live-allocs-growth<=0", result([process("mosquitto")]))
    assert not ok and entry["what"].startswith("not measured")


def test_no_process_sampled_fails_growth_gates():
    ok, entry = check("rss-growth<=1GiB", result([]))
    assert not ok and entry["figure"] is None


def test_exit_code_is_one_with_a_failed_gate_else_the_runs():
    res = result([process("ping")])
    res["gates"] = evaluate(parse_gates(["rss-growth<=1MiB", "p99<=1us"]), res)
    assert [x["gate"] for x in failed(res)] == ["p99<=1us"]
    assert exit_code(0, len(failed(res))) == 1
    assert exit_code(3, 0) == 3 and exit_code(0, 0) == 0
    lines = gate_lines(res["gates"])
    assert lines[0].startswith("gate rss-growth<=1MiB: passed")
    assert lines[1].startswith("gate p99<=1us: FAILED  p99 900 µs, needs <= 1.00 µs")
    assert "gate p99<=1us: FAILED" in render(res)


# ---- the growth method --------------------------------------------------------------------

def test_fit_finds_a_known_slope_through_noise():
    noise = [0, 3, -2, 1, -3, 2, 0, -1, 2, -2] * 6
    points = [(t, 100 + 7.5 * t + noise[t]) for t in range(60)]
    slope, error = g.fit(points)
    assert slope == pytest.approx(7.5, abs=0.1) and 0 < error < 0.1


def test_growth_is_slope_times_duration_not_last_minus_first():
    # 4096 B/s for 50 s, plus one freed block at the very end: last - first would say 0
    values = [10 * MiB + 4096 * t for t in range(60)]
    values[-1] = 10 * MiB
    rows = series(values)
    found = g.growth(rows, (5 * S, 59 * S))
    assert found["samples"] == 55 and found["start_ns"] == 5 * S and found["end_ns"] == 59 * S
    assert values[-1] - values[5] == 10 * MiB - values[5] < 0
    assert found["rss_bytes"] == pytest.approx(4096 * 54, rel=0.15)
    assert found["rss_bytes_per_min"] == pytest.approx(4096 * 60, rel=0.15)


def test_growth_leaves_out_what_is_before_the_steady_state():
    # a warm-up that grows 1 MiB/s, then flat: no growth in the steady state
    values = [min(t, 10) * MiB for t in range(40)]
    found = g.growth(series(values), (12 * S, 39 * S))
    assert found["rss_bytes"] == 0 and found["fds"] == 0 and found["threads"] == 0
    assert found["live_heap_bytes"] is None  # never sampled (no --count-allocs)


def test_too_few_samples_in_the_steady_state_is_not_a_figure():
    found = g.growth(series([1, 2, 3, 4]), (1 * S, 2 * S))
    assert found["samples"] == 2 and found["rss_bytes"] is None
    assert g.growth(series([1, 2, 3]), None)["rss_bytes"] is None


def test_steady_window_leaves_out_the_first_tenth_at_least_two_seconds():
    origin = 100 * S
    phases = {"measure_start_ns": 102 * S, "drained_ns": 162 * S}  # 60 s measured
    assert g.steady_window(phases, origin) == (8 * S, 62 * S)  # 6 s left out
    short = {"measure_start_ns": 102 * S, "drained_ns": 112 * S}  # 10 s: 2 s left out
    assert g.steady_window(short, origin) == (4 * S, 12 * S)
    assert g.steady_window({"measure_start_ns": 102 * S, "drained_ns": 103 * S}, origin) is None
    assert g.steady_window(None, origin) is None
