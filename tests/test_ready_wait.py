"""procs.AgentProcess.wait_ready: the READY line within the time given; an agent that says it
prepares something first (a shim compiled on first use: its PREPARING line on stderr) gets
PREPARING_TIMEOUT_S more, once; a late agent's error names what it last said. The prefix is the
agent's own (crates/mwperf-transports/src/preparing.rs)."""

import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mwperf import procs
from mwperf.errors import RunError

REPO = Path(__file__).resolve().parent.parent


def started(tmp_path: Path, script: str) -> procs.AgentProcess:
    out, err = tmp_path / "pong.stdout", tmp_path / "pong.stderr"
    with open(out, "wb") as o, open(err, "wb") as e:
        popen = subprocess.Popen([sys.executable, "-c", script], stdout=o, stderr=e)
    return procs.AgentProcess("pong", popen, out, err)


def finished(agent: procs.AgentProcess) -> None:
    agent.popen.kill()
    agent.popen.wait()


def test_the_prefix_is_the_agents() -> None:
    rust = (REPO / "crates/mwperf-transports/src/preparing.rs").read_text()
    assert re.search(r'pub const PREFIX: &str = "([^"]*)";', rust)[1] == procs.PREPARING


def test_an_agent_preparing_gets_more_time_and_is_ready_when_it_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(procs, "PREPARING_TIMEOUT_S", 30.0)
    go = tmp_path / "go"
    agent = started(tmp_path, "import os, sys, time\n"
                              f"print({procs.PREPARING + 'compiling a shim'!r}, file=sys.stderr,"
                              " flush=True)\n"
                              f"while not os.path.exists({str(go)!r}): time.sleep(0.01)\n"
                              "print('READY udp 127.0.0.1:9', flush=True)\ntime.sleep(30)")
    while procs.PREPARING not in agent.stderr_path.read_text():  # it said so (a busy machine
        time.sleep(0.01)  # may take longer than 0.2 s to start a Python)
    # READY only once the test says so, after the 0.2 s given: past them only by the extension
    timer = threading.Timer(0.5, go.touch)
    timer.start()
    try:
        assert agent.wait_ready("udp", 0.2) == "127.0.0.1:9"
    finally:
        timer.join()
        finished(agent)


def test_a_late_agent_is_named_with_its_last_words_and_a_preparing_one_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = started(tmp_path, "import sys, time\nprint('opening', file=sys.stderr, flush=True)\n"
                              "time.sleep(30)")
    try:
        while "opening" not in agent.stderr_path.read_text():
            time.sleep(0.01)
        with pytest.raises(RunError, match=r"within 0.2 s \(its last words: opening\)"):
            agent.wait_ready("udp", 0.2)
    finally:
        finished(agent)
    monkeypatch.setattr(procs, "PREPARING_TIMEOUT_S", 0.3)
    agent = started(tmp_path, "import sys, time\n"
                              f"print({procs.PREPARING + 'compiling a shim'!r}, file=sys.stderr,"
                              " flush=True)\ntime.sleep(30)")
    try:
        while procs.PREPARING not in agent.stderr_path.read_text():
            time.sleep(0.01)
        t0 = time.monotonic()
        with pytest.raises(RunError, match=r"within 0.2 s \+ 0.3 s for compiling a shim"):
            agent.wait_ready("udp", 0.2)
        assert time.monotonic() - t0 >= 0.5
    finally:
        finished(agent)
