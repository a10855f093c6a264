"""Shared test helpers: the fake agent, the real agent (when built), and process checks."""

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

# The tests test this checkout's code, in this process (pyproject's pytest `pythonpath`) and in
# every `python -m mwperf` they start, whichever clone the installed package points at (an
# editable install of another clone would otherwise be what runs).
_CHECKOUT_PYTHON = str(Path(__file__).resolve().parent.parent / "python")
os.environ["PYTHONPATH"] = os.pathsep.join(
    [_CHECKOUT_PYTHON, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))])

from mwperf.agent import built_agent  # noqa: E402  (after the path is set)

# A test run started in the background by a non-interactive shell (`cmd &`, nohup) inherits
# SIGINT ignored, and an ignored signal stays ignored across exec: every mwperf the tests start
# would ignore the Ctrl-C the interrupt tests send, and those tests would fail for the harness's
# sake. Give the children the default disposition back (Python's: KeyboardInterrupt).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

FAKE_AGENT = Path(__file__).parent / "fakes" / "fake_agent.py"
REAL_AGENT = Path(os.environ.get("MWPERF_AGENT") or built_agent())
"""the agent the end-to-end tests use: $MWPERF_AGENT, else the one 'make build' produced"""


def real_agent_answers() -> bool:
    """True when the real agent exists and answers --version per the contract."""
    try:
        done = subprocess.run([str(REAL_AGENT), "--version"], capture_output=True, text=True,
                              timeout=10, check=False)
    except OSError:
        return False
    return done.returncode == 0 and done.stdout.startswith("mwperf-agent ")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if any("agent" in item.keywords for item in items) and not real_agent_answers():
        skip = pytest.mark.skip(reason=f"{REAL_AGENT} absent or not answering --version "
                                       "(run 'make build')")
        for item in items:
            if "agent" in item.keywords:
                item.add_marker(skip)


@pytest.fixture
def fake_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Use the fake agent (in this process and in children); traces go to tmp_path/trace."""
    trace = tmp_path / "trace"
    trace.mkdir()
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # scratch dirs land here, not in /tmp
    monkeypatch.setenv("MWPERF_LEASE_DIR", str(tmp_path / "leases"))  # not other runs' leases
    monkeypatch.setenv("MWPERF_AGENT", str(FAKE_AGENT))
    monkeypatch.setenv("FAKE_AGENT_TRACE", str(trace))
    monkeypatch.delenv("FAKE_AGENT", raising=False)
    return dict(os.environ)


@pytest.fixture
def real_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Use the real agent built by 'make build'."""
    monkeypatch.setenv("MWPERF_AGENT", str(REAL_AGENT))
    return dict(os.environ)


def require_emulation(what: str, *programs: str) -> None:
    """Skip unless emulated hosts can be made here (root, mwperf-linkem, ``programs``); in CI
    (CI=true) fail instead: there, ``what`` must run."""
    from mwperf.emulation.userspace import find_linkem
    from mwperf.errors import RunError

    missing = "needs root (network namespaces, TUN devices)" if os.geteuid() != 0 else None
    for program in programs:
        if missing is None and shutil.which(program) is None:
            missing = f"{program} is not installed"
    try:
        find_linkem()
    except RunError as exc:
        missing = missing or str(exc)
    if missing and os.environ.get("CI") == "true":
        pytest.fail(f"{what} must run in CI: {missing}")
    if missing:
        pytest.skip(missing)


@pytest.fixture
def leased_env(real_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """The real agent, and a lease folder of this test's own (others' runs stay out of it)."""
    return {**real_env, "MWPERF_LEASE_DIR": str(tmp_path / "leases")}


def run_mwperf(*args: str, env: dict[str, str] | None = None, timeout: float = 120
           ) -> subprocess.CompletedProcess[str]:
    """Run the CLI as a user would (python -m mwperf.cli) and capture everything."""
    return subprocess.run([sys.executable, "-m", "mwperf.cli", *args], capture_output=True,
                          text=True, env=env, timeout=timeout, check=False)


def alive(pid: int) -> bool:
    """True if ``pid`` is a process that still runs (zombies count as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def traced_pids(trace: Path) -> dict[str, int]:
    """role -> pid of every fake agent that started (FAKE_AGENT_TRACE)."""
    return {p.stem: int(p.read_text()) for p in trace.glob("*.pid")}


def descendants(pid: int) -> list[int]:
    """The pids of every running process below ``pid`` (children, grandchildren, ...)."""
    found, todo = [], [pid]
    while todo:
        below = children(todo.pop())
        found += below
        todo += below
    return found


def children(pid: int) -> list[int]:
    """The pids of the running children of ``pid`` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found
