"""mwperf import: performance_test JSON/CSV and ros2-performance text files (fixtures written
from the formats' documentation, tests/fixtures/) become catalogue runs of kind 'import' whose
numbers are the files' numbers, pooled correctly; broken files are usage errors naming the
file and line; report and compare work on the imports."""

import json
import math
import re
import shutil
from pathlib import Path

import pytest
from conftest import as_v2, read_saved, run_mwperf
from test_store_support import catalogue_rows

from mwperf import store
from mwperf.errors import UsageError
from mwperf.imports import import_files
from mwperf.report import build
from mwperf.schema import validation_error

FIXTURES = Path(__file__).parent / "fixtures"
PT_JSON = FIXTURES / "performance_test" / "cyclonedds-array1k.json"
PT_CSV = FIXTURES / "performance_test" / "cyclonedds-array1k.csv"
ROS2 = FIXTURES / "ros2_performance" / "run1"


def _pooled_fixture() -> tuple[float, float]:
    """The mean and population std dev of the fixture's three intervals, from first
    principles: (n, mean, variance) per interval."""
    parts = [(1000, 100e3, 1.0e-10 * 1e18), (998, 110e3, 4.0e-10 * 1e18),
             (1000, 105e3, 2.5e-10 * 1e18)]
    n = sum(p[0] for p in parts)
    mean = sum(k * m for k, m, _ in parts) / n
    m2 = sum(k * v + k * (m - mean) ** 2 for k, m, v in parts)
    return mean, math.sqrt(m2 / n)


def test_performance_test_json_and_csv_import_alike(tmp_path: Path) -> None:
    root = tmp_path / "results"
    run = import_files(root, "performance-test", [PT_JSON, PT_CSV])
    [(kind, scenario)] = catalogue_rows(root, "SELECT kind, scenario FROM runs")
    assert (kind, scenario) == ("import", "import:performance-test")
    rows = catalogue_rows(root, "SELECT transport, mode, rate, payload_bytes, reliability, "
                          "depth, latency_count, latency_min_ns, latency_max_ns, "
                          "latency_mean_ns, latency_stddev_ns, latency_p99_ns, sent, lost, "
                          "sub_rss_kib, sub_cpu_s FROM points ORDER BY point_index")
    mean, sd = _pooled_fixture()
    for row in rows:
        assert row[:7] == ("rmw_cyclonedds_cpp", "oneway", 1000.0, 1024, "reliable", 16, 2998)
        assert row[7:9] == (79_000, 400_000)
        assert row[9] == pytest.approx(mean) and row[10] == pytest.approx(sd)
        assert row[11] is None  # no percentiles in the source: none invented
        assert row[12:15] == (3000, 2, 20482)
        assert row[15] == pytest.approx(0.45)
    result = read_saved(sorted(run.glob("points/*/result.json"))[0])
    assert result["source"] == {"tool": "performance_test", "format": "json",
                                "file": PT_JSON.name, "id": "fixture-0001", "version": "2.0.0"}
    assert len(result["measurement"]["series"]) == 3


def test_ros2_performance_folder_gives_topics_and_totals(tmp_path: Path) -> None:
    root = tmp_path / "results"
    import_files(root, "ros2-performance", [ROS2])
    [point] = catalogue_rows(root, "SELECT transport, rate, payload_bytes, topics, "
                             "latency_count, latency_mean_ns, sent, lost FROM points")
    assert point == ("ros2-performance", 100.0, 36, 2, 1998, 135_000.0, 2000, 2)
    topics = catalogue_rows(root, "SELECT topic, name, latency_count, latency_mean_ns, "
                            "latency_max_ns, latency_stddev_ns, lost FROM topics ORDER BY 1")
    assert topics == [(0, "lyon/amazon", 1000, 120_000.0, 400_000, 15_000.0, 0),
                      (1, "hamburg/nile", 998, 150_000.0, 600_000, 20_000.0, 2)]


def test_imported_results_follow_the_schema(tmp_path: Path) -> None:
    root = tmp_path / "results"
    runs = [import_files(root, "performance-test", [PT_JSON, PT_CSV]),
            import_files(root, "ros2-performance", [ROS2])]
    paths = [p for run in runs for p in run.glob("points/*/*.json")]
    assert len(paths) == 3
    for path in paths:  # the v3 document as written, and the v2 run-result it stands for
        assert validation_error(json.loads(path.read_text()), "result") is None
        assert validation_error(as_v2(read_saved(path)), "run-result") is None


def test_one_file_alone(tmp_path: Path) -> None:
    root = tmp_path / "results"
    import_files(root, "ros2-performance", [ROS2 / "latency_all.txt"])
    import_files(root, "ros2-performance", [ROS2 / "latency_total.txt"])
    counts = catalogue_rows(root, "SELECT latency_count, topics FROM points ORDER BY topics")
    assert counts == [(1998, 1), (1998, 2)]


@pytest.mark.parametrize(("name", "text", "message"), [
    ("a.json", '{"id": 1}', "a.json: not a performance_test JSON log (no 'analysis_results'"),
    ("b.json", '{"analysis_results": [{"latency_min": 1}]}',
     "b.json: analysis_results[0]: no 'num_samples_received'"),
    ("c.csv", "Experiment id: x\nreceived,sent\n1,2\n",
     "c.csv: not a performance_test CSV log (no '---EXPERIMENT-START---' line)"),
    ("d.csv", "---EXPERIMENT-START---\nreceived,\tlatency_mean (ms)\n1,\t0.1\n2\n",
     "d.csv:4: 1 values, the header has 2"),
    ("e.csv", "---EXPERIMENT-START---\nreceived,\tlatency_mean (ms)\nx,\t0.1\n",
     "e.csv:3: not a number"),
    ("f.csv", "---EXPERIMENT-START---\nsent,\tlost\n1,\t0\n",
     "f.csv:2: header has no column 'received'"),
])
def test_broken_performance_test_files(tmp_path: Path, name: str, text: str,
                                       message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(UsageError) as caught:
        import_files(tmp_path / "results", "performance-test", [path])
    assert message in str(caught.value)
    assert not (tmp_path / "results").exists()  # nothing written for a bad file


def test_broken_ros2_performance_files(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    shutil.copytree(ROS2, folder)
    lines = (folder / "latency_all.txt").read_text().splitlines()
    lines[2] = lines[2].rsplit(maxsplit=1)[0]
    (folder / "latency_all.txt").write_text("\n".join(lines) + "\n")
    with pytest.raises(UsageError, match=r"latency_all.txt:3: 11 values, the header has 12"):
        import_files(tmp_path / "results", "ros2-performance", [folder])
    (folder / "latency_total.txt").write_text("received[#]  lost[#]\n1 0\n")
    with pytest.raises(UsageError, match=r"latency_total.txt:1: header lacks mean\[us\]"):
        import_files(tmp_path / "results", "ros2-performance", [folder / "latency_total.txt"])
    with pytest.raises(UsageError, match="holds neither"):
        import_files(tmp_path / "results", "ros2-performance", [tmp_path])


def test_imports_are_reported_compared_and_rebuilt(tmp_path: Path) -> None:
    root = tmp_path / "results"
    args = ("--results", str(root))
    first = run_mwperf("import", "performance-test", str(PT_JSON), *args)
    assert first.returncode == 0, first.stderr
    second = run_mwperf("import", "performance-test", str(PT_CSV), *args)
    assert second.returncode == 0, second.stderr
    runs = [r[0] for r in catalogue_rows(root, "SELECT run_id FROM runs ORDER BY run_id")]
    html = build(root, runs)
    assert "performance_test" in html and "cyclonedds-array1k.json" in html
    charts = re.findall(r'<svg class="chart".*?</svg>', html, re.S)
    assert charts and all('class="datum"' in c or 'class="trace' in c for c in charts)
    assert "the source has no percentiles" in html  # the mean drawn instead of a p50
    same = run_mwperf("compare", runs[0], runs[1], *args, "--budget", "max=+1%")
    assert same.returncode == 0, same.stdout + same.stderr
    assert "not measured on both sides" in same.stdout  # p50/p99: no percentiles imported
    store.rebuild(root)
    assert catalogue_rows(root, "SELECT DISTINCT kind FROM runs") == [("import",)]
    usage = run_mwperf("import", "performance-test", str(tmp_path / "missing.json"), *args)
    assert usage.returncode == 2 and "missing.json: cannot read" in usage.stderr
