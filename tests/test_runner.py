"""Orchestration of one point against the fake agent: roles, arguments, failures, teardown."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import alive, read_saved, traced_pids

from mwperf import commandline, runner
from mwperf.agent import find_agent
from mwperf.config import PointConfig, build_point
from mwperf.errors import RunError, UsageError
from mwperf.procs import STOP_GRACE_S
from mwperf.session import measure


def point(**options: Any) -> PointConfig:
    return build_point({"duration": "200ms", **options}, find_agent)


def argv(trace: Path, role: str) -> list[str]:
    return json.loads((trace / f"{role}.argv.json").read_text())


def flag(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def assert_all_gone(trace: Path) -> None:
    pids = traced_pids(trace)
    assert pids, "no agent was started"
    assert not [role for role, pid in pids.items() if alive(pid)]


@pytest.mark.parametrize("transport", ["udp", "tcp", "uds"])
def test_roundtrip_arguments_and_result(fake_env: dict[str, str], tmp_path: Path,
                                        transport: str) -> None:
    trace = Path(fake_env["FAKE_AGENT_TRACE"])
    outcome = runner.run_point(point(transport=transport, warmup="100ms", busy_poll=True),
                               find_agent(), tmp_path)
    result = outcome.result
    assert result["status"] == "complete" and not outcome.interrupted
    assert result["run_id"].split("-")[1:3] == [transport, "roundtrip"]
    pong, ping = argv(trace, "pong"), argv(trace, "ping")
    assert pong[1] == "pong" and ping[1] == "ping"
    assert flag(pong, "--run-id") == flag(ping, "--run-id")
    assert int(flag(ping, "--run-id")) & 0xFFFF == int(result["run_id"][-4:], 16)
    assert flag(pong, "--json") == str(tmp_path / "pong.json") and "--quiet" in pong
    assert "--busy-poll" in pong and "--busy-poll" in ping
    assert (flag(ping, "--duration"), flag(ping, "--warmup")) == ("200000000ns", "100000000ns")
    assert flag(ping, "--rate") == "1000" and flag(ping, "--payload") == "Array1k"
    if transport == "uds":
        assert flag(ping, "--connect") == str(tmp_path / "mwperf.sock")
    else:
        assert flag(ping, "--connect").startswith("127.0.0.1:")
        assert not flag(ping, "--connect").endswith(":0")
    assert_all_gone(trace)


def test_oneway_loss_and_samples(fake_env: dict[str, str], tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_AGENT", "sub:sent=190,sub:lost=5,pub:sent=200")
    outcome, saved = measure(point(mode="oneway", samples=True), find_agent(), tmp_path / "r")
    accounting = outcome.result["measurement"]["accounting"]
    assert (accounting["sent"], accounting["lost"]) == (200, 15)
    assert outcome.result["measurement"]["samples_file"] == "samples.csv"
    assert (saved / "samples.csv").read_text().startswith("seq,intended_ns")
    sub = argv(Path(fake_env["FAKE_AGENT_TRACE"]), "sub")
    assert "--samples" in sub and "--samples" not in argv(Path(fake_env["FAKE_AGENT_TRACE"]), "pub")
    assert not outcome.samples_path.exists()  # the scratch directory is gone


def test_server_exits_before_ready(fake_env: dict[str, str], tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_AGENT", "pong:exit-before-ready")
    with pytest.raises(RunError, match=r"pong exited before it was ready \(exit code 1\): "
                                       r"error: --listen 127.0.0.1:0: Address already in use"):
        runner.run_point(point(), find_agent(), tmp_path)
    assert_all_gone(Path(fake_env["FAKE_AGENT_TRACE"]))


def test_sender_usage_error(fake_env: dict[str, str], tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_AGENT", "ping:usage")
    with pytest.raises(UsageError, match="ping rejected the point: error: --payload: 70000 B"):
        runner.run_point(point(), find_agent(), tmp_path)
    assert_all_gone(Path(fake_env["FAKE_AGENT_TRACE"]))


@pytest.mark.parametrize(("behaviour", "reason"), [
    ("ping:fail", "ping: peer unreachable"),
    ("ping:no-report", "ping: no usable report (no report written (exit code 0); stderr: (no "
                       "message on stderr))"),
])
def test_sender_failure_is_recorded(fake_env: dict[str, str], tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch, behaviour: str,
                                    reason: str) -> None:
    monkeypatch.setenv("FAKE_AGENT", behaviour)
    result = runner.run_point(point(), find_agent(), tmp_path).result
    assert (result["status"], result["status_reason"]) == ("failed", reason)


def test_sub_missing_end_marker(fake_env: dict[str, str], tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_AGENT", "sub:no-exit")
    # a short grace keeps the test short, but the sub must be able to write its report within
    # it: at least twice what starting a Python that imports mwperf takes here now (measured;
    # a fixed 0.3 s lost the report at load 19)
    began = time.monotonic()
    subprocess.run([sys.executable, "-c", "import mwperf.cli"], check=True,
                   env={**os.environ, "PYTHONPATH": str(Path(runner.__file__).parents[1])})
    monkeypatch.setattr(runner, "STOP_GRACE_S", max(0.3, 2 * (time.monotonic() - began)))
    result = runner.run_point(point(mode="oneway"), find_agent(), tmp_path).result
    assert result["status"] == "complete"
    assert [w["code"] for w in result["warnings"]] == ["no-end-of-stream"]


def test_sender_timeout_stops_everything(fake_env: dict[str, str], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_AGENT", "ping:hang")
    monkeypatch.setattr(commandline, "SLACK_S", 0.2)
    cfg = point(peer_timeout="100ms")
    started, wall = time.monotonic(), time.time()
    result = runner.run_point(cfg, find_agent(), tmp_path).result
    took = time.monotonic() - started
    # the runner's own deadline for the sender and its grace before each SIGKILL, plus twice
    # what this machine took to start the agents (measured: the ping's trace file), for their
    # start and their end; not a guess of the machine's speed (a fixed 6 s failed at load 19)
    startup = (Path(fake_env["FAKE_AGENT_TRACE"]) / "ping.pid").stat().st_mtime - wall
    assert took < commandline.sender_timeout_s(cfg) + 2 * STOP_GRACE_S + 2 * startup, startup
    assert result["status"] == "failed"
    assert {"sender-timeout", "agent-killed"} <= {w["code"] for w in result["warnings"]}
    assert_all_gone(Path(fake_env["FAKE_AGENT_TRACE"]))


def start_run(env: dict[str, str], tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    """Start 'mwperf run' for 30 s (on the wall clock: it is signalled while it measures) and
    wait until both agents are up."""
    proc = subprocess.Popen([sys.executable, "-m", "mwperf.cli", "run", "--duration", "30s",
                             "--results", str(tmp_path / "r"), *extra],
                            env={**env, "FAKE_AGENT_CLOCK": "real"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    trace = Path(env["FAKE_AGENT_TRACE"])
    # until both are up, however long a loaded machine takes to start them (a fixed 10 s here
    # fell through, and the signal then hit a run with no agent yet: exit 130, "no agent
    # started"); 120 s is run_mwperf's own limit for a whole run
    deadline = time.monotonic() + 120
    while len(traced_pids(trace)) < 2:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the agents did not start within 120 s"
        time.sleep(0.05)
    time.sleep(0.3)
    return proc


@pytest.mark.parametrize(("sig", "reason"), [(signal.SIGINT, "interrupted by Ctrl-C"),
                                             (signal.SIGTERM, "interrupted by SIGTERM")])
def test_interrupt_gives_partial_result_and_no_leftovers(fake_env: dict[str, str], tmp_path: Path,
                                                         sig: signal.Signals, reason: str) -> None:
    proc = start_run(fake_env, tmp_path)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 3, err
    (folder,) = (tmp_path / "r").glob("*/")
    result = read_saved(folder / "result.json")
    assert (result["status"], result["status_reason"]) == ("partial", reason)
    assert result["measurement"]["accounting"]["sent"] > 0
    assert "partial" in out and "Traceback" not in err
    assert_all_gone(Path(fake_env["FAKE_AGENT_TRACE"]))


def test_interrupt_kills_agents_that_ignore_it(fake_env: dict[str, str], tmp_path: Path) -> None:
    began = time.monotonic()
    proc = start_run({**fake_env, "FAKE_AGENT": "ping:hang,pong:hang"}, tmp_path)
    startup = time.monotonic() - began - 0.3  # start_run's settling sleep is not start-up
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    # the grace before SIGKILL twice (SIGINT, then SIGTERM), plus what this machine took to
    # start the run (measured above) for its end: not a guess (a fixed 6 s failed at load 19)
    assert time.monotonic() - started < 2 * STOP_GRACE_S + startup, startup
    # each says how it ended: both ignored SIGINT and SIGTERM (hang) and were killed
    killed = ("no report written (killed with SIGKILL: it did not stop within 3 s of being "
              "asked); stderr: (no message on stderr)")
    assert proc.returncode == 1 and err.strip().endswith(
        f"no agent wrote a usable report (pong: {killed}; ping: {killed})"), err
    assert_all_gone(Path(fake_env["FAKE_AGENT_TRACE"]))


def test_agents_die_with_mwperf(fake_env: dict[str, str], tmp_path: Path) -> None:
    proc = start_run(fake_env, tmp_path)
    proc.kill()
    proc.communicate(timeout=5)
    deadline = time.monotonic() + 5
    trace = Path(fake_env["FAKE_AGENT_TRACE"])
    while any(alive(pid) for pid in traced_pids(trace).values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert_all_gone(trace)
    assert not os.path.exists(tmp_path / "r")
