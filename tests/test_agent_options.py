"""The defaults and limits of a point's options are the agent's (``mwperf-agent options
--json``: its command line's own definitions), read by the control plane instead of repeated:
an agent that lists other defaults and limits changes what ``build_point`` fills in and allows.
The fake agent serves the real agent's listings (tests/fakes/options.json and payloads.json,
kept current here)."""

import json
import subprocess
from pathlib import Path

import pytest
from conftest import FAKE_AGENT, REAL_AGENT

from mwperf.agent import find_agent
from mwperf.config import build_point
from mwperf.errors import UsageError
from mwperf.wire import HEADER_BYTES

FAKE_OPTIONS = Path(__file__).parent / "fakes" / "options.json"


@pytest.mark.skipif(not REAL_AGENT.is_file(), reason=f"no agent at {REAL_AGENT} (make build)")
@pytest.mark.parametrize("listing", ["options", "payloads"])
def test_the_fakes_listings_are_the_real_agents(listing: str) -> None:
    """Regenerate with ``mwperf-agent LISTING --json > tests/fakes/LISTING.json``."""
    done = subprocess.run([str(REAL_AGENT), listing, "--json"], capture_output=True, text=True,
                          timeout=10, check=True)
    fake = Path(__file__).parent / "fakes" / f"{listing}.json"
    assert json.loads(fake.read_text()) == json.loads(done.stdout), (
        f"tests/fakes/{listing}.json is stale: regenerate it from the agent")


@pytest.fixture
def other_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """An agent (the fake) whose listing gives other defaults and limits than the real one."""
    listing = json.loads(FAKE_OPTIONS.read_text())
    listing["defaults"].update(payload="Struct256", rate="250", depth="7", reliability="best-effort")
    listing["limits"].update(topics=3, subscribers=2)
    listing["choices"].update(durability=["volatile"])
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
    ({"durability": "transient-local"}, "--durability: unknown durability 'transient-local'; "
                                        "allowed: volatile"),
])
def test_a_points_limits_are_the_agents(other_agent: dict, options: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        build_point(options, find_agent)


def test_the_header_saved_results_are_read_with_is_the_agents() -> None:
    """wire.HEADER_BYTES stays in Python (results are reported without an agent): the agent's."""
    assert json.loads(FAKE_OPTIONS.read_text())["limits"]["header_bytes"] == HEADER_BYTES


def test_the_contracts_defaults_are_the_agents() -> None:
    """docs/agent-contract.md's option table shows, for every option the agent gives a
    default, that default."""
    from mwperf import REPO_ROOT
    defaults = json.loads(FAKE_OPTIONS.read_text())["defaults"]
    rows = [line.split(" | ") for line in
            (REPO_ROOT / "docs" / "agent-contract.md").read_text("utf-8").splitlines()
            if line.startswith("| `--")]
    shown = {row[0].strip("| `").split()[0][2:].replace("-", "_"): row[-1].strip(" |")
             for row in rows}
    checked = {key: shown[key] for key in defaults if key in shown}
    assert checked == {key: defaults[key] for key in checked}
    assert {"payload", "rate", "depth", "topics"} <= set(checked)
