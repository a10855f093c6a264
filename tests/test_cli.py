"""The command line as a user meets it: one error line, the right exit code, no traceback."""

import json
from pathlib import Path

import click
import pytest
from conftest import run_mwperf

import mwperf.cli


@pytest.mark.parametrize(("args", "flag"), [
    (["run", "--transport", "udpx"], "--transport: unknown transport 'udpx'; allowed: udp, tcp, uds"),
    (["run", "--payload", "Array3k"], "--payload: unknown payload 'Array3k'"),
    (["run", "--rate", "-5"], "--rate: must be >= 0 (0 = as fast as possible), got -5"),
    (["run", "--duration", "10 parsecs"], "--duration: cannot parse '10 parsecs'"),
    (["run", "--count", "5", "--duration", "1s"], "--count and --duration are mutually exclusive"),
    (["run", "--quick"], "--quick: only applies to a scenario"),
    (["run", "nosuch"], "SCENARIO: unknown scenario 'nosuch'; allowed: a YAML file or a "
                        "built-in name (bridge-payloads, bridges, busy-loop-executors, "),
    (["run", "--dry-run"], "--dry-run: only applies to a scenario"),
    (["run", "--resume", "nowhere"], "--resume: nowhere has no sweep.json; give a sweep folder"),
    (["run", "bridge-payloads", "--reliability", "reliable"],
     "--reliability: scenario 'bridge-payloads' sets 'reliability' itself (bridge-payloads:19); "
     "give one of them"),
    (["run", "default", "--payload", "Array64"], "--payload: cannot be combined with scenario"),
    (["run", "--frobnicate"], "No such option"),
    (["run", "--rate"], "Option '--rate' requires an argument"),
    (["launch"], "No such command 'launch'"),
])
def test_bad_input_is_one_line_exit_2(fake_env: dict[str, str], args: list[str], flag: str) -> None:
    done = run_mwperf(*args, env=fake_env)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("mwperf: error: ")
    assert flag in done.stderr
    assert done.stdout == ""


def test_plain_values_checked_without_an_agent(tmp_path: Path) -> None:
    env = {"MWPERF_AGENT": str(tmp_path / "none"), "PATH": "/usr/bin:/bin"}
    done = run_mwperf("run", "--rate", "-1", env=env)
    assert (done.returncode, done.stderr.strip()) == (
        2, "mwperf: error: --rate: must be >= 0 (0 = as fast as possible), got -1")


def test_missing_agent_is_a_run_error(tmp_path: Path) -> None:
    done = run_mwperf("run", env={"MWPERF_AGENT": str(tmp_path / "none"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1
    assert done.stderr.startswith(f"mwperf: error: MWPERF_AGENT={tmp_path / 'none'}: no executable")


def test_catalogue_commands(fake_env: dict[str, str]) -> None:
    payloads = run_mwperf("payloads", env=fake_env)
    assert payloads.returncode == 0 and "Array1k" in payloads.stdout and "1 KiB" in payloads.stdout
    assert run_mwperf("transports", env=fake_env).stdout.split() == ["udp", "tcp", "uds"]
    version = run_mwperf("version", env=fake_env)
    assert version.stdout.splitlines()[0].startswith("mwperf 0.1.0")
    assert version.stdout.splitlines()[1].startswith("mwperf-agent 0.1.0 (git fake)")


def test_run_writes_results_and_json(fake_env: dict[str, str], tmp_path: Path) -> None:
    done = run_mwperf("run", "--duration", "300ms", "--results", str(tmp_path / "r"),
                  "--json", str(tmp_path / "out.json"), env=fake_env)
    assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "r").glob("*/")
    result = json.loads((folder / "result.json").read_text())
    assert result == json.loads((tmp_path / "out.json").read_text())
    assert result["run_id"] == folder.name and result["status"] == "complete"
    assert sorted(p.name for p in (folder / "agents").iterdir()) == ["ping.json", "pong.json"]
    assert f"saved in {folder}" in done.stdout and "accounting    sent" in done.stdout


def test_every_command_has_help() -> None:
    for name, command in mwperf.cli.cli.commands.items():
        assert command.help, name
        for param in command.params:
            documented = isinstance(param, click.Argument) and param.human_readable_name in (
                command.help or "")  # an argument is described in the command's help text
            assert documented or getattr(param, "help", None), (name, param.name)


def test_no_arguments_prints_help(fake_env: dict[str, str]) -> None:
    done = run_mwperf(env=fake_env)
    assert "Commands:" in done.stdout and "Traceback" not in done.stderr


def test_json_to_stdout_replaces_the_table(fake_env: dict[str, str]) -> None:
    done = run_mwperf("run", "--duration", "200ms", "--no-save", "--json", "-", env=fake_env)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["kind"] == "run-result" and result["status"] == "complete"
