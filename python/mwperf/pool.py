"""Pooling finished measurements into one: the N subscribers of a one-way point
(``--subscribers N``) each measure their own stream, and the point's aggregate is the
distribution over all their messages.

One implementation, in the agent (crates/mwperf-core/src/stats/pool.rs, which also pools an
agent's own topics): ``mwperf-agent pool`` reads the measurements as a JSON array and prints the
pooled one, so both aggregates are the same code. The method: percentiles from the summed HDR
histogram buckets, clamped to the exact pooled min/max; mean and standard deviation combined
exactly (Chan et al.'s parallel update); counts add up (so loss is counted against N x sent);
per-second series add their counts and pool min/max/mean (their percentiles cannot be recovered
from summaries and stay null). A ``clock_sync`` block is not pooled (merge.py picks the loosest).
"""

import json
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

from .agent import Agent, find_agent, last_line
from .errors import RunError
from .result_types import Measurement

POOL_TIMEOUT_S = 60


def pool_measurements(parts: Sequence[Mapping[str, Any]], agent: Agent | None = None
                      ) -> Measurement:
    """Several measurements of one point as one (``parts`` not empty), by ``mwperf-agent pool``."""
    path = (agent or find_agent()).path
    try:
        done = subprocess.run([str(path), "pool"], input=json.dumps(parts), capture_output=True,
                              text=True, timeout=POOL_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RunError(f"pooling {len(parts)} measurements: '{path} pool' could not run: "
                       f"{exc}") from None
    if done.returncode != 0:
        raise RunError(f"pooling {len(parts)} measurements: '{path} pool' exited with code "
                       f"{done.returncode}: {last_line(done.stderr)}; is it an up-to-date build? "
                       f"run 'make build'")
    pooled: Measurement = json.loads(done.stdout)
    return pooled
