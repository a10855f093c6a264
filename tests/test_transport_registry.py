"""A transport is complete when it has all of its parts: a descriptor in the agent (every
field), a Python hook module, an instance in the Rust conformance suite, a row in
docs/transports.md's table, and its name in config.TRANSPORTS (docs/contributing.md, "Add a
transport").
These tests fail naming the transport and the part it lacks."""

import json
import re
import subprocess
from pathlib import Path

import pytest
from conftest import REAL_AGENT

from mwperf import REPO_ROOT
from mwperf.config import TRANSPORTS
from mwperf.transports import hook, profiles
from mwperf.transports.hooks import Hooks
from mwperf.transports.profiles import FIELDS

CONFORMANCE = REPO_ROOT / "crates/mwperf-transports/tests/transports/conformance.rs"
TRANSPORTS_DOC = REPO_ROOT / "docs" / "transports.md"
FAKE_DESCRIPTORS = Path(__file__).parent / "fakes" / "transports.json"

needs_agent = pytest.mark.skipif(not REAL_AGENT.is_file(),
                                 reason=f"no agent at {REAL_AGENT} (make build)")


def agent_listing() -> list[dict]:
    done = subprocess.run([str(REAL_AGENT), "transports", "--json"], capture_output=True,
                          text=True, timeout=10, check=True)
    return json.loads(done.stdout)


def conformance_instances() -> dict[str, str]:
    """module name -> Kind in the `conformance! { ... }` list of the conformance suite."""
    text = CONFORMANCE.read_text()
    block = text[text.rindex("conformance! {"):]
    block = block[:block.index("}")]
    return dict(re.findall(r"(\w+)\s*=>\s*Kind::(\w+)", block))


def docs_rows() -> set[str]:
    """Transports with a row in docs/transports.md's table (the one with an 'opts' column)."""
    text = TRANSPORTS_DOC.read_text()
    return set(re.findall(r"^\| `(\w+)` \| .*\|.*\|.*\|.*\|.*\|.*\|$", text, re.MULTILINE))


@needs_agent
def test_the_agent_describes_every_known_transport_in_side_by_side_order() -> None:
    names = [d["name"] for d in agent_listing()]
    assert names == list(TRANSPORTS), (
        "config.TRANSPORTS (Python's side-by-side order) and the agent's Kind::ALL differ")


@needs_agent
@pytest.mark.parametrize("name", TRANSPORTS)
def test_descriptor_has_every_field(name: str) -> None:
    (entry,) = [d for d in agent_listing() if d["name"] == name]
    missing = [key for key in FIELDS if key not in entry]
    assert not missing, f"{name}: its descriptor lacks {missing}"
    assert entry["description"] and entry["address"], f"{name}: empty description or address"
    assert entry["framing"] in ("datagram", "stream", "middleware")
    assert entry["fanout"] in ("sender-loops", "counted", "uncounted")
    assert not (entry["local_only"] and entry["crosses_hosts"]), f"{name}: local-only crosses?"
    assert all(isinstance(h, str) and h for h in entry["opts"].values()), (
        f"{name}: every --opt key needs a one-line description")
    assert {"reliability", "history", "durability", "note"} <= entry["qos"].keys()


@pytest.mark.parametrize("name", TRANSPORTS)
def test_hook_module(name: str) -> None:
    path = REPO_ROOT / "python/mwperf/transports" / f"{name}.py"
    assert path.is_file(), f"{name}: no hook module {path.relative_to(REPO_ROOT)}"
    assert isinstance(hook(name), Hooks)


@pytest.mark.parametrize("name", TRANSPORTS)
def test_conformance_instance(name: str) -> None:
    instances = conformance_instances()
    assert name in instances, (f"{name}: not instantiated in the conformance suite "
                               f"({CONFORMANCE.relative_to(REPO_ROOT)}, the conformance! list)")


@pytest.mark.parametrize("name", TRANSPORTS)
def test_docs_row(name: str) -> None:
    assert name in docs_rows(), f"{name}: no row in docs/transports.md's transports table"


@needs_agent
def test_profiles_come_from_the_agent() -> None:
    from mwperf.agent import Agent
    known = profiles(Agent(REAL_AGENT))
    assert list(known) == list(TRANSPORTS)
    assert not known["udp"].discovery and known["cyclonedds"].discovery
    assert known["uds"].local_only and not known["uds"].crosses_hosts
    assert known["mqtt"].daemon == "mosquitto" and "qos" in known["mqtt"].opts


@needs_agent
def test_the_fake_agent_mirrors_the_real_descriptors() -> None:
    """tests/fakes/transports.json is what the fake agent lists; regenerate it with
    ``mwperf-agent transports --json > tests/fakes/transports.json`` when a descriptor changes."""
    strip = lambda entries: [{k: v for k, v in e.items() if k != "built"} for e in entries]  # noqa: E731
    assert strip(json.loads(FAKE_DESCRIPTORS.read_text())) == strip(agent_listing()), (
        "tests/fakes/transports.json is stale: regenerate it from the agent "
        "(mwperf-agent transports --json)")
