"""Nothing lost on the way to disk (issue 29): a results folder on a full file system (a small
tmpfs, filled to many levels) or a read-only one still reports the point's measurement (table,
--json), names the folder and what failed, leaves the catalogue readable and nothing
half-written behind, and exits 1; a sweep stops at the first refused write with its summary
printed, and --resume completes it once there is room; Ctrl-C while a point is catalogued
(at every statement, and at random moments) leaves the catalogue whole, each point all or
nothing; --resume clears what a killed mwperf left half-saved and catalogues what it saved
but did not catalogue."""

import contextlib
import io
import json
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import read_printed, run_mwperf
from test_store_support import catalogue_rows, clone_point, measure_point, saved_as_v2

from mwperf.agent import find_agent
from mwperf.scenario import Request, launch
from mwperf.store import ingest as ingest_module
from mwperf.store import ingest_point
from mwperf.store.catalogue import CATALOGUE_NAME

POINT = ("run", "--transport", "udp", "--duration", "100ms", "--warmup", "0s", "--samples")
SWEEP = "transport: [udp, tcp, uds]\npayload: Array64\nduration: 100ms\nwarmup: 0s\n"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 16 MiB tmpfs of this test's own (root only), unmounted afterwards: room for the
    catalogue and its rebuilt copy (each ~5.4 MB with a dozen points and their flows)."""
    if os.geteuid() != 0:
        pytest.skip("needs root (mounts a small tmpfs to fill up)")
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(where)],
                             capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def leave_free(disk: Path, free: int) -> None:
    """Fill ``disk`` up to ``free`` bytes of room (the earlier filler removed first)."""
    filler = disk / "filler"
    filler.unlink(missing_ok=True)
    stat = os.statvfs(disk)
    size = max(0, stat.f_bavail * stat.f_frsize - free)
    with open(filler, "wb") as out:
        with contextlib.suppress(OSError):
            out.write(bytes(size))


@contextlib.contextmanager
def read_only(disk: Path) -> Iterator[None]:
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    try:
        yield
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(disk)], check=True)


def assert_nothing_half_written(root: Path) -> None:
    """Every folder under ``root`` is a whole point (or sweep) and no temporary file is left."""
    for folder in [p for p in root.glob("*/") if p.is_dir()] + list(root.glob("*/points/*/")):
        if (folder / "sweep.json").is_file():
            continue
        assert (folder / "result.json").is_file(), f"half-written {folder}: " \
            f"{sorted(p.name for p in folder.rglob('*'))}"
    leftovers = [p for p in root.rglob(".*") if p.name.endswith(".tmp")
                 or p.name.startswith(".parquet-")]
    assert not leftovers


def catalogued(root: Path) -> set[str]:
    if not (root / CATALOGUE_NAME).is_file():
        return set()
    return {folder for (folder,) in catalogue_rows(root, "SELECT folder FROM points")}


def test_a_full_disk_keeps_the_measurement_names_the_folder_and_spares_the_catalogue(
        fake_env: dict[str, str], small_disk: Path) -> None:
    root = small_disk / "results"
    first = run_mwperf(*POINT, "--results", str(root), env=fake_env)
    assert first.returncode == 0, first.stderr
    failures = {}
    for free_kib in (0, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768):
        leave_free(small_disk, free_kib * 1024)
        done = run_mwperf(*POINT, "--results", str(root), "--json", env=fake_env)
        result = read_printed(done.stdout)  # reported, whatever the disk did
        assert result["measurement"]["response"]["count"] > 0
        folder = root / result["run_id"]
        (small_disk / "filler").unlink()
        if done.returncode == 0:
            assert f"{folder.name}" in catalogued(root)
            continue
        assert done.returncode == 1, done.stderr
        error = done.stderr.splitlines()[-1]
        failures[free_kib] = error
        not_saved = re.fullmatch(
            rf"mwperf: error: {re.escape(str(folder))}: No space left on device while "
            r"(writing \S+|creating \S+/|creating the folder); the measurement above was not "
            r"saved", error)
        not_catalogued = re.fullmatch(
            rf"mwperf: error: {re.escape(str(root))}: No space left on device while writing "
            rf"the catalogue; the measurement above is saved in {re.escape(str(folder))} but "
            r"not catalogued: add it with 'mwperf results --rebuild --results \S+' once the "
            r"disk has room \(or use another --results folder\)", error)
        assert not_saved or not_catalogued, error
        assert folder.exists() == bool(not_catalogued)  # a folder is whole or gone
        assert folder.name not in catalogued(root)
        assert_nothing_half_written(root)
        # the catalogue is as it was: readable, every row a saved point
        listed = run_mwperf("results", "--results", str(root), env=fake_env)
        assert listed.returncode == 0, listed.stderr
        assert catalogued(root) <= {p.parent.name for p in root.glob("*/result.json")}
    print("\n".join(f"{kib} KiB free: {line}" for kib, line in failures.items()))
    assert any("was not saved" in line for line in failures.values())
    assert any("not catalogued" in line for line in failures.values())
    rebuilt = run_mwperf("results", "--rebuild", "--results", str(root), env=fake_env)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert catalogued(root) == {p.parent.name for p in root.glob("*/result.json")}
    assert run_mwperf("query", "select count(*) from samples", "--results", str(root),
                      env=fake_env).returncode == 0


def test_a_read_only_results_folder_prints_the_table_and_names_the_folder(
        fake_env: dict[str, str], small_disk: Path, tmp_path: Path) -> None:
    root = small_disk / "results"
    assert run_mwperf(*POINT, "--results", str(root), env=fake_env).returncode == 0
    (tmp_path / "s.yaml").write_text(SWEEP)
    with read_only(small_disk):
        done = run_mwperf(*POINT, "--results", str(root), env=fake_env)
        assert done.returncode == 1
        assert re.search(r"^udp +roundtrip .* complete$", done.stdout, re.M), done.stdout
        assert "saved in" not in done.stdout
        assert re.fullmatch(rf"mwperf: error: {re.escape(str(root))}/\S+: Read-only file "
                            r"system while creating the folder; the measurement above was not "
                            r"saved\n", done.stderr.split("...\n", 1)[1]), done.stderr
        # reading still works
        listed = run_mwperf("results", "--results", str(root), env=fake_env)
        assert listed.returncode == 0 and "(1 row)" in listed.stdout, listed.stderr
        queried = run_mwperf("query", "select count(*) from samples", "--results", str(root),
                             env=fake_env)
        assert queried.returncode == 0, queried.stderr
        # a sweep fails before it measures anything, naming the folder
        sweep = run_mwperf("run", str(tmp_path / "s.yaml"), "--results", str(root),
                           env=fake_env)
        assert sweep.returncode == 1
        assert re.fullmatch(rf"mwperf: error: cannot create {re.escape(str(root))}/\S+-s-"
                            r"[0-9a-f]{4}: Read-only file system\n", sweep.stderr), sweep.stderr
        assert not list(Path(fake_env["FAKE_AGENT_TRACE"]).glob("*.pid"))[2:]  # 1 point ran


def test_a_sweep_stops_at_a_full_disk_and_resume_completes_it(
        fake_env: dict[str, str], small_disk: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from mwperf.scenario import sweep as sweep_module

    measured = []
    real_measure = sweep_module.measure

    def measure_then_fill(*args: Any, **kwargs: Any) -> Any:
        if len(measured) == 1:  # the second point meets a full disk
            leave_free(small_disk, 0)
        measured.append(args)
        return real_measure(*args, **kwargs)

    monkeypatch.setattr(sweep_module, "measure", measure_then_fill)
    (tmp_path / "s.yaml").write_text(SWEEP)
    root = small_disk / "results"
    summary = launch(Request(str(tmp_path / "s.yaml"), False, root, None, {}), find_agent(),
                     io.StringIO())
    run = summary.run
    assert len(measured) == 2  # stopped at the refused write
    assert run.not_saved is not None and str(run.folder) in str(run.not_saved)
    assert "No space left on device" in str(run.not_saved)
    statuses = [e.status for e in run.entries]
    assert statuses[0] == "complete" and statuses[2] == "pending"
    second = run.entries[1]
    if second.status == "failed":  # its folder could not be written: measured again
        assert "the measurement above was not saved" in (second.reason or "")
        assert second.result is None
    assert summary.status == ("failed" if second.status == "failed" else "partial")
    text = summary.text()
    assert "tcp" in text and "not measured: 1 point" in text  # the second point's row is shown
    (small_disk / "filler").unlink()
    assert_nothing_half_written(root)

    # a process of its own: measure_then_fill (patched in above) is not for the resume
    resumed = run_mwperf("run", "--resume", str(run.folder), env=fake_env, process=True)
    assert resumed.returncode == 0, resumed.stderr
    entries = json.loads((run.folder / "sweep.json").read_text())["entries"]
    assert [e["status"] for e in entries] == ["complete"] * 3
    rows = catalogue_rows(root, "SELECT point_index, folder FROM points ORDER BY 1")
    assert [index for index, _ in rows] == [1, 2, 3]  # each point once
    assert {folder for _, folder in rows} == {f"{run.folder.name}/{e['result']}"
                                              for e in entries}
    assert (run.folder / "summary.json").is_file()


PARTS_OF_EACH_POINT = ("SELECT point_id, "
                       "(SELECT count(*) FROM warnings w WHERE w.point_id = p.point_id), "
                       "(SELECT count(*) FROM topics t WHERE t.point_id = p.point_id), "
                       "(SELECT count(*) FROM graph_runs g WHERE g.graph_id = p.point_id) "
                       "FROM points p")
"""each catalogued point with its number of warnings, topics and graph runs (its flows)"""


class Interrupting:
    """A catalogue connection that sends this process SIGINT at its ``at``-th call (before or
    after passing the call on)."""

    def __init__(self, con: Any, at: int, after: bool) -> None:
        self.con, self.at, self.after, self.calls = con, at, after, 0

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.con, name)
        if name not in ("execute", "executemany", "begin", "commit", "rollback"):
            return method

        def call(*args: Any) -> Any:
            self.calls += 1
            if self.calls == self.at and not self.after:
                os.kill(os.getpid(), signal.SIGINT)
            done = method(*args)
            if self.calls == self.at and self.after:
                os.kill(os.getpid(), signal.SIGINT)
            return done
        return call


def test_ctrl_c_at_every_catalogue_statement_leaves_each_point_all_or_nothing(
        fake_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    template = measure_point(tmp_path / "template")
    root = tmp_path / "results"
    real_connect = ingest_module.connect
    at = {"n": 0, "after": False}

    @contextlib.contextmanager
    def connect(*args: Any, **kwargs: Any) -> Iterator[Any]:
        with real_connect(*args, **kwargs) as con:
            yield Interrupting(con, at["n"], at["after"])

    monkeypatch.setattr(ingest_module, "connect", connect)
    ingested, interrupted = set(), 0
    warnings = [{"code": "w", "message": "m", "hint": None}] * 2
    for n in range(1, 100):  # past every statement of one ingest (its flows' rows too)
        at.update(n=(n + 1) // 2, after=n % 2 == 0)
        run_id = f"20261122T{n:06d}Z-udp-roundtrip-{n:04x}"
        point = clone_point(template, root, run_id, warnings=warnings)
        try:
            ingest_point(point)
        except KeyboardInterrupt:
            interrupted += 1
        else:
            ingested.add(run_id)
        points = {p for (p,) in catalogue_rows(root, "SELECT point_id FROM points")} \
            if (root / CATALOGUE_NAME).is_file() else set()
        if at["after"] and run_id not in ingested and run_id in points:
            ingested.add(run_id)  # interrupted after its commit: in, whole
        assert points == ingested, (n, at)
        if points:  # each point whole: its 2 warnings, its topic, its flows went in with it
            counts = catalogue_rows(root, PARTS_OF_EACH_POINT)
            assert {row[1:] for row in counts} == {(2, 1, 1)}, (n, at, counts)
        flows = {g for (g,) in catalogue_rows(root, "SELECT graph_id FROM graph_runs")} \
            if (root / CATALOGUE_NAME).is_file() else set()
        assert flows == points, (n, at)  # and never without it
        if not interrupted and n > 2:
            break
    assert interrupted >= 5 and ingested
    assert catalogue_rows(root, "SELECT count(*) FROM runs") == [(len(ingested),)]


SIGINT_LOOP = textwrap.dedent("""
    import itertools, json, shutil, sys
    from pathlib import Path
    from mwperf.results import write_json
    from mwperf.store import ingest_point
    template, sweep, start = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    result = json.loads((template / "result.json").read_text())
    for n in itertools.count(start):
        run_id = f"20261122T{n:06d}Z-udp-roundtrip-{n % 65536:04x}"
        target = sweep / "points" / run_id
        shutil.copytree(template, target, ignore=shutil.ignore_patterns("*.parquet", "result.json"))
        warnings = [{"code": "w", "message": f"warning {i}", "hint": None} for i in range(n % 4)]
        topics = [dict(result["measurement"], topic=t, name=f"t{t}") for t in range(1 + n % 3)]
        write_json(target / "result.json", dict(result, run_id=run_id, warnings=warnings,
                                                per_topic=topics))
        ingest_point(target)
        print(n, flush=True)
""")


def test_ctrl_c_at_random_moments_leaves_the_catalogue_whole(fake_env: dict[str, str],
                                                             tmp_path: Path) -> None:
    template = saved_as_v2(measure_point(tmp_path / "template", samples=True))
    root = tmp_path / "results"
    sweep = root / "20261122T000000Z-suite-sigint-0000"
    rng = random.Random(29)
    start, reported = 0, 0
    for _ in range(8):
        writer = subprocess.Popen([sys.executable, "-c", SIGINT_LOOP, str(template), str(sweep),
                                   str(start)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
        assert writer.stdout is not None and writer.stderr is not None
        assert writer.stdout.readline()
        time.sleep(rng.uniform(0.02, 0.6))
        writer.send_signal(signal.SIGINT)
        reported += 1 + len(writer.stdout.read().split())
        stderr = writer.stderr.read()
        writer.wait()
        # a Ctrl-C, however DuckDB reported it, ends mwperf as a Ctrl-C
        assert stderr.rstrip().splitlines()[-1].startswith("KeyboardInterrupt"), stderr
        assert writer.returncode in (-signal.SIGINT, 130, 1), stderr
        start += 1000
        counts = catalogue_rows(root, PARTS_OF_EACH_POINT)
        assert len(counts) >= reported
        for point_id, warnings, topics, _ in counts:
            n = int(point_id[9:15])
            assert (topics, warnings) == (1 + n % 3, n % 4), point_id
    queried = run_mwperf("query", "select count(distinct point_id) from samples", "--results",
                         str(root), env=fake_env)
    assert queried.returncode == 0, queried.stderr


def test_resume_clears_half_saved_points_and_catalogues_saved_ones(
        fake_env: dict[str, str], tmp_path: Path) -> None:
    """What a kill leaves: a point folder without its result.json (killed while saving), a
    temporary file of a dead mwperf, a point saved and listed but not catalogued (killed
    between the two)."""
    (tmp_path / "s.yaml").write_text(SWEEP)
    root = tmp_path / "r"
    done = run_mwperf("run", str(tmp_path / "s.yaml"), "--results", str(root), env=fake_env)
    assert done.returncode == 0, done.stderr
    (folder,) = root.glob("*/")
    entries = json.loads((folder / "sweep.json").read_text())["entries"]
    half = folder / "points" / "20261122T000000Z-udp-roundtrip-dead"
    (half / "agents").mkdir(parents=True)
    (half / "agents" / "ping.json").write_text("{}")
    dead = folder / f".sweep.json.{2 ** 22 + 1}.tmp"  # beyond pid_max: no such process
    dead.write_text("{")
    missing = entries[1]["result"]
    import duckdb
    with duckdb.connect(str(root / CATALOGUE_NAME)) as con:
        con.execute("DELETE FROM points WHERE folder = ?", [f"{folder.name}/{missing}"])
    resumed = run_mwperf("run", "--resume", str(folder), env=fake_env)
    assert resumed.returncode == 0, resumed.stderr
    assert f"removed {half}: mwperf stopped while saving it" in resumed.stderr
    assert f"cataloguing {folder / missing} (saved, but mwperf stopped" in resumed.stderr
    assert resumed.stderr.count("(kept from the earlier run)") == 3
    assert not half.exists() and not dead.exists()
    rows = catalogue_rows(root, "SELECT point_index FROM points ORDER BY 1")
    assert rows == [(1,), (2,), (3,)]
    assert_nothing_half_written(root)


def test_duckdbs_report_of_a_ctrl_c_is_a_keyboard_interrupt(tmp_path: Path) -> None:
    """DuckDB catches the SIGINT itself and fails the statement (RuntimeError: Query
    interrupted); mwperf makes it the Ctrl-C it was. On one DuckDB thread: with several, the
    scan noticed the SIGINT only ~8 s later, each of them busy (8 s of CPU, a tenth of the unit
    tier's); the conversion checked is the same."""
    import threading

    import duckdb

    from mwperf.store.duckerr import ctrl_c_stops

    con = duckdb.connect(str(tmp_path / "x.duckdb"))
    con.execute("SET threads = 1")
    con.execute("CREATE TABLE t (n BIGINT)")
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt), ctrl_c_stops():
        con.begin()
        con.execute("INSERT INTO t SELECT count(*) FROM range(100000000000)")
    timer.join()
    con.rollback()
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(0,)]


def test_ctrl_c_during_a_query_is_an_interruption(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """(DuckDB may take many seconds to notice a SIGINT in one long scan: the failure it then
    raises is given to the command line directly.)"""
    from mwperf import cli, store

    def interrupted(*args: Any) -> Any:
        raise RuntimeError("Query interrupted")

    monkeypatch.setattr(store, "run_query", interrupted)
    with pytest.raises(SystemExit) as stopped:
        cli.main(["query", "select 1", "--results", str(tmp_path)])
    assert stopped.value.code == 130
    assert capsys.readouterr().err == "mwperf: error: interrupted\n"
