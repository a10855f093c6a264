"""`mwperf show`: a point's full details after the fact, from the catalogue or from a path."""

import json
from pathlib import Path

import pytest

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


# ------------------------------------------------------------------ one reader (result/load.py)

GOLDEN = Path(__file__).parent / "vectors" / "results"


@pytest.mark.parametrize("name", sorted(p.name for p in GOLDEN.glob("*.json")
                                        if json.loads(p.read_text())["kind"] == "run-result"))
def test_a_stream_result_shows_the_same_through_the_v3_reader(name: str) -> None:
    """Every golden stream result, read as v3 (upgraded) and shown through its stream view,
    prints exactly what the v2 document printed when the renderers read it directly."""
    from mwperf.show.details import render_details
    from mwperf.show.points import load_targets, render_points
    from mwperf.show.table import label, render, render_notes, row_from_result

    path = GOLDEN / name
    old = json.loads(path.read_text())
    row = row_from_result(old, str(path))
    direct = (render([row]) + render_details(old)
              + render_notes([row], [(label(row), w) for w in old.get("warnings") or []])
              + f"from {path}\n")
    assert render_points(load_targets(path.parent, (str(path),), None)) == direct


def test_a_graph_result_is_shown_as_its_run_printed_it(tmp_path: Path) -> None:
    """`mwperf show` of a graph run's result file or folder: its edges, calls and chains."""
    from mwperf.show.graph import render as render_graph

    folder = tmp_path / "20261129T000000Z-graph"
    folder.mkdir()
    document = json.loads((GOLDEN / "graph-chain-service.json").read_text())
    (folder / "graph-result.json").write_text(json.dumps(document))
    for target in (folder, folder / "graph-result.json"):
        done = run_mwperf("show", str(target))
        assert done.returncode == 0, done.stderr
        assert render_graph({**document, "warnings": []}) in done.stdout
        assert done.stdout.rstrip().endswith(f"from {folder / 'graph-result.json'}")


def test_a_document_that_is_no_result_names_the_file_and_why(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"kind": "agent-report", "version": 9}))
    done = run_mwperf("show", str(path))
    assert done.returncode == 2
    assert f"{path}: not an mwperf result (kind 'agent-report' version 9" in done.stderr
