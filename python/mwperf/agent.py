"""Finding the data-plane binary (mwperf-agent) and asking it what it supports.

Search order: the ``MWPERF_AGENT`` environment variable, then the binary an installed wheel
carries (``mwperf/bin/``, see setup.py), then ``release/mwperf-agent`` in ``$CARGO_TARGET_DIR``
(where cargo put it, e.g. a CI cache), then ``target/release/mwperf-agent`` in the checkout
this package lives in, then ``PATH``. Catalogue queries are cached per binary.
"""

import functools
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import BUNDLED_BIN, REPO_ROOT
from .errors import RunError

AGENT_NAME = "mwperf-agent"
ENV_VAR = "MWPERF_AGENT"
QUERY_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Agent:
    """One mwperf-agent executable."""

    path: Path

    def payloads(self) -> dict[str, int]:
        """The payload catalogue, name -> payload bytes, smallest first."""
        return _payloads(self.path)

    def transports(self) -> list[str]:
        """The transports built into this binary."""
        return _transports(self.path)

    def defaults(self) -> dict[str, str]:
        """The defaults of the measuring roles' options (``mwperf-agent options --json``): flag
        without ``--``, ``-`` as ``_`` -> the default as the agent's command line takes it."""
        return _options(self.path)[0]

    def choices(self) -> dict[str, list[str]]:
        """The values of the options that take one of a few (reliability, durability,
        executor), as the agent's command line accepts them."""
        return _options(self.path)[1]

    def limits(self) -> dict[str, int]:
        """The limits the agent holds its options to: topics, subscribers, clients, in_flight,
        payload_bytes (whatever the transport), header_bytes."""
        return _options(self.path)[2]

    def version(self) -> str:
        """The agent's version line, e.g. ``mwperf-agent 0.1.0 (git abc123)``."""
        line = _query(self.path, "--version").strip()
        if not line.startswith(AGENT_NAME):
            raise RunError(f"'{self.path} --version' printed {line!r}, not '{AGENT_NAME} <version>'; "
                           f"is it an up-to-date build? run 'make build'")
        return line


ALLOC_LIBRARY = "libmwperf_alloc.so"
"""the allocation counter (crates/mwperf-alloc), built by cargo next to the agent binary"""


def alloc_preload(agent: Agent) -> str:
    """``LD_PRELOAD`` for an agent run with ``--count-allocs``: the counter library next to the
    agent binary, ahead of any preload already set; RunError when it was not built."""
    library = agent.path.resolve().parent / ALLOC_LIBRARY
    if not library.is_file():
        raise RunError(f"--count-allocs: {library} is missing (the allocation counter is built "
                       f"with the agent: run 'make build')")
    existing = os.environ.get("LD_PRELOAD")
    return f"{library}:{existing}" if existing else str(library)


LAYERS_LIBRARY = "libmwperf_layers.so"
"""the system-call interposer of --layers (crates/mwperf-layers), built next to the agent binary"""


def layers_preload(agent: Agent, existing: str | None) -> str:
    """``LD_PRELOAD`` for an agent run with ``--layers``: the interposer next to the agent
    binary, ahead of ``existing`` (a preload already set, e.g. the allocation counter's);
    RunError when it was not built."""
    library = agent.path.resolve().parent / LAYERS_LIBRARY
    if not library.is_file():
        raise RunError(f"--layers: {library} is missing (the system-call interposer is built "
                       f"with the agent: run 'make build')")
    return f"{library}:{existing}" if existing else str(library)


def find_agent() -> Agent:
    """Locate mwperf-agent or raise RunError saying how to get one."""
    configured = os.environ.get(ENV_VAR)
    if configured:
        path = Path(configured)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise RunError(f"{ENV_VAR}={configured}: no executable file there; "
                           f"unset it to use the agent built by 'make build'")
        return Agent(path)
    bundled = BUNDLED_BIN / AGENT_NAME
    if bundled.is_file() and os.access(bundled, os.X_OK):
        return Agent(bundled)
    built = built_agent()
    if built.is_file() and os.access(built, os.X_OK):
        return Agent(built)
    on_path = shutil.which(AGENT_NAME)
    if on_path:
        return Agent(Path(on_path))
    raise RunError(f"{AGENT_NAME} not found (looked at ${ENV_VAR}, {built} and PATH); "
                   f"run 'make build' first")


def option_default(key: str) -> str:
    """The agent's default of option ``key`` (``--spin-margin`` as ``spin_margin``): the one
    place it is written is the agent's command line (cli.rs)."""
    found = find_agent().defaults()
    if key not in found:
        raise RunError(_not_listed("default", key))
    return found[key]


def option_choices(key: str) -> tuple[str, ...]:
    """The values option ``key`` takes (reliability, durability, executor): the agent's."""
    found = find_agent().choices()
    if key not in found:
        raise RunError(_not_listed("set of values", key))
    return tuple(found[key])


def option_limit(key: str) -> int:
    """The agent's limit ``key`` (topics, subscribers, clients, in_flight, payload_bytes,
    header_bytes): the one place it is written is the agent."""
    found = find_agent().limits()
    if key not in found:
        raise RunError(_not_listed("limit", key))
    return found[key]


def _not_listed(what: str, key: str) -> str:
    return (f"'{AGENT_NAME} options --json' gives no {what} of '{key}'; is it an up-to-date "
            f"build? run 'make build'")


def built_agent() -> Path:
    """Where 'cargo build --release' puts the agent: $CARGO_TARGET_DIR, else target/ here."""
    target = os.environ.get("CARGO_TARGET_DIR")
    root = Path(target) if target else REPO_ROOT / "target"
    if not root.is_absolute():
        root = REPO_ROOT / root
    return root / "release" / AGENT_NAME


@functools.cache
def _payloads(path: Path) -> dict[str, int]:
    catalogue = query_json(path, "payloads", "--json")
    if not (isinstance(catalogue, dict)
            and all(isinstance(v, int) and not isinstance(v, bool) for v in catalogue.values())):
        raise RunError(f"'{path} payloads --json' did not print a JSON object of name -> bytes")
    return dict(sorted(catalogue.items(), key=lambda item: item[1]))


@functools.cache
def _transports(path: Path) -> list[str]:
    entries = query_json(path, "transports", "--json")
    if not (isinstance(entries, list) and all(isinstance(e, dict) and isinstance(e.get("name"), str) for e in entries)):
        raise RunError(f"'{path} transports --json' did not print a JSON list of transports")
    return [e["name"] for e in entries if e.get("built", True)]


@functools.cache
def _options(path: Path) -> tuple[dict[str, str], dict[str, list[str]], dict[str, int]]:
    try:
        listing = query_json(path, "options", "--json")
    except RunError as exc:  # an agent built before the listing existed
        raise RunError(f"{exc}; is it an up-to-date build? run 'make build'") from None
    parts = [listing.get(k) if isinstance(listing, dict) else None
             for k in ("defaults", "choices", "limits")]
    defaults, choices, limits = parts
    if not (isinstance(defaults, dict) and all(isinstance(v, str) for v in defaults.values())
            and isinstance(choices, dict)
            and all(isinstance(v, list) and all(isinstance(c, str) for c in v)
                    for v in choices.values())
            and isinstance(limits, dict)
            and all(isinstance(v, int) and not isinstance(v, bool) for v in limits.values())):
        raise RunError(f"'{path} options --json' did not print {{\"defaults\": {{flag: text}}, "
                       f"\"choices\": {{flag: [text]}}, \"limits\": {{name: number}}}}; is it "
                       f"an up-to-date build? run 'make build'")
    return defaults, choices, limits


def query_json(path: Path, *args: str) -> object:
    """What ``path args`` printed, parsed as JSON (RunError naming the command otherwise)."""
    text = _query(path, *args)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise RunError(f"'{path} {' '.join(args)}' printed invalid JSON ({exc.msg}); "
                       f"is it an up-to-date build? run 'make build'") from None


@functools.cache
def _query(path: Path, *args: str) -> str:
    command = f"{path} {' '.join(args)}"
    try:
        done = subprocess.run([str(path), *args], capture_output=True, text=True,
                              timeout=QUERY_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RunError(f"'{command}' could not run: {exc}") from None
    if done.returncode != 0:
        raise RunError(f"'{command}' exited with code {done.returncode}: {last_line(done.stderr)}")
    return done.stdout


def last_line(text: str) -> str:
    """The last non-empty line of an agent's stderr, or a note that there was none."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "(no message on stderr)"
