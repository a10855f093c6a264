"""The in-process command line of the tests (cli_inprocess.run_inprocess) gives what a child
``python -m mwperf.cli`` gives (exit status, stdout and stderr with its children's output) and
leaves this process as it found it: environment, argv, working directory, temporary folder,
signal handlers, mwperf's caches and per-process state; and run_mwperf picks it for the fake
agent only."""

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from cli_inprocess import FAKE_AGENT, SWITCH, run_inprocess
from conftest import alive, run_mwperf

import mwperf.cli
from mwperf.bridges import build

EXITS = {  # what main does -> the same as a statement a child python runs
    "returns": "pass",
    "exit None": "sys.exit()",
    "exit 3": "sys.exit(3)",
    "exit 256": "sys.exit(256)",
    "exit text": "sys.exit('bye')",
    "Ctrl-C": "raise KeyboardInterrupt",
    "bug": "raise ValueError('oops')",
}


@pytest.mark.parametrize("name", list(EXITS))
def test_exit_status_and_stderr_are_the_interpreters(name: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    statement = EXITS[name]
    child = subprocess.run([sys.executable, "-c", f"import sys\n{statement}"],
                           capture_output=True, text=True, timeout=60, check=False)

    def main(argv: list[str]) -> None:
        exec(f"import sys\n{statement}")

    monkeypatch.setattr(mwperf.cli, "main", main)
    done = run_inprocess([], {**os.environ, "MWPERF_AGENT": str(FAKE_AGENT)})
    assert done.returncode == child.returncode
    assert done.stdout == child.stdout
    assert done.stderr.splitlines()[-1:] == child.stderr.splitlines()[-1:]  # (a traceback's
    # frames differ)


def test_the_call_sees_its_environment_argv_folder_and_tmpdir_and_this_process_keeps_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}
    monkeypatch.setitem(build._failed, "zenoh", "an earlier build failed")  # not the call's

    def main(argv: list[str]) -> None:
        seen.update(environ=dict(os.environ), argv=list(sys.argv), cwd=os.getcwd(),
                    tmp=tempfile.gettempdir(), sigint=signal.getsignal(signal.SIGINT),
                    failed=dict(build._failed), stdin=sys.stdin.read())
        os.environ["LEFT_BY_THE_CALL"] = "1"
        build._failed["x"] = "the call's"
        signal.signal(signal.SIGTERM, lambda *_: None)
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)
        os.chdir("/")
        sys.exit(0)

    monkeypatch.setattr(mwperf.cli, "main", main)
    environ, cwd, tempdir = dict(os.environ), os.getcwd(), tempfile.tempdir
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGUSR1)}
    env = {"MWPERF_AGENT": str(FAKE_AGENT), "TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = run_inprocess(["run", "--rate", "1"], env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert seen == {"environ": env, "argv": [mwperf.cli.__file__, "run", "--rate", "1"],
                    "cwd": str(tmp_path), "tmp": str(tmp_path),
                    "sigint": signal.default_int_handler, "failed": {}, "stdin": ""}
    assert dict(os.environ) == environ and os.getcwd() == cwd and tempfile.tempdir == tempdir
    assert {sig: signal.getsignal(sig) for sig in handlers} == handlers
    assert build._failed == {"zenoh": "an earlier build failed"}


def test_output_of_the_command_and_of_its_children_is_captured(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def main(argv: list[str]) -> None:
        print("from mwperf")
        print("a warning line", file=sys.stderr)
        subprocess.run(["sh", "-c", "echo from a child; echo child error >&2; printf 'cr\\r\\n'"],
                       check=True)
        sys.exit(0)

    monkeypatch.setattr(mwperf.cli, "main", main)
    done = run_inprocess([], {**os.environ, "MWPERF_AGENT": str(FAKE_AGENT)})
    assert done.returncode == 0
    # stdout is block-buffered (the child's lines come first), stderr line-buffered
    assert done.stdout == "from a child\ncr\nfrom mwperf\n"
    assert done.stderr == "a warning line\nchild error\n"


def test_atexit_callbacks_of_the_call_run_when_it_ends_and_its_children_die(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    namespace = {"__name__": "mwperf.example"}  # registered by mwperf code
    exec(textwrap.dedent(f"""
        import atexit, pathlib, subprocess, sys
        started = []
        def main(argv):
            atexit.register(print, "at exit", file=sys.stderr)
            atexit.register(pathlib.Path({str(tmp_path / "exited")!r}).touch)
            started.append(subprocess.Popen(["sleep", "60"]).pid)
            sys.exit(2)
    """), namespace)
    monkeypatch.setattr(mwperf.cli, "main", namespace["main"])
    done = run_inprocess([], {**os.environ, "MWPERF_AGENT": str(FAKE_AGENT)})
    assert (done.returncode, done.stderr) == (2, "at exit\n")
    assert (tmp_path / "exited").exists()
    (pid,) = namespace["started"]
    assert not alive(pid)  # killed as PR_SET_PDEATHSIG would, and reaped
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def test_warnings_print_on_stderr_as_in_a_fresh_interpreter(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import warnings

    def main(argv: list[str]) -> None:
        warnings.warn("shown", UserWarning, stacklevel=1)
        warnings.warn("not shown", DeprecationWarning, stacklevel=1)

    monkeypatch.setattr(mwperf.cli, "main", main)
    done = run_inprocess([], {**os.environ, "MWPERF_AGENT": str(FAKE_AGENT)})
    assert "UserWarning: shown" in done.stderr and "not shown" not in done.stderr


def test_the_timeout_stops_the_command_with_sigterm_and_raises(
        monkeypatch: pytest.MonkeyPatch) -> None:
    stopped = []

    def main(argv: list[str]) -> None:
        def sigterm(signum: int, frame: object) -> None:
            raise InterruptedError("SIGTERM")

        signal.signal(signal.SIGTERM, sigterm)
        try:
            time.sleep(60)
        except InterruptedError:
            stopped.append(True)
            print("stopped", file=sys.stderr)
            sys.exit(1)

    monkeypatch.setattr(mwperf.cli, "main", main)
    handler = signal.getsignal(signal.SIGTERM)
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as expired:
        run_inprocess(["run"], {**os.environ, "MWPERF_AGENT": str(FAKE_AGENT)}, timeout=0.5)
    assert time.monotonic() - started < 10 and stopped
    assert expired.value.stderr == "stopped\n" and expired.value.timeout == 0.5
    assert signal.getsignal(signal.SIGTERM) == handler


def test_the_agents_transports_are_asked_again_per_call(fake_env: dict[str, str]) -> None:
    """mwperf.agent caches them per path; the fake agent's depend on FAKE_AGENT_TRANSPORTS."""
    assert run_mwperf("transports", env=fake_env).stdout.split() == ["udp", "tcp", "uds"]
    more = run_mwperf("transports", env={**fake_env, "FAKE_AGENT_TRANSPORTS": "mqtt"})
    assert more.stdout.split() == ["udp", "tcp", "uds", "mqtt"]
    assert run_mwperf("transports", env=fake_env).stdout.split() == ["udp", "tcp", "uds"]


def test_run_mwperf_runs_in_process_unless_a_child_is_asked_for(
        fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every call in this process, whatever agent the environment names (the real agent's runs
    too), unless process=True or $MWPERF_TEST_INPROCESS=0."""
    calls = []
    monkeypatch.delenv(SWITCH, raising=False)  # (not switched off for this run)
    monkeypatch.setattr(mwperf.cli, "main", lambda argv: calls.append(argv))
    assert run_mwperf("version", env=fake_env).returncode == 0 and calls == [["version"]]
    child = run_mwperf("version", env=fake_env, process=True)  # the real main, in a child
    assert child.returncode == 0 and child.stdout.startswith("mwperf ")
    other = run_mwperf("run", "--transport", "udp", env={**fake_env, "MWPERF_AGENT": "/bin/true"})
    assert other.returncode == 0 and calls == [["version"], ["run", "--transport", "udp"]]
    monkeypatch.setenv(SWITCH, "0")
    switched = run_mwperf("nosuch", env={**fake_env, "MWPERF_AGENT": "/bin/true"})
    assert switched.returncode == 2 and "No such command 'nosuch'" in switched.stderr
    assert len(calls) == 2
