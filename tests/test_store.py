"""The results store: ingest of measured points, sweeps, per-topic rows, relocation, rebuild,
SQL errors, damaged or foreign-version catalogues, a busy catalogue, and the docs/results.md example."""

import json
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest
from conftest import read_saved, run_mwperf
from test_store_support import catalogue_rows, clone_point, measure_point

from mwperf import store
from mwperf.store import catalogue as catalogue_module
from mwperf.store.catalogue import CatalogueBusy, NoCatalogue
from mwperf.store.record import catalogue_point
from mwperf.store import migrate, schema
from mwperf.store.schema import SchemaMismatch

RESULTS_DOC = Path(__file__).resolve().parent.parent / "docs" / "results.md"


def test_a_measured_point_is_catalogued_with_its_parquet(fake_env: dict[str, str],
                                                         tmp_path: Path) -> None:
    root = tmp_path / "results"
    saved = measure_point(root, samples=True, rate="500", reliability="best-effort")
    result = read_saved(saved / "result.json")
    m = result["measurement"]
    assert (saved / "samples.parquet").is_file() and (saved / "series.parquet").is_file()
    [run] = catalogue_rows(root, "SELECT run_id, kind, scenario, status, folder FROM runs")
    assert run == (saved.name, "point", None, result["status"], saved.name)
    [point] = catalogue_rows(root, "SELECT point_id, run_id, point_index, repetition, folder, "
                             "transport, rate, reliability, payload_bytes, latency_p50_ns, "
                             "latency_p99_ns, service_max_ns, sent, lost, loss_pct, "
                             "msgs_per_s, ping_rss_kib, pong_cpu_s, result->>'$.run_id' "
                             "FROM points")
    assert point == (saved.name, saved.name, 1, 1, saved.name, "udp", 500.0, "best-effort",
                     result["config"]["payload_bytes"], m["response"]["p50_ns"],
                     m["response"]["p99_ns"], m["service"]["max_ns"],
                     m["accounting"]["sent"], m["accounting"]["lost"],
                     100 * m["accounting"]["lost"] / m["accounting"]["sent"],
                     m["throughput"]["msgs_per_s"],
                     next(a["process"]["max_rss_kib"] for a in result["agents"]
                          if a["role"] == "ping"),
                     pytest.approx(next(a["process"]["cpu_user_s"] + a["process"]["cpu_sys_s"]
                                        for a in result["agents"] if a["role"] == "pong")),
                     saved.name)
    assert catalogue_rows(root, "SELECT point_id, topic, latency_p50_ns FROM topics") == [
        (saved.name, 0, m["response"]["p50_ns"])]
    samples = store.run_query(root, "SELECT point_id, seq, response_ns FROM samples")
    assert samples.rows == [(saved.name, 0, 30)]  # the fake agent's one sample
    series = store.run_query(root, "SELECT point_id, t_s, received FROM series")
    assert series.rows == [(saved.name, 0, m["series"][0]["received"])]


def test_warnings_and_per_topic_rows(fake_env: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "results"
    template = measure_point(tmp_path / "template")
    result = read_saved(template / "result.json")
    topics = [dict(result["measurement"], topic=i, name=f"topic {i}",
                   address=f"127.0.0.1:{7000 + i}") for i in range(3)]
    topics[2]["response"] = dict(topics[2]["response"], p99_ns=999_000)
    warnings = [{"code": "sender-behind", "message": "late", "hint": "spin"},
                {"code": "too-few-samples", "message": "few", "hint": None}]
    point = clone_point(template, root, "20261122T000000Z-udp-roundtrip-0001", per_topic=topics,
                        warnings=warnings)
    store.ingest_point(point)
    assert catalogue_rows(root, "SELECT topic, name, address, latency_p99_ns FROM topics "
                                "ORDER BY 1") == [
        (0, "topic 0", "127.0.0.1:7000", topics[0]["response"]["p99_ns"]),
        (1, "topic 1", "127.0.0.1:7001", topics[1]["response"]["p99_ns"]),
        (2, "topic 2", "127.0.0.1:7002", 999_000)]
    assert catalogue_rows(root, "SELECT seq, code, message, hint FROM warnings ORDER BY 1") == [
        (0, "sender-behind", "late", "spin"), (1, "too-few-samples", "few", None)]
    store.ingest_point(point)  # again: replaced, not doubled
    assert catalogue_rows(root, "SELECT count(*) FROM topics") == [(3,)]
    assert catalogue_rows(root, "SELECT count(*) FROM warnings") == [(2,)]


def test_a_sweep_is_one_run_with_its_points(fake_env: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "results"
    template = measure_point(tmp_path / "template")
    sweep = root / "20261122T100000Z-suite-default-beef"
    statuses = ("complete", "failed", "complete")
    for i, status in enumerate(statuses):
        point = clone_point(template, sweep / "points", f"20261122T10000{i}Z-udp-roundtrip-000{i}",
                            status=status, started_at=f"2026-11-22T10:00:0{i}.000Z",
                            finished_at=f"2026-11-22T10:00:0{i}.500Z")
        store.ingest_point(point)
    assert catalogue_rows(root, "SELECT run_id, kind, scenario, status, started_at, ended_at, "
                          "folder FROM runs") == [
        (sweep.name, "sweep", "default", "failed", _ts("2026-11-22 10:00:00"),
         _ts("2026-11-22 10:00:02.5"), sweep.name)]
    assert catalogue_rows(root, "SELECT point_index, status, folder FROM points ORDER BY 1") == [
        (i + 1, s, f"{sweep.name}/points/20261122T10000{i}Z-udp-roundtrip-000{i}")
        for i, s in enumerate(statuses)]
    listing = run_mwperf("results", "--results", str(root), env=fake_env)
    assert listing.returncode == 0, listing.stderr
    assert re.search(rf"{sweep.name}\s+2026-11-22 10:00:00\s+sweep\s+default\s+3\s+failed",
                     listing.stdout)


def test_rebuild_takes_index_and_repetition_from_the_sweep_manifest(
        fake_env: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "results"
    template = measure_point(tmp_path / "template")
    sweep = root / "20261122T100000Z-rates-beef"
    ids = ["20261122T100005Z-udp-roundtrip-aaaa", "20261122T100001Z-udp-roundtrip-bbbb"]
    for run_id in ids:
        clone_point(template, sweep / "points", run_id)
    entries = [{"index": 7, "label": "udp 1 kHz (rep 2/3)", "status": "complete",
                "result": f"points/{ids[0]}"},
               {"index": 8, "label": "udp 2 kHz", "status": "complete",
                "result": f"points/{ids[1]}"}]
    (sweep / "sweep.json").write_text(json.dumps({"scenario": "my-rates", "entries": entries}))
    report = store.rebuild(root)
    assert (report.points, report.runs, report.skipped) == (2, {sweep.name}, [])
    assert catalogue_rows(root, "SELECT point_id, point_index, repetition FROM points "
                          "ORDER BY 2") == [(ids[0], 7, 2), (ids[1], 8, 1)]
    assert catalogue_rows(root, "SELECT scenario FROM runs") == [("my-rates",)]


def test_results_folder_can_be_moved(fake_env: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "lab" / "results"
    first = measure_point(root, samples=True)
    measure_point(root, samples=True, transport="tcp")
    moved = tmp_path / "elsewhere" / "moved-results"
    moved.parent.mkdir()
    shutil.move(root, moved)
    shutil.rmtree(tmp_path / "lab")
    done = run_mwperf("query", "SELECT p.transport, count(s.seq) FROM points p JOIN samples s "
                      "USING (point_id) GROUP BY 1 ORDER BY 1", "--format", "csv",
                      "--results", str(moved), env=fake_env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "transport,count(s.seq)\ntcp,1\nudp,1\n"
    for (folder,) in catalogue_rows(moved, "SELECT folder FROM points"):
        assert (moved / folder / "result.json").is_file()
    # and new points still go into the moved folder's catalogue
    newest = measure_point(moved, transport="uds")
    assert catalogue_rows(moved, "SELECT count(*) FROM runs") == [(3,)]
    listing = run_mwperf("results", "--limit", "1", "--results", str(moved), env=fake_env)
    assert listing.stdout.splitlines()[1].split()[0] == newest.name
    assert listing.stdout.endswith("(1 row)\n")
    assert first.name in {r[0] for r in catalogue_rows(moved, "SELECT run_id FROM runs")}


def test_rebuild_recreates_the_catalogue_from_the_folders(fake_env: dict[str, str],
                                                          tmp_path: Path) -> None:
    root = tmp_path / "results"
    saved = [measure_point(root, samples=True), measure_point(root, transport="tcp")]
    before = catalogue_rows(root, "SELECT * EXCLUDE (result) FROM points ORDER BY point_id")
    (root / "catalogue.duckdb").unlink()
    for point in saved:
        for parquet in point.glob("*.parquet"):
            parquet.unlink()
    (saved[0] / ".parquet-999-samples.parquet").write_text("half")  # a killed writer's leftover
    (root / "stray").mkdir()  # a folder without result.json is not a point
    done = run_mwperf("results", "--rebuild", "--results", str(root), env=fake_env)
    assert done.returncode == 0, done.stderr
    assert f"rebuilt {root / 'catalogue.duckdb'}: 2 runs, 2 points" in done.stderr
    assert catalogue_rows(root, "SELECT * EXCLUDE (result) FROM points "
                          "ORDER BY point_id") == before
    assert (saved[0] / "samples.parquet").is_file() and (saved[1] / "series.parquet").is_file()
    assert not list(root.rglob(".parquet-*")) and not list(root.glob(".catalogue-rebuild-*"))


@pytest.mark.parametrize(("sql", "message"), [
    ("selec 1", 'mwperf: error: SQL: Parser Error: syntax error at or near "selec"\n'),
    ("SELECT nope FROM points", "mwperf: error: SQL: Binder Error: Referenced column \"nope\" "
                                "not found in FROM clause!"),
    ("SELECT * FROM nosuch", "mwperf: error: SQL: Catalog Error: Table with name nosuch does "
                             "not exist!"),
    ("DELETE FROM points", "read-only"),
])
def test_sql_errors_are_one_line_exit_2(fake_env: dict[str, str], tmp_path: Path, sql: str,
                                        message: str) -> None:
    root = tmp_path / "results"
    measure_point(root)
    done = run_mwperf("query", sql, "--results", str(root), env=fake_env)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and message in done.stderr
    assert catalogue_rows(root, "SELECT count(*) FROM points") == [(1,)]


def test_query_formats(fake_env: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "results"
    saved = measure_point(root)
    sql = "SELECT point_id, rate, started_at IS NOT NULL AS dated FROM points"
    as_json = run_mwperf("query", sql, "--format", "json", "--results", str(root), env=fake_env)
    assert json.loads(as_json.stdout) == [{"point_id": saved.name, "rate": 1000.0, "dated": True}]
    table = run_mwperf("query", sql, "--results", str(root), env=fake_env).stdout
    assert table.splitlines()[0].split() == ["point_id", "rate", "dated"]
    assert table.splitlines()[1].split() == [saved.name, "1000", "True"]
    assert table.endswith("(1 row)\n")


def test_missing_catalogue_names_the_folder(fake_env: dict[str, str], tmp_path: Path) -> None:
    done = run_mwperf("results", "--results", str(tmp_path / "empty"), env=fake_env)
    assert done.returncode == 1
    assert f"no catalogue in results folder {tmp_path / 'empty'}" in done.stderr
    with pytest.raises(NoCatalogue):
        store.run_query(tmp_path, "SELECT 1")


def test_damaged_catalogue_is_reported_then_rebuilt(fake_env: dict[str, str],
                                                    tmp_path: Path) -> None:
    root = tmp_path / "results"
    first = measure_point(root)
    (root / "catalogue.duckdb").write_bytes(b"this is not a database" * 100)
    done = run_mwperf("results", "--results", str(root), env=fake_env)
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert f"catalogue {root / 'catalogue.duckdb'} is unreadable" in done.stderr
    assert f"recreate it with 'mwperf results --rebuild --results {root}'" in done.stderr
    said: list[str] = []  # a new point: the catalogue is rebuilt with a message, nothing lost
    second = clone_point(first, root, "20261122T000000Z-udp-roundtrip-0002")
    catalogue_point(second, json.loads((second / "result.json").read_text()), notify=said.append)
    assert len(said) == 1 and "rebuilding it from the point folders now" in said[0]
    assert {r[0] for r in catalogue_rows(root, "SELECT point_id FROM points")} == {
        first.name, second.name}


def test_other_schema_version_is_refused(fake_env: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "results"
    saved = measure_point(root)
    with duckdb.connect(str(root / "catalogue.duckdb")) as con:
        con.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(SchemaMismatch, match=f"schema version 99, this mwperf reads version {schema.SCHEMA_VERSION}; "
                                             "recreate it from the point folders with 'mwperf "
                                             "results --rebuild"):
        store.list_runs(root, 5)
    with pytest.raises(SchemaMismatch, match=r"written by a newer mwperf: upgrade mwperf, or "
                                             r"recreate it"):
        store.ingest_point(saved)
    store.rebuild(root)
    assert catalogue_rows(root, "SELECT version FROM schema_version") == [(schema.SCHEMA_VERSION,)]


def test_an_older_schema_is_migrated_or_refused(fake_env: dict[str, str], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "results"
    saved = measure_point(root)
    with duckdb.connect(str(root / "catalogue.duckdb")) as con:
        con.execute("UPDATE schema_version SET version = 0")
    with pytest.raises(SchemaMismatch, match="schema version 0, this mwperf uses version "
                                             rf"{schema.SCHEMA_VERSION} \(no migration: recreate it"):
        store.ingest_point(saved)
    monkeypatch.setitem(migrate.MIGRATIONS, 0,
                        lambda con: con.execute("ALTER TABLE points ADD COLUMN note VARCHAR"))
    store.ingest_point(saved)
    assert catalogue_rows(root, "SELECT version FROM schema_version") == [(schema.SCHEMA_VERSION,)]
    assert catalogue_rows(root, "SELECT point_id, note FROM points") == [(saved.name, None)]


def test_a_version_1_catalogue_gains_the_resilience_columns(fake_env: dict[str, str],
                                                             tmp_path: Path) -> None:
    root = tmp_path / "results"
    saved = measure_point(root)
    with duckdb.connect(str(root / "catalogue.duckdb")) as con:
        for column, _ in schema.RESILIENCE_COLUMNS:
            con.execute(f"ALTER TABLE points DROP COLUMN {column}")
        con.execute("UPDATE schema_version SET version = 1")
    store.ingest_point(saved)
    assert catalogue_rows(root, "SELECT version FROM schema_version") == [(schema.SCHEMA_VERSION,)]
    result = read_saved(saved / "result.json")
    rows = catalogue_rows(root, "SELECT time_to_connect_ns, outage_session FROM points")
    assert rows == [(result["resilience"]["time_to_connect_ns"], None)]  # no outage: no session


def subscribers_of(point: Path) -> list[dict]:
    """Two subscribers made from one-way ``point``'s measurement: one complete, one failed."""
    measurement = read_saved(point / "result.json")["measurement"]
    return [{"subscriber": 0, "name": "sub", "status": "complete", "status_reason": None,
             "measurement": measurement},
            {"subscriber": 1, "name": "sub.1", "status": "failed", "status_reason": "killed",
             "measurement": None}]


def test_each_subscriber_has_a_row(fake_env: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "results"
    first = measure_point(root, mode="oneway")  # several subscribers: a one-way stream's
    many = clone_point(first, root, "20261122T000000Z-udp-oneway-0003",
                       per_subscriber=subscribers_of(first))
    store.ingest_point(many)
    store.ingest_point(many)  # again: replaced, not doubled
    rows = catalogue_rows(root, "SELECT point_id, subscriber, name, status, received, "
                                "latency_p50_ns FROM subscribers ORDER BY subscriber")
    measurement = read_saved(first / "result.json")["measurement"]
    assert rows == [(many.name, 0, "sub", "complete", measurement["accounting"]["received"],
                     measurement["response"]["p50_ns"]),
                    (many.name, 1, "sub.1", "failed", None, None)]
    assert catalogue_rows(root, "SELECT count(*) FROM subscribers WHERE point_id = ?",
                          [first.name]) == [(0,)]  # one subscriber: the point's own row


def test_a_version_2_catalogue_gains_the_subscribers_of_its_points(fake_env: dict[str, str],
                                                                   tmp_path: Path) -> None:
    root = tmp_path / "results"
    first = measure_point(root, mode="oneway")  # several subscribers: a one-way stream's
    many = clone_point(first, root, "20261122T000000Z-udp-oneway-0004",
                       per_subscriber=subscribers_of(first))
    store.ingest_point(many)
    with duckdb.connect(str(root / "catalogue.duckdb")) as con:
        con.execute("DROP TABLE subscribers")
        con.execute("UPDATE schema_version SET version = 2")
    store.ingest_point(first)  # any write migrates; the older points' subscribers are filled in
    assert catalogue_rows(root, "SELECT version FROM schema_version") == [(schema.SCHEMA_VERSION,)]
    assert catalogue_rows(root, "SELECT point_id, subscriber FROM subscribers ORDER BY 2") == [
        (many.name, 0), (many.name, 1)]


def test_a_busy_catalogue_is_waited_for_then_named(fake_env: dict[str, str], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "results"
    saved = measure_point(root)
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import duckdb, sys, time
            con = duckdb.connect({str(root / 'catalogue.duckdb')!r})
            print("held", flush=True)
            time.sleep(float(sys.argv[1]))
        """), "1.5"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        monkeypatch.setattr(catalogue_module, "LOCK_WAIT_S", 0.3)
        with pytest.raises(CatalogueBusy, match=f"results folder {root}: its catalogue is in "
                                                f"use by another mwperf process"):
            store.ingest_point(saved)
        said: list[str] = []  # after a measurement: a warning, the saved folder is kept
        catalogue_point(saved, json.loads((saved / "result.json").read_text()),
                        notify=said.append)
        assert len(said) == 1 and said[0].startswith(f"warning: {saved} is saved but not in "
                                                     f"the catalogue: results folder {root}")
        assert (saved / "result.json").is_file()
        monkeypatch.setattr(catalogue_module, "LOCK_WAIT_S", 30)
        started = time.monotonic()
        store.ingest_point(saved)  # waits for the holder to finish, then goes in
        assert time.monotonic() - started < 20
    finally:
        holder.kill()
        holder.wait()


def test_readme_example_runs(fake_env: dict[str, str], tmp_path: Path) -> None:
    pytest.importorskip("pandas", reason="the docs/results.md example uses pandas (pip install pandas)")
    snippet = re.search(r"<!-- store-example:begin -->\n```python\n(.*?)```\n"
                        r"<!-- store-example:end -->", RESULTS_DOC.read_text(), re.S)
    assert snippet, "docs/results.md lacks the store example between its markers"
    measure_point(tmp_path / "results", samples=True)
    measure_point(tmp_path / "results", samples=True, transport="tcp")
    measure_point(tmp_path / "results", samples=True, topics="2")  # its samples have a topic
    done = subprocess.run([sys.executable, "-c", snippet[1]], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "udp" in done.stdout and "tcp" in done.stdout


def _ts(text: str):  # noqa: ANN202 - a naive UTC datetime as the catalogue returns it
    from datetime import datetime
    return datetime.fromisoformat(text)
