"""RUN arguments of `mwperf report` and `mwperf compare` given as paths (result files, point
folders, sweep folders, results folders) as well as run ids, as `mwperf show` takes them: a
CI job compares a baseline results folder (an artifact) with this build's folder."""

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from conftest import run_mwperf
from report_support import add_point, add_sweep, config, latencies

from mwperf import report
from mwperf.compare import compare
from mwperf.compare.budget import resolve
from mwperf.errors import UsageError
from mwperf.store.sources import staged

BASE = "20261122T100000Z-udp-roundtrip-0001"
SLOWER = "20261122T120000Z-udp-roundtrip-0003"


@pytest.fixture(scope="module")
def two_folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A baseline results folder (sweep of two points, one older single point) and a new one
    whose sweep is 40 % slower; each with its own catalogue, as two CI jobs leave them. Built
    once per module (per worker): the tests only read them."""
    where = tmp_path_factory.mktemp("sources")
    base, new = where / "base-artifact", where / "new"
    add_point(base, "20261121T090000Z-old-0000", latencies(300, 20_000),
              started_at="2026-11-21T09:00:00Z")
    for root, median, hour, tag in ((base, 50_000, "10", "aaaa"), (new, 70_000, "11", "bbbb")):
        add_sweep(root, f"20261122T{hour}0000Z-default-{tag}",
                  [(f"{tag}-{rate}", latencies(2000, median, seed=rate),
                    {"cfg": config(rate=float(rate)),
                     "started_at": f"2026-11-22T{hour}:00:00Z"}) for rate in (100, 1000)],
                  samples=True)
    return base, new


def test_results_folders_compare_their_latest_runs(two_folders: tuple[Path, Path]) -> None:
    base, new = two_folders
    outcome = compare(Path("unused"), str(base), str(new), resolve((), None))
    assert (outcome.base, outcome.new) == ("20261122T100000Z-default-aaaa",
                                           "20261122T110000Z-default-bbbb")
    p50 = [r for r in outcome.rows if r.metric == "p50"]
    assert len(p50) == 2 and all(r.verdict == "regression" for r in p50)
    assert outcome.exit_code == 1
    same = compare(Path("unused"), str(base), str(base), resolve((), None))
    assert same.exit_code == 0 and same.base == same.new


def test_sweep_folder_point_folder_and_result_file(two_folders: tuple[Path, Path]) -> None:
    base, new = two_folders
    (sweep,) = new.glob("*-default-bbbb")
    point = sweep / "points" / "bbbb-100"
    other = base / "20261122T100000Z-default-aaaa" / "points" / "aaaa-100"
    with staged(Path("unused"), [str(sweep), str(other), str(other / "result.json")]) as (
            root, names):
        assert names == [sweep.name, "aaaa-100", "aaaa-100"]
        assert len(list(root.glob("*/points/*/result.json"))) == 2
        assert len(list(root.glob("*/result.json"))) == 1
        # the staging folder links to the originals and writes its own Parquet files
        assert (root / sweep.name / "points" / "bbbb-100" / "samples.csv").is_symlink()
        assert not (root / "aaaa-100" / "series.parquet").is_symlink()
    assert not root.exists()  # removed afterwards
    with pytest.raises(UsageError, match=r"RUN: point bbbb-100 \(.*\) is in .*-default-bbbb and "
                                         r"in .*bbbb-100; give it once"):
        report.build(Path("unused"), [str(sweep), str(point)], "json")
    # a file written with --json (any name, outside a point folder) is one point
    loose = base.parent / "baseline.json"
    shutil.copy(base / "20261121T090000Z-old-0000" / "result.json", loose)
    text = report.build(Path("unused"), [str(loose), str(sweep)], "json")
    document = json.loads(text)
    assert [r["run_id"] for r in document["runs"]] == ["20261121T090000Z-old-0000", sweep.name]
    assert len(document["points"]) == 3


def test_paths_and_catalogue_ids_mix_and_originals_stay_untouched(
        two_folders: tuple[Path, Path]) -> None:
    base, new = two_folders
    before = {p: p.stat().st_mtime_ns for p in new.rglob("*")}
    for path in new.rglob("*"):  # a downloaded artifact may be read-only
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        # BASE from the --results catalogue by prefix, NEW a path to a read-only folder
        outcome = compare(base, "20261122T10", str(new), resolve((), None))
        assert outcome.exit_code == 1 and len(outcome.rows) == 2 * 6
        text = report.build(base, ["20261121", str(new)], "markdown")
        assert "20261121T090000Z-old-0000" in text and "20261122T110000Z-default-bbbb" in text
    finally:
        for path in new.rglob("*"):
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
    assert {p: p.stat().st_mtime_ns for p in new.rglob("*")} == before


def test_copies_and_bad_paths_are_usage_errors(two_folders: tuple[Path, Path],
                                              tmp_path: Path) -> None:
    base, _ = two_folders
    copy = tmp_path / "copy"
    shutil.copytree(base, copy)
    with pytest.raises(UsageError, match=r"NEW: point aaaa-100 .* is in .*base-artifact.* and in .*copy"):
        compare(Path("unused"), str(base), str(copy), resolve((), None))
    (tmp_path / "junk.json").write_text("{}")
    (tmp_path / "empty").mkdir()
    for target, says in ((tmp_path / "junk.json", "RUN: .*junk.json: not an mwperf result"),
                         (tmp_path / "empty", "RUN: .*empty is neither a result file")):
        with pytest.raises(UsageError, match=says):
            report.build(Path("unused"), [str(target)], "json")


def test_cli_compare_two_artifact_folders(two_folders: tuple[Path, Path]) -> None:
    base, new = two_folders
    done = run_mwperf("compare", str(base), str(new), "--format", "json")
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["new"] == "20261122T110000Z-default-bbbb"
    out = base.parent / "r.html"
    made = run_mwperf("report", str(base), str(new), "-o", str(out))
    assert made.returncode == 0, made.stderr
    assert "20261122T110000Z-default-bbbb" in out.read_text()
    bad = run_mwperf("compare", str(base), os.fspath(base.parent / "nope"))
    assert bad.returncode == 2 and "NEW: " in bad.stderr and "nope: no such file or folder" in bad.stderr, bad.stderr


def test_paths_alone_never_open_the_results_catalogue(two_folders: tuple[Path, Path],
                                                      tmp_path: Path) -> None:
    """A report of folders reads only them: a --results folder whose catalogue this mwperf
    cannot open (here: not a catalogue at all; in life: one of an older schema, opened read
    only) is not asked (it was, for probe ids, and refused the report)."""
    base, new = two_folders
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "catalogue.duckdb").write_text("not a catalogue\n")
    made = run_mwperf("report", str(base), str(new), "--results", str(other), "-o",
                      str(tmp_path / "r.html"))
    assert made.returncode == 0, made.stderr
    assert "20261122T110000Z-default-bbbb" in (tmp_path / "r.html").read_text()
