"""The defaults and limits of a point's options are the agent's (``mwperf-agent options
--json``: its command line's own definitions), read by the control plane instead of repeated:
an agent that lists other defaults and limits changes what ``build_point`` fills in and allows.
The fake agent serves the real agent's listing (tests/fakes/options.json, kept current here)."""

import json
import subprocess
from pathlib import Path

import pytest
from conftest import FAKE_AGENT, REAL_AGENT

from mwperf.agent import find_agent
from mwperf.config import build_point
from mwperf.errors import UsageError

FAKE_OPTIONS = Path(__file__).parent / "fakes" / "options.json"


@pytest.mark.skipif(not REAL_AGENT.is_file(), reason=f"no agent at {REAL_AGENT} (make build)")
def test_the_fakes_listing_is_the_real_agents() -> None:
    """Regenerate with ``mwperf-agent options --json > tests/fakes/options.json``."""
    done = subprocess.run([str(REAL_AGENT), "options", "--json"], capture_output=True, text=True,
                          timeout=10, check=True)
    assert json.loads(FAKE_OPTIONS.read_text()) == json.loads(done.stdout), (
        "tests/fakes/options.json is stale: regenerate it from the agent")


@pytest.fixture
def other_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """An agent (the fake) whose listing gives other defaults and limits than the real one."""
    listing = json.loads(FAKE_OPTIONS.read_text())
    listing["defaults"].update(payload="Struct256", rate="250", depth="7", reliability="best-effort")
    listing["limits"].update(topics=3, subscribers=2)
    script = tmp_path / "agent"
    script.write_text("#!/bin/sh\n"
                      f"if [ \"$1\" = options ]; then echo '{json.dumps(listing)}'; exit 0; fi\n"
                      f"exec python3 -S '{FAKE_AGENT}' \"$@\"\n")
    script.chmod(0o755)
    monkeypatch.setenv("MWPERF_AGENT", str(script))
    return listing


def test_a_points_defaults_are_the_agents(other_agent: dict) -> None:
    cfg = build_point({}, find_agent)
    assert (cfg.payload, cfg.payload_bytes, cfg.rate) == ("Struct256", 256, 250.0)
    assert (cfg.depth, cfg.reliability) == (7, "best-effort")
    assert cfg.warmup_ns == 1_000_000_000  # mwperf run's own (the agent's alone: 0 s)


@pytest.mark.parametrize(("options", "message"), [
    ({"topics": "4"}, "--topics: must be from 1 to 3, got 4"),
    ({"mode": "oneway", "subscribers": "3"}, "--subscribers: must be from 1 to 2"),
])
def test_a_points_limits_are_the_agents(other_agent: dict, options: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        build_point(options, find_agent)
