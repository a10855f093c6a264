"""`layers_preload`: the LD_PRELOAD of an agent run with --layers (python/mwperf/agent.py)."""

from pathlib import Path

import pytest

from mwperf.agent import LAYERS_LIBRARY, Agent, layers_preload
from mwperf.errors import RunError


def test_the_interposer_next_to_the_agent_goes_first(tmp_path: Path) -> None:
    agent = Agent(tmp_path / "mwperf-agent")
    library = tmp_path / LAYERS_LIBRARY
    library.write_bytes(b"")
    assert layers_preload(agent, None) == str(library)
    assert layers_preload(agent, "") == str(library)
    assert layers_preload(agent, "/x/libmwperf_alloc.so") == f"{library}:/x/libmwperf_alloc.so"


def test_a_missing_interposer_says_how_to_build_it(tmp_path: Path) -> None:
    with pytest.raises(RunError, match=r"--layers: .*libmwperf_layers\.so is missing.*make build"):
        layers_preload(Agent(tmp_path / "mwperf-agent"), None)
