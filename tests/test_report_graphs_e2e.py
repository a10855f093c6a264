"""A graph run measured with the real agent, alone or as a sweep's point, is in the catalogue as
it is saved, and `mwperf report latest` shows it (kept short: sierra_nevada over udp for well
under a second)."""

from pathlib import Path

import pytest
from conftest import run_mwperf

pytestmark = pytest.mark.agent


def test_a_graph_run_saved_then_reported_latest(real_env: dict[str, str], tmp_path: Path
                                                ) -> None:
    results = tmp_path / "results"
    done = run_mwperf("run", "--graph", "sierra_nevada", "--transport", "udp", "--duration",
                      "500ms", "--warmup", "100ms", "--results", str(results), env=real_env)
    assert done.returncode == 0, done.stderr
    assert "not in the catalogue" not in done.stderr
    listed = run_mwperf("results", "--results", str(results), env=real_env)
    assert " graph " in listed.stdout and "complete" in listed.stdout, listed.stdout
    report = tmp_path / "report.html"
    shown = run_mwperf("report", "latest", "--results", str(results), "-o", str(report),
                       env=real_env)
    assert shown.returncode == 0, shown.stderr
    page = report.read_text()
    assert 'id="graphs"' in page and "sierra_nevada over udp" in page
    assert page.count('<tr><td>') >= 17  # every edge in the table
    text = run_mwperf("report", "latest", "--results", str(results), "--format", "markdown",
                      env=real_env).stdout
    assert sum(line.count("| sierra_nevada | udp |") for line in text.splitlines()) == 1


def test_a_sweep_of_a_graph_point_reported_latest(real_env: dict[str, str], tmp_path: Path
                                                   ) -> None:
    scenario = tmp_path / "graphs.yaml"
    scenario.write_text("description: one graph point\ngraph: sierra_nevada\ntransport: [udp]\n"
                        "duration: 300ms\nwarmup: 100ms\n")
    results = tmp_path / "results"
    done = run_mwperf("run", str(scenario), "--results", str(results), env=real_env)
    assert done.returncode == 0, done.stderr
    text = run_mwperf("report", "latest", "--results", str(results), "--format", "markdown",
                      env=real_env).stdout
    assert "| sweep | graphs | " in text and "| sierra_nevada | udp | complete | 10 | 17 |" in text
