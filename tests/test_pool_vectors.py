"""Pooling has one implementation (crates/mwperf-core/src/stats/pool.rs; its test
`shared_pooling_vectors` reads tests/vectors/pooling.json): the control plane's pooling of
subscribers goes through `mwperf-agent pool` (python/mwperf/pool.py), and must give the
hand-computed results of the same vectors, both the distribution and the rest of a measurement."""

import json
import subprocess
from pathlib import Path

import pytest
from fakes.reports import measurement

from conftest import REAL_AGENT
from mwperf.agent import Agent
from mwperf.errors import RunError
from mwperf.pool import pool_measurements

CASES = json.loads((Path(__file__).parent / "vectors" / "pooling.json").read_text())["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_agent_pools_the_shared_vectors(case: dict) -> None:
    parts = [{**measurement("oneway", sent=max(p["count"], 1), lost=0), "response": p,
              "service": p} for p in case["parts"]]
    pooled = pool_measurements(parts, Agent(REAL_AGENT))
    expected = case["pooled"]
    for block in ("response", "service"):
        assert set(pooled[block]) == set(expected)
        for key, value in expected.items():
            if isinstance(value, float):
                assert pooled[block][key] == pytest.approx(value, rel=1e-12), (block, key)
            else:
                assert pooled[block][key] == value, (block, key)
    assert pooled["accounting"]["sent"] == sum(max(p["count"], 1) for p in case["parts"])


def test_what_the_agent_cannot_pool_is_a_clear_error() -> None:
    with pytest.raises(RunError, match=r"pooling 1 measurements: .* exited with code 2: "
                                       r"mwperf-agent: error: pool: standard input is not"):
        pool_measurements([{"mode": 1}], Agent(REAL_AGENT))
    done = subprocess.run([str(REAL_AGENT), "pool"], input="[]", capture_output=True, text=True,
                          timeout=30, check=False)
    assert done.returncode == 2 and "the array is empty" in done.stderr and done.stdout == ""
