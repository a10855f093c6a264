"""The command line as a user meets it: one error line, the right exit code, no traceback."""

import json
import subprocess
from pathlib import Path
from typing import Any

import click
import pytest
from cli_inprocess import run_inprocess
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
    (["run", "--json", "out.json"], "--json: takes no value (got 'out.json'); --json alone "
                                    "prints the result as JSON, --json-out FILE writes it to FILE"),
    (["run", "--duration", "1s", "--json", "-"], "--json: takes no value (got '-'); "),
    (["run", "--json=out.json"], "--json: takes no value (got 'out.json'); "),
    (["run", "--json-out", "-"], "--json-out: expected a file name, got '-'; to print the JSON "
                                 "on standard output use --json"),
    (["run", "default", "--dry-run", "--json"], "--json: not with --dry-run"),
    (["doctor", "--json-out", ""], "--json-out: expected a file name"),
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
                  "--json-out", str(tmp_path / "out.json"), env=fake_env)
    assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "r").glob("*/")
    result = json.loads((folder / "result.json").read_text())
    assert result == json.loads((tmp_path / "out.json").read_text())  # one document, as written:
    assert (result["schema_version"], result["kind"]) == (3, "result")  # v3 (result/save.py)
    assert result["run_id"] == folder.name and result["status"] == "complete"
    assert sorted(p.name for p in (folder / "agents").iterdir()) == ["ping.json", "pong.json"]
    assert f"saved in {folder}" in done.stdout and "accounting    sent" in done.stdout


def commands(group: click.Group) -> dict[str, click.Command]:
    """A group's commands as --help lists them (the lazily imported ones too)."""
    context = click.Context(group)
    found = {name: group.get_command(context, name) for name in group.list_commands(context)}
    return {name: command for name, command in found.items() if command is not None}


def test_every_command_has_help() -> None:
    assert {"bag", "probe", "run"} <= set(commands(mwperf.cli.cli))
    for name, command in commands(mwperf.cli.cli).items():
        assert command.help, name
        for param in command.params:
            documented = isinstance(param, click.Argument) and param.human_readable_name in (
                command.help or "")  # an argument is described in the command's help text
            assert documented or getattr(param, "help", None), (name, param.name)


def test_no_arguments_prints_help(fake_env: dict[str, str]) -> None:
    done = run_mwperf(env=fake_env)
    assert "Commands:" in done.stdout and "Traceback" not in done.stderr


def test_json_to_stdout_replaces_the_table(fake_env: dict[str, str]) -> None:
    done = run_mwperf("run", "--duration", "200ms", "--no-save", "--json", env=fake_env)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["kind"], result["schema_version"], result["status"]) == ("result", 3,
                                                                            "complete")
    assert result["stream"]["measurement"]["accounting"]["sent"] > 0  # its stream view


BAGS = Path(__file__).parent / "fixtures" / "bags"


def patch_probe_and_footprint(monkeypatch: pytest.MonkeyPatch) -> None:
    """No live ROS 1 system: the probe hears ten messages; no binutils on a script: fixed sizes
    (for the command line run in this process, cli_inprocess)."""
    import mwperf.footprint as fp
    import mwperf.probe.command as probe
    from mwperf.probe.listen import ProbeResult
    from mwperf.probe.stats import summarise_topic

    arrivals = [i * 100_000_000 for i in range(10)]
    topic = summarise_topic("/scan", "sensor_msgs/msg/LaserScan", arrivals, [4000] * 10,
                            [-1] * 10, 0, 1_000_000_000, 3.0)
    monkeypatch.setattr(probe, "probe_ros1", lambda master, topics, seconds, gap_factor:
                        ProbeResult(master, 0, 1_000_000_000, 0.01, gap_factor, [topic]))
    monkeypatch.setattr(fp, "binary", lambda path: fp.Binary(str(path), 1000, 800, 100, 100,
                                                             [("mwperf_agent", 600)]))


def measure_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the commands measure, measured once per test, not once per call: the test calls a
    command three times to compare its outputs, not its figures (footprint's real round trip
    is an mwperf process of its own, ~3 s of CPU a call; encodings' timings 0.2 s a figure)."""
    import mwperf.encodings as enc
    import mwperf.footprint as fp

    real_memory, memory = fp.transport_memory, {}

    def transport_memory(transport: str, env: dict[str, str] | None = None) -> dict[str, Any]:
        if transport not in memory:
            memory[transport] = real_memory(transport, env)
        return memory[transport]

    monkeypatch.setattr(fp, "transport_memory", transport_memory)
    real_measure, rows = enc.measure, {}

    def measure(payloads: tuple[str, ...] = enc.PAYLOADS, budget_s: float = 0.2) -> list[Any]:
        if payloads not in rows:
            rows[payloads] = real_measure(payloads, budget_s)
        return rows[payloads]

    monkeypatch.setattr(enc, "measure", measure)


JSON_COMMANDS = {  # every command with JSON output: its arguments (SUITE: a scenario file)
    "run": ["run", "--duration", "200ms", "--no-save"],
    "run SCENARIO": ["run", "SUITE", "--no-save"],
    "probe": ["probe", "--ros1", "http://robot:11311", "--duration", "1s", "--no-save"],
    "bag info": ["bag", "info", str(BAGS / "small.mcap")],
    "doctor": ["doctor"],
    "encodings": ["encodings", "--payload", "Struct256"],
    "footprint": ["footprint", "--transport", "udp"],  # a real round trip, with the fake agent
    "graphs": ["graphs", "mobile-robot"],
}


def test_every_json_option_is_covered() -> None:
    """Each command with --json also has --json-out, and is in JSON_COMMANDS."""
    def walk(group: click.Group, path: str) -> list[tuple[str, click.Command]]:
        found = []
        for name, command in commands(group).items():
            if isinstance(command, click.Group):
                found += walk(command, f"{path}{name} ")
            else:
                found.append((f"{path}{name}", command))
        return found

    with_json = {path: {o for p in command.params if isinstance(p, click.Option) for o in p.opts}
                 for path, command in walk(mwperf.cli.cli, "")}
    with_json = {path: opts for path, opts in with_json.items() if opts & {"--json", "--json-out"}}
    assert all({"--json", "--json-out"} <= opts for opts in with_json.values()), with_json
    assert set(with_json) == {name.split(" SCENARIO")[0] for name in JSON_COMMANDS}


@pytest.mark.parametrize("name", list(JSON_COMMANDS))
def test_json_prints_and_json_out_writes_the_same_document(fake_env: dict[str, str],
                                                           tmp_path: Path, name: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """--json: the JSON on stdout instead of the text; --json-out FILE: the same JSON in FILE,
    the text on stdout; both together: stdout and FILE hold the same bytes."""
    suite = tmp_path / "suite.yaml"
    suite.write_text("rate: [100, 200]\nduration: 200ms\nwarmup: 0s\n")
    args = [str(suite) if a == "SUITE" else a for a in JSON_COMMANDS[name]]
    patch_probe_and_footprint(monkeypatch)
    measure_once(monkeypatch)

    def mwperf(*more: str) -> subprocess.CompletedProcess[str]:
        done = run_inprocess([*args, *more], {**fake_env, "MWPERF_LEASE_DIR": str(tmp_path)},
                             timeout=120, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return done

    printed = json.loads(mwperf("--json").stdout)
    assert isinstance(printed, dict | list) and printed
    both = mwperf("--json", "--json-out", str(tmp_path / "both.json"))
    assert both.stdout == (tmp_path / "both.json").read_text(encoding="utf-8")
    text = mwperf("--json-out", str(tmp_path / "out.json"))
    written = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert text.stdout.strip() and text.stdout.lstrip()[0] not in "[{"  # the human text
    assert type(written) is type(printed)
    if isinstance(printed, dict):
        assert written.keys() == printed.keys()
    if name == "footprint":  # footprint.py's own 'mwperf run --json-out' worked
        assert [r["transport"] for r in written["transports"]] == ["udp"]
        assert written["transports"][0]["peak_rss_kib"] > 0, written


def test_json_before_an_old_result_file_is_refused(fake_env: dict[str, str],
                                                    tmp_path: Path) -> None:
    """'mwperf run --json out.json' (the old --json FILE) must not run out.json as SCENARIO,
    even when out.json exists from an earlier run."""
    old = tmp_path / "out.json"
    old.write_text('{"kind": "run-result", "status": "complete"}\n')
    done = run_mwperf("run", "--duration", "200ms", "--json", str(old), env=fake_env)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"mwperf: error: --json: takes no value (got '{old}'); --json alone "
                           f"prints the result as JSON, --json-out FILE writes it to FILE\n")
    assert old.read_text() == '{"kind": "run-result", "status": "complete"}\n'


def test_json_before_a_scenario_in_a_json_file_runs_it(fake_env: dict[str, str],
                                                       tmp_path: Path) -> None:
    """A scenario may be a .json file (JSON is YAML): after --json it is still SCENARIO."""
    suite = tmp_path / "suite.json"
    suite.write_text('{"rate": [100], "duration": "200ms", "warmup": "0s"}\n')
    done = run_mwperf("run", "--json", str(suite), "--no-save", env=fake_env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["scenario"] == "suite"
