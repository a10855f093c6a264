"""mwperf compare: the statistics against hand-computed values, budgets and their errors,
and the exit codes on synthetic runs with a known shift, no shift, and noise."""

from pathlib import Path

import pytest
from conftest import run_mwperf
from report_support import add_point, add_sweep, config, latencies

from mwperf.compare import compare
from mwperf.compare.budget import Budgets, from_file, parse_budget, resolve
from mwperf.compare.stats import (mann_whitney, permutation_u, quantile_interval,
                                  two_proportions)
from mwperf.errors import UsageError

BASE = "20261122T100000Z-udp-roundtrip-0001"
SAME = "20261122T110000Z-udp-roundtrip-0002"
SLOWER = "20261122T120000Z-udp-roundtrip-0003"


def test_mann_whitney_matches_a_hand_computation() -> None:
    # base 1,2,3 new 4,5,6: U_new = 9 (every pair), mean 4.5, var = 9*7/12 = 5.25
    # z = (9 - 4.5 - 0.5)/sqrt(5.25) = 1.7457 -> p = 0.0404
    p = mann_whitney([(1, 1), (2, 1), (3, 1)], [(4, 1), (5, 1), (6, 1)])
    assert p == pytest.approx(0.0404, abs=5e-4)
    assert mann_whitney([(1, 5)], [(1, 5)]) == 1.0  # all tied: no evidence
    assert mann_whitney([(4, 1), (5, 1), (6, 1)], [(1, 1), (2, 1), (3, 1)]) > 0.95


def test_exact_permutation_u_over_repetitions() -> None:
    assert permutation_u([1, 2, 3], [4, 5, 6]) == pytest.approx(1 / 20)
    assert permutation_u([1, 2, 3, 4], [5, 6, 7, 8]) == pytest.approx(1 / 70)
    assert permutation_u([1, 3, 5], [2, 4, 6]) > 0.2


def test_quantile_interval_and_two_proportions() -> None:
    grouped = [(float(v), 1) for v in range(1, 10001)]
    low, high = quantile_interval(grouped, 0.99)
    # rank 9900 -/+ 1.96*sqrt(10000*0.99*0.01) = 19.5
    assert low == 9880 and high == 9921
    assert quantile_interval([], 0.5) is None
    # 10/1000 vs 30/1000: z = 3.19 -> p ~ 0.0007
    assert two_proportions(10, 1000, 30, 1000) == pytest.approx(0.0007, abs=2e-4)
    assert two_proportions(0, 100, 0, 100) == 1.0


def test_budget_forms_and_errors(tmp_path: Path) -> None:
    assert parse_budget("p99", "+10%", "x").exceeded(100, 111)
    assert not parse_budget("p99", "10%", "x").exceeded(100, 110)
    assert parse_budget("loss", "+0.5pp", "x").exceeded(0.1, 0.7)
    assert parse_budget("p50", "+50us", "x").absolute == 50_000
    assert parse_budget("rss", "+8MiB", "x").absolute == 8192
    with pytest.raises(UsageError, match=r"--budget: unknown metric 'p98'; allowed: p50"):
        resolve(("p98=+1%",), None)
    with pytest.raises(UsageError, match="percentage points"):
        resolve(("p99=+1pp",), None)
    with pytest.raises(UsageError, match="not METRIC=LIMIT"):
        resolve(("p99",), None)
    good = tmp_path / "ci.yaml"
    good.write_text("# x86 CI runner\nalpha: 0.01\np99: +15%\nloss: +1pp\n")
    budgets = from_file(good)
    assert budgets.alpha == 0.01 and set(budgets.limits) == {"p99", "loss"}
    bad = tmp_path / "bad.yaml"
    bad.write_text("p99: +15%\nlatency: +3%\n")
    with pytest.raises(UsageError, match=r"bad.yaml:2: unknown metric 'latency'"):
        from_file(bad)
    alpha = tmp_path / "alpha.yaml"
    alpha.write_text("alpha: 2\n")
    with pytest.raises(UsageError, match=r"alpha.yaml:1: alpha: must be a number between 0"):
        from_file(alpha)
    assert set(resolve((), None).limits) == {  # the defaults, for points and graph runs
        "p50", "p99", "loss", "edge.p50", "edge.p99", "edge.loss", "chain.p50", "chain.p99",
        "call.p50", "call.p99", "call.timeouts"}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three single points (base, the same again, 20 % slower) with raw samples. Built once per
    module (per worker): the tests only read it."""
    root = tmp_path_factory.mktemp("compare") / "results"
    add_point(root, BASE, latencies(5000, 50_000, seed=1), samples=True)
    add_point(root, SAME, latencies(5000, 50_000, seed=2), samples=True,
              started_at="2026-11-22T11:00:00Z")
    add_point(root, SLOWER, latencies(5000, 60_000, seed=3), samples=True,
              started_at="2026-11-22T12:00:00Z")
    return root


def test_a_known_shift_is_a_regression_and_no_shift_is_not(results: Path) -> None:
    budgets = resolve((), None)
    slower = compare(results, BASE, SLOWER, budgets)
    verdicts = {r.metric: r for r in slower.rows}
    assert verdicts["p50"].verdict == "regression" and slower.exit_code == 1
    assert "20 vs 20 batches of consecutive raw samples" in verdicts["p50"].method
    assert verdicts["p99"].verdict == "regression" and "p99s of 20 vs 20" in verdicts["p99"].method
    assert verdicts["loss"].verdict == "ok"
    same = compare(results, BASE, SAME, budgets)
    assert same.exit_code == 0
    assert {r.verdict for r in same.rows if r.metric in ("p50", "p99")} <= {"ok", "noise"}


def test_one_burst_is_noise_not_a_regression(tmp_path: Path) -> None:
    """Two runs of one distribution, each with one stall of consecutive slow messages; NEW's
    stall is longer (80 vs 20 messages), which moves its p99 from the tail into the stall.
    Messages treated as independent would call that a significant p99 regression; batches of
    consecutive messages see one odd batch on each side."""
    root = tmp_path / "results"
    base, new = latencies(5000, 50_000, seed=1), latencies(5000, 50_000, seed=2)
    base[1000:1020] = [2_000_000] * 20
    new[3000:3080] = [2_000_000] * 80
    add_point(root, BASE, base, samples=True)
    add_point(root, SAME, new, samples=True, started_at="2026-11-22T11:00:00Z")
    outcome = compare(root, BASE, SAME, resolve((), None))
    [p99] = [r for r in outcome.rows if r.metric == "p99"]
    assert p99.new > 1.1 * p99.base  # over the default +10 % budget ...
    assert p99.verdict == "noise" and outcome.exit_code == 0  # ... but not evidence
    from mwperf.compare.stats import quantile_interval
    iid = (quantile_interval([(float(v), 1) for v in sorted(base)], 0.99),
           quantile_interval([(float(v), 1) for v in sorted(new)], 0.99))
    assert iid[1][0] > iid[0][1]  # the independence assumption would have said regression


def test_over_budget_but_not_significant_is_noise(tmp_path: Path) -> None:
    root = tmp_path / "results"
    # 20 messages each: a 3 % median shift with 25 % spread is far from significant
    add_point(root, BASE, latencies(20, 50_000, seed=1))
    add_point(root, SAME, latencies(20, 51_500, seed=1), started_at="2026-11-22T11:00:00Z")
    tight = Budgets({"p50": parse_budget("p50", "+1%", "x")})
    [row] = [r for r in compare(root, BASE, SAME, tight).rows if r.metric == "p50"]
    assert row.verdict == "noise" and row.p_value is not None and row.p_value > 0.05
    assert "HDR histograms (too few for batches: assumes independent messages)" in row.method


def test_repetitions_use_the_exact_test(tmp_path: Path) -> None:
    root = tmp_path / "results"
    cfg = config()
    add_sweep(root, "20261122T100000Z-base-aaaa",
              [(f"b{i}", latencies(200, 50_000, seed=i), {"cfg": dict(cfg)}) for i in range(4)])
    add_sweep(root, "20261122T110000Z-new-bbbb",
              [(f"n{i}", latencies(200, 80_000, seed=i), {"cfg": dict(cfg),
               "started_at": "2026-11-22T11:00:00Z"}) for i in range(4)])
    outcome = compare(root, "20261122T10", "20261122T11", resolve((), None))
    [p50] = [r for r in outcome.rows if r.metric == "p50"]
    assert p50.method.startswith("exact Mann-Whitney U over repetitions (4 vs 4)")
    assert p50.p_value == pytest.approx(1 / 70) and p50.verdict == "regression"


def test_cli_exit_codes(results: Path, tmp_path: Path) -> None:
    args = ("--results", str(results))
    assert run_mwperf("compare", BASE, SAME, *args).returncode == 0
    slower = run_mwperf("compare", BASE, SLOWER, *args, "--budget", "p99=+10%")
    assert slower.returncode == 1 and "REGRESSION" in slower.stdout
    assert run_mwperf("compare", BASE, SLOWER, *args, "--budget", "p50=+50%",
                      "--budget", "p99=+50%").returncode == 0
    usage = run_mwperf("compare", BASE, "nope", *args)
    assert usage.returncode == 2 and "NEW: no run 'nope'" in usage.stderr
    bad = run_mwperf("compare", BASE, SLOWER, *args, "--budget", "p99=lots")
    assert bad.returncode == 2 and "--budget: p99='lots' is not a budget" in bad.stderr
    other = tmp_path / "other"
    add_point(other, BASE, latencies(100, 50_000), cfg=config(rate=100.0))
    add_point(other, SAME, latencies(100, 50_000), cfg=config(rate=200.0),
              started_at="2026-11-22T11:00:00Z")
    nothing = run_mwperf("compare", BASE, SAME, "--results", str(other))
    assert nothing.returncode == 2 and "matches the configuration" in nothing.stderr


def test_json_and_markdown_output(results: Path) -> None:
    import json
    done = run_mwperf("compare", BASE, SLOWER, "--results", str(results), "--format", "json")
    document = json.loads(done.stdout)
    assert done.returncode == 1 and document["exit_code"] == 1
    assert {r["metric"] for r in document["rows"]} == {"p50", "p99", "max", "loss", "cpu", "rss"}
    assert all(r["method"] for r in document["rows"])
    markdown = run_mwperf("compare", BASE, SAME, "--results", str(results), "--format",
                          "markdown")
    assert markdown.returncode == 0 and markdown.stdout.startswith("| configuration | metric")


def test_a_point_that_failed_in_new_is_a_regression(tmp_path: Path) -> None:
    root = tmp_path / "results"
    add_point(root, BASE, latencies(500, 50_000))
    add_point(root, SAME, [], status="failed", reason="pong crashed",
              started_at="2026-11-22T11:00:00Z")
    done = run_mwperf("compare", BASE, SAME, "--results", str(root))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "NEW measured nothing: pong crashed" in done.stdout and "REGRESSION" in done.stdout


def test_two_repetitions_pool_their_batches(tmp_path: Path) -> None:
    """2 vs 2 repetitions cannot reach α = 0.05 with the exact test (best p = 1/6): the
    batches of both repetitions are pooled instead, and the row says why."""
    root = tmp_path / "results"
    cfg = config(samples=True)
    add_sweep(root, "20261122T100000Z-base-aaaa",
              [(f"b{i}", latencies(2000, 50_000, seed=i), {"cfg": dict(cfg)}) for i in range(2)],
              samples=True)
    add_sweep(root, "20261122T110000Z-new-bbbb",
              [(f"n{i}", latencies(2000, 70_000, seed=10 + i), {"cfg": dict(cfg),
               "started_at": "2026-11-22T11:00:00Z"}) for i in range(2)], samples=True)
    outcome = compare(root, "20261122T10", "20261122T11", resolve((), None))
    [p50] = [r for r in outcome.rows if r.metric == "p50"]
    assert "p50s of 40 vs 40 batches of consecutive raw samples" in p50.method
    assert "2 vs 2 repetitions cannot reach α" in p50.method
    assert p50.verdict == "regression"


def test_three_repetitions_fully_separated_are_a_regression(tmp_path: Path) -> None:
    root = tmp_path / "results"
    add_sweep(root, "20261122T100000Z-base-aaaa",
              [(f"b{i}", latencies(200, 50_000, seed=i), {}) for i in range(3)])
    add_sweep(root, "20261122T110000Z-new-bbbb",
              [(f"n{i}", latencies(200, 80_000, seed=i), {"started_at": "2026-11-22T11:00:00Z"})
               for i in range(3)])
    outcome = compare(root, "20261122T10", "20261122T11", resolve((), None))
    [p50] = [r for r in outcome.rows if r.metric == "p50"]
    assert p50.method.startswith("exact Mann-Whitney U over repetitions (3 vs 3)")
    assert p50.p_value == pytest.approx(0.05) and p50.verdict == "regression"  # p <= α
