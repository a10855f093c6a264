"""`mwperf show`: a point's full details after the fact, from the catalogue or from a path."""

from pathlib import Path

from conftest import run_mwperf

SCENARIO = """\
description: two points for show
transport: [udp, tcp]
rate: 200
payload: Array64
duration: 300ms
warmup: 100ms
"""


def sweep(env: dict[str, str], tmp_path: Path) -> Path:
    (tmp_path / "s.yaml").write_text(SCENARIO)
    done = run_mwperf("run", str(tmp_path / "s.yaml"), "--results", str(tmp_path / "r"), env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return tmp_path / "r"


def test_every_point_of_the_latest_run_or_one_by_number(fake_env: dict[str, str],
                                                       tmp_path: Path) -> None:
    results = sweep(fake_env, tmp_path)
    done = run_mwperf("show", "--results", str(results), env=fake_env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("accounting    sent") == 2
    assert done.stdout.index("udp ") < done.stdout.index("tcp ")  # in the sweep's order
    (sweep_dir,) = results.glob("*/")
    assert f"from {sweep_dir}/points/" in done.stdout
    one = run_mwperf("show", "latest", "--point", "2", "--results", str(results), env=fake_env)
    assert one.returncode == 0, one.stderr
    assert one.stdout.count("accounting    sent") == 1 and "\ntcp " in one.stdout
    missing = run_mwperf("show", "--point", "3", "--results", str(results), env=fake_env)
    assert missing.returncode == 2 and "--point 3: run " in missing.stderr, missing.stderr


def test_paths_a_point_folder_a_sweep_folder_or_a_result_file(fake_env: dict[str, str],
                                                              tmp_path: Path) -> None:
    results = sweep(fake_env, tmp_path)
    (sweep_dir,) = results.glob("*/")
    points = sorted((sweep_dir / "points").glob("*/"))
    assert len(points) == 2
    for target, shown in ((sweep_dir, 2), (points[0], 1), (points[1] / "result.json", 1)):
        done = run_mwperf("show", str(target), env=fake_env)
        assert done.returncode == 0, done.stderr
        assert done.stdout.count("accounting    sent") == shown, target


def test_bad_targets_are_usage_errors_naming_them(fake_env: dict[str, str],
                                                 tmp_path: Path) -> None:
    (tmp_path / "junk.json").write_text("{}")
    for args, says in (((str(tmp_path / "junk.json"),), "not an mwperf result"),
                       ((str(tmp_path),), "neither a point folder"),
                       ((str(tmp_path / "junk.json"), "--point", "1"), "--point: only with runs")):
        done = run_mwperf("show", *args, env=fake_env)
        assert done.returncode == 2 and says in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr
    # no catalogue: what 'mwperf report' says and does, with the command that creates one
    done = run_mwperf("show", "--results", str(tmp_path / "none"), env=fake_env)
    assert done.returncode == 1 and "no catalogue in results folder" in done.stderr, done.stderr
