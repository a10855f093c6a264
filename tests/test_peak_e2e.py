"""A peak search on a real stream with an injected capacity (issue 40, item 3): the pong spends
4 ms of CPU in every callback, so no rate above 250 Hz can be kept (ground truth); every trial
above it fails, the peak found is below it, and each trial is a real saved point at its rate."""

import json
from pathlib import Path

import pytest

from conftest import read_saved, run_mwperf

pytestmark = pytest.mark.agent

BUSY_S = 0.004


def test_the_peak_is_below_the_injected_capacity(tmp_path: Path):
    done = run_mwperf("run", "--transport", "udp", "--busy-loop", "4ms", "--duration", "1s",
                      "--warmup", "200ms", "--peak-search", "--peak-range", "20..2000",
                      "--results", str(tmp_path), timeout=300)
    assert done.returncode == 0, done.stderr + done.stdout
    peak = json.loads(next(tmp_path.glob("*-peak-udp-*/peak.json")).read_text())
    (walk,) = peak["walks"]
    assert walk["verdict"] == "found"
    capacity = 1 / BUSY_S
    assert 20 <= peak["peak"] < capacity
    for trial in walk["trials"]:
        if trial["rate"] > capacity:
            assert not trial["passed"], trial
        saved = read_saved(tmp_path / trial["run_id"] / "result.json")
        assert saved["config"]["rate"] == trial["rate"]
    assert f"peak: {peak['peak']:.6g} Hz" in done.stdout
