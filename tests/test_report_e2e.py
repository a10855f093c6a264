"""Report and compare on points measured by the real agent: two short udp runs with raw
samples, reported together and compared (the method must be the batch test over raw samples,
and the verdict one of the defined ones, whatever this loaded machine measured)."""

import json
from pathlib import Path

import pytest
from conftest import run_mwperf

pytestmark = pytest.mark.agent


def test_real_runs_report_and_compare(real_env: dict[str, str], tmp_path: Path) -> None:
    results = tmp_path / "results"
    for _ in range(2):
        done = run_mwperf("run", "--transport", "udp", "--rate", "1000", "--duration", "1s",
                          "--warmup", "200ms", "--samples", "--results", str(results),
                          env=real_env)
        assert done.returncode in (0, 3), done.stderr
    runs = json.loads(run_mwperf("query", "select run_id from runs order by started_at",
                                 "--results", str(results), "--format", "json",
                                 env=real_env).stdout)
    base, new = (r["run_id"] for r in runs)
    page = tmp_path / "r.html"
    done = run_mwperf("report", base, new, "--results", str(results), "-o", str(page),
                      env=real_env)
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    for chart in ("latency-rate", "distribution", "timeline-messages", "cpu", "rss"):
        assert f'data-chart="{chart}"' in html, chart
    compared = run_mwperf("compare", base, new, "--results", str(results), "--format", "json",
                          env=real_env)
    assert compared.returncode in (0, 1), compared.stderr
    rows = {r["metric"]: r for r in json.loads(compared.stdout)["rows"]}
    assert "batches of consecutive raw samples" in rows["p99"]["method"]
    assert rows["p99"]["verdict"] in ("ok", "noise", "regression", "better")
    assert rows["max"]["verdict"] == "info"
