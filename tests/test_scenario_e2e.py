"""A scenario with the real agent: a busy-loop x topics sweep whose summary must show what the
single executor does (later topics wait for earlier callbacks) and a knee along the rate."""

import json
from pathlib import Path

import pytest
from conftest import run_mwperf

pytestmark = pytest.mark.agent

SCENARIO = """\
description: e2e - single executor, 3 topics, 2 ms busy-loop
transport: udp
rate: [20, 100, 400]
topics: 3
executor: single
busy_loop: 2ms
payload: Array64
count: 40
warmup: 200ms
timeout: 1m
"""


def test_a_workload_sweep_with_the_real_agent(real_env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_text(SCENARIO)
    done = run_mwperf("run", str(tmp_path / "e2e.yaml"), "--results", str(tmp_path / "r"),
                      env=real_env, timeout=300)
    assert done.returncode in (0, 3), done.stdout + done.stderr  # partial: a loaded host's loss
    (folder,) = (tmp_path / "r").glob("*-e2e-*/")
    summary = json.loads((folder / "summary.json").read_text())
    assert [row["rate"] for row in summary["rows"]] == [20, 100, 400]
    # single executor: at each tick one topic's callback runs at once, the others wait for one
    # and two 2 ms callbacks (at the rates the pong keeps up with; at 400 Hz the replies may not
    # come back at all). Which topic waits is the receive threads' race tick by tick (the
    # per-tick order is checked in test_workload_e2e.py from each message's samples), so here
    # the ranking is checked as a ranking: every topic, fastest first, the slowest at least a
    # callback behind the fastest
    rankings = [r for r in summary["topics"] if "400 Hz" not in r["point"]]
    assert len(rankings) == 2
    for ranking in rankings:
        assert sorted(t["topic"] for t in ranking["topics"]) == [0, 1, 2], ranking
        p50 = [t["p50_ns"] for t in ranking["topics"]]
        assert p50 == sorted(p50) and p50[-1] - p50[0] > 1_000_000, ranking
    # 3 topics x 2 ms of callback work = 6 ms per tick: 400 Hz (2.5 ms) cannot be sustained
    (knee,) = summary["knees"]
    assert knee["group"] == "udp" and knee["rate"] in (20, 100), knee
    assert knee["above"]["rate"] in (100, 400)
    assert "Saturation knee" in done.stdout and "Topics ranked by p50" in done.stdout
