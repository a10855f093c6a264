"""A real graph run against iRobot's own Mont Blanc target file (issue 40, item 4): every target
checked and saved with its source; the figures are the saved result's own (edges' late, too-late
and lost counts over what they received; the nodes' CPU from each agent's getrusage over all
cores); 20 node processes cannot fit iRobot's 20 MiB single-process RSS target, so the run exits
1 naming that target, its figure and its limit."""

import json
import os
from pathlib import Path

import pytest

from conftest import run_mwperf

pytestmark = pytest.mark.agent

MONT_BLANC = Path(__file__).parent / "vectors" / "targets" / "mont_blanc_rpi3.json"


def test_mont_blanc_against_irobots_targets(tmp_path: Path):
    done = run_mwperf("run", "--graph", "mont_blanc", "--transport", "tcp", "--duration", "3s",
                      "--warmup", "1s", "--targets", str(MONT_BLANC),
                      "--results", str(tmp_path), timeout=120)
    assert done.returncode == 1, done.stderr
    result = json.loads(next(tmp_path.glob("*/result.json")).read_text())
    assert result["status"] == "complete", result["status_reason"]
    gates = {g["metric"]: g for g in result["gates"]}
    assert [g["source"] for g in result["gates"]] == [
        f"mont_blanc_rpi3.json {key}" for key in (
            "resources.cpu[%]", "resources.rss[KB]", "latency_total.late[%]",
            "latency_total.too_late[%]", "latency_total.lost[%]")]
    rss = gates["rss"]
    assert not rss["passed"] and rss["limit"] == 20480 * 1024
    assert rss["figure"] == 1024 * sum(n["max_rss_kib"] for n in result["nodes"])
    line = next(line for line in done.stdout.splitlines() if line.startswith("gate rss<="))
    assert line.startswith("gate rss<=20480KiB (mont_blanc_rpi3.json resources.rss[KB]): FAILED")
    assert line.endswith("needs <= 20 MiB")
    edges = result["edges"]
    received = sum(e["received"] for e in edges)
    lost = sum(e["lost"] for e in edges)
    assert received > 0
    assert gates["late"]["figure"] == pytest.approx(100 * sum(e["late"] for e in edges) / received)
    assert gates["too-late"]["figure"] == pytest.approx(
        100 * sum(e["too_late"] for e in edges) / received)
    assert gates["loss"]["figure"] == pytest.approx(100 * lost / (received + lost))
    cpu = sum(n["cpu_percent"] for n in result["nodes"]) / os.cpu_count()
    assert gates["cpu"]["figure"] == pytest.approx(cpu, rel=0.01)
    assert 0 < gates["cpu"]["figure"] < 100
