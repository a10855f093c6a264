"""Peak-rate search (issue 40, item 3) on systems whose capacity is known: the walk finds it within
its resolution; a capacity outside the range is said, not guessed past; one spurious failure
below the capacity is corrected by the linear scan; Ctrl-C keeps the walk so far; repeated walks
drop the best and the worst; each trial's verdict from its result's figures; the flags' errors
name the flag (exit 2) before anything runs; through the CLI every trial is a saved point and
peak.json lists them."""

import json
from pathlib import Path

import pytest

from conftest import read_saved, run_mwperf
from mwperf.errors import UsageError
from mwperf.peak.run import parse_request
from mwperf.peak.search import Trial, combined, search
from mwperf.peak.verdict import graph_trial, point_trial


def system(capacity, spurious=(), stop_at=None):
    """A probe passing every rate up to ``capacity``, failing those in ``spurious`` once."""
    seen = []

    def probe(rate):
        rate = float(f"{rate:.3g}")
        seen.append(rate)
        if stop_at is not None and len(seen) == stop_at:
            return Trial(rate, False, "interrupted", interrupted=True)
        flaky = any(abs(rate - s) < 1e-9 for s in spurious) and seen.count(rate) == 1
        return Trial(rate, rate <= capacity and not flaky, "known capacity")
    return probe, seen


@pytest.mark.parametrize("capacity", [37.0, 737.0, 12_345.0, 88_000.0])
def test_the_walk_finds_a_known_capacity_within_its_resolution(capacity):
    probe, seen = system(capacity)
    walk = search(probe, 10, 100_000, resolution=0.05, scan_step=0.05, scan_steps=3)
    assert walk.verdict == "found"
    assert capacity / 1.06 <= walk.peak <= capacity  # 5 % resolution, 3 significant digits
    assert len(seen) <= 2 + 9 + 3  # the ends, log2(ln(1e4)/ln(1.05)) halvings, the scan
    assert [t.step for t in walk.trials][:2] == ["low", "high"]
    assert all(t.passed == (t.rate <= capacity) for t in walk.trials)


def test_a_capacity_outside_the_range_is_said():
    below = search(system(5.0)[0], 10, 1000)
    assert (below.peak, below.verdict) == (None, "below the range: the lowest rate failed")
    above = search(system(5000.0)[0], 10, 1000)
    assert above.peak == 1000 and above.verdict.startswith("above the range")
    assert len(above.trials) == 2


def test_the_scan_recovers_from_one_spurious_failure():
    # the binary search's first middle (1000 Hz) fails once although the system keeps 2000 Hz:
    # the search then looks below it, and the scan up from its best pass walks past it again
    probe, _ = system(2000.0, spurious=(1000.0,))
    walk = search(probe, 10, 100_000, resolution=0.05, scan_step=0.05, scan_steps=3)
    assert walk.verdict == "found"
    assert walk.peak > 1000 * 1.0  # the scan found passes above the spurious failure
    failed_once = [t for t in walk.trials if t.rate == 1000.0]
    assert failed_once and not failed_once[0].passed


def test_an_interrupted_walk_keeps_its_trials():
    probe, _ = system(737.0, stop_at=4)
    walk = search(probe, 10, 100_000)
    assert walk.verdict == "interrupted" and len(walk.trials) == 4
    assert walk.peak is not None and walk.peak <= 737  # the best pass so far


def test_repeated_walks_drop_the_best_and_the_worst():
    assert combined([100.0, 200.0, 210.0, 220.0, 900.0]) == (
        210.0, "mean of 3 after dropping the best and worst")
    assert combined([100.0, 200.0]) == (150.0, "mean of 2")
    assert combined([]) == (None, "no walk found a peak")


def point_result(sent=1000, lost=0, p99=500_000, behind=0, status="complete"):
    return {"run_id": "r", "status": status, "status_reason": None,
            "measurement": {"accounting": {"sent": sent, "lost": lost},
                            "response": {"p99_ns": p99},
                            "schedule": {"period_ns": 1_000_000, "behind_count": behind}}}


@pytest.mark.parametrize("figures,passed,says", [
    ({}, True, "loss 0%, p99 500 µs <= 1.00 ms"),
    ({"lost": 11}, False, "loss 1.1% > 1%"),
    ({"lost": 10}, True, "loss 1%"),
    ({"p99": 1_000_001}, False, "p99 1.00 ms > 1.00 ms"),
    ({"behind": 20}, False, "the sender fell behind on 2% of sends > 1%"),
    ({"status": "failed"}, False, "the point failed"),
    ({"sent": 0}, False, "not measured"),
])
def test_a_point_trial_is_judged_by_its_figures(figures, passed, says):
    trial = point_trial(1000.0, point_result(**figures), 1.0, None)
    assert trial.passed is passed and says in trial.why


def test_a_graph_trial_needs_every_edge_within_its_own_period():
    def edge(topic, period_ns, p99_ns, received=100, lost=0):
        return {"topic": topic, "from": "a", "to": "b", "period_ns": period_ns,
                "received": received, "lost": lost, "latency": {"p99_ns": p99_ns}}
    ok = {"status": "complete", "edges": [edge("imu", 1_000_000, 900_000),
                                          edge("scan", 100_000_000, 5_000_000)]}
    assert graph_trial(2.0, ok, 1.0, None).passed
    slow = {**ok, "edges": [edge("imu", 1_000_000, 1_100_000), ok["edges"][1]]}
    trial = graph_trial(2.0, slow, 1.0, None)
    assert not trial.passed and "imu a->b p99 1.10 ms > 1.00 ms" in trial.why
    lossy = {**ok, "edges": [edge("imu", 1_000_000, 1000, received=97, lost=3)]}
    assert "loss 3% > 1%" in graph_trial(2.0, lossy, 1.0, None).why


@pytest.mark.parametrize("args,says", [
    (("10..", None, None, None), "--peak-range: LOW..HIGH in messages per second"),
    (("100..10", None, None, None), "--peak-range"),
    ((None, "150%", None, None), "--peak-loss: a percentage 0..100"),
    ((None, None, "soon", None), "--peak-p99: 'period'"),
    ((None, None, None, "0"), "--peak-repeat: a whole number 1..20"),
])
def test_bad_peak_flags_name_the_flag(args, says):
    with pytest.raises(UsageError, match=says.replace("(", r"\(").replace(".", r"\.")):
        parse_request(*args, graph=False)


def test_a_peak_topic_is_a_graphs_alone():
    with pytest.raises(UsageError, match="--peak-topic: only with --graph"):
        parse_request(None, None, None, None, False, "/camera")
    assert parse_request(None, None, None, None, True, " /camera ").topic == "/camera"


def test_the_defaults():
    request = parse_request(None, None, None, None, graph=False)
    assert (request.low, request.high, request.max_loss, request.p99_limit_ns,
            request.repeat) == (10, 100_000, 1.0, None, 1)
    assert parse_request("0.5..8x", "0.5%", "2ms", "3", graph=True).p99_limit_ns == 2_000_000


@pytest.mark.parametrize("args,says", [
    (("--peak-range", "1..2"), "--peak-range: only with --peak-search"),
    (("--peak-search", "--rate", "100"), "--peak-search: not with --rate"),
    (("--peak-search", "--mode", "throughput"), "--peak-search: --mode roundtrip or oneway"),
    (("--peak-search", "--peak-repeat", "x"), "--peak-repeat: a whole number"),
])
def test_peak_usage_errors_exit_2_before_anything_runs(fake_env, args, says):
    done = run_mwperf("run", "--transport", "udp", *args, "--no-save", env=fake_env)
    assert done.returncode == 2 and says in done.stderr, done.stderr
    assert not list(Path(fake_env["FAKE_AGENT_TRACE"]).glob("*.pid"))


def test_every_trial_is_a_saved_point_and_peak_json_lists_them(fake_env, tmp_path: Path):
    done = run_mwperf("run", "--transport", "udp", "--duration", "1s", "--peak-search",
                      "--peak-range", "10..20", "--results", str(tmp_path), env=fake_env)
    peak = json.loads(next(tmp_path.glob("*-peak-udp-*/peak.json")).read_text())
    trials = peak["walks"][0]["trials"]
    assert [t["rate"] for t in trials][:2] == [10, 20]
    for t in trials:  # each trial's point saved, at its rate
        saved = read_saved(tmp_path / t["run_id"] / "result.json")
        assert saved["config"]["rate"] == t["rate"]
    assert done.returncode == (0 if peak["peak"] is not None else 1)
    assert peak["status"] == "complete" and f"saved in {tmp_path}" in done.stdout
