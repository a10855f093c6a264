"""Pooling agrees across the languages: python/mwperf/pool.py (subscribers) and
crates/mwperf-core/src/stats/pool.rs (topics; its test `shared_pooling_vectors` reads the same
file) against the hand-computed cases of tests/vectors/pooling.json."""

import json
from pathlib import Path

import pytest

from mwperf.pool import pool_stats

CASES = json.loads((Path(__file__).parent / "vectors" / "pooling.json").read_text())["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_pool_stats_matches_the_shared_vectors(case: dict) -> None:
    pooled = pool_stats(case["parts"])
    expected = case["pooled"]
    assert set(pooled) == set(expected)
    for key, value in expected.items():
        if isinstance(value, float):
            assert pooled[key] == pytest.approx(value, rel=1e-12), key
        else:
            assert pooled[key] == value, key
