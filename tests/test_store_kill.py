"""Catalogue integrity after SIGKILL mid-write: a process catalogues points in a loop, as
``mwperf run`` does after saving each (store/record.py), and is killed at random moments, several
times; the catalogue must open, every row's point folder must exist, and every point must have
all of its topic and warning rows (no half points).

DuckDB's own file once came out of this damaged (2.0.1, under two busy loops: "computed checksum
... does not match stored checksum ... in block at location 12288"): the writer after it then
meets an unreadable catalogue, which mwperf rebuilds from the point folders (the folders are the
truth) and says so. The test counts those rebuilds and holds the result to the same checks."""

import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from test_store_support import catalogue_rows, measure_point, saved_as_v2

from mwperf import store
from conftest import read_saved

LOOP = textwrap.dedent("""
    import itertools, json, shutil, sys
    from pathlib import Path
    from mwperf.results import write_json
    from mwperf.store.record import catalogue_point
    template, sweep, start = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    result = json.loads((template / "result.json").read_text())
    for n in itertools.count(start):
        run_id = f"20261122T{n:06d}Z-udp-roundtrip-{n % 65536:04x}"
        target = sweep / "points" / run_id
        shutil.copytree(template, target, ignore=shutil.ignore_patterns("*.parquet", "result.json"))
        warnings = [{"code": "w", "message": f"warning {i}", "hint": None} for i in range(n % 4)]
        topics = [dict(result["measurement"], topic=t, name=f"t{t}") for t in range(1 + n % 3)]
        document = dict(result, run_id=run_id, warnings=warnings, per_topic=topics)
        write_json(target / "result.json", document)  # atomic, as mwperf saves
        catalogue_point(target, document)
        print(n, flush=True)
""")


def test_sigkill_mid_write_keeps_the_catalogue_whole(fake_env: dict[str, str],
                                                     tmp_path: Path) -> None:
    template = saved_as_v2(measure_point(tmp_path / "template", samples=True))
    root = tmp_path / "results"
    sweep = root / "20261122T000000Z-suite-kill-0000"
    rng = random.Random(4)
    start, ingested, rebuilt = 0, 0, 0
    for _ in range(6):
        writer = subprocess.Popen([sys.executable, "-c", LOOP, str(template), str(sweep),
                                   str(start)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
        assert writer.stdout is not None and writer.stderr is not None
        # at least one point went in: the loop is up to speed
        assert writer.stdout.readline(), writer.stderr.read()
        time.sleep(rng.uniform(0.05, 0.8))  # an ingest takes ~0.1-0.4 s here
        writer.send_signal(signal.SIGKILL)
        done = writer.stdout.read().split()
        said = writer.stderr.read()
        writer.wait()
        assert "Traceback" not in said and "warning" not in said, said
        rebuilt += said.count("rebuilding it from the point folders")
        ingested += 1 + len(done)
        start += 1000  # the next writer uses fresh point ids
    points = catalogue_rows(root, "SELECT point_id, folder FROM points")
    print(f"{len(points)} points catalogued, {ingested} reported before the kills, "
          f"{rebuilt} rebuilds of a damaged catalogue")
    assert len(points) >= ingested  # every point reported as ingested is there
    for point_id, folder in points:
        result = read_saved(root / folder / "result.json")
        assert result["run_id"] == point_id
        n = int(point_id[9:15])
        assert catalogue_rows(root, "SELECT count(*) FROM topics WHERE point_id = ?",
                              [point_id]) == [(1 + n % 3,)]
        assert catalogue_rows(root, "SELECT count(*) FROM warnings WHERE point_id = ?",
                              [point_id]) == [(n % 4,)]
    assert catalogue_rows(root, "SELECT run_id, count(*) FROM runs GROUP BY 1") == [
        (sweep.name, 1)]
    assert catalogue_rows(root, "SELECT count(*) FROM topics WHERE point_id NOT IN "
                          "(SELECT point_id FROM points)") == [(0,)]
    assert store.run_query(root, "SELECT count(DISTINCT point_id) FROM samples").rows[0][0] >= \
        len(points)
    # the folders are the truth: a rebuild finds every saved point and leaves no temporaries
    report = store.rebuild(root)
    assert report.points >= len(points) and not report.skipped
    assert not list(root.rglob(".parquet-*")) and not list(root.glob(".catalogue-rebuild-*"))
