"""Probes in the catalogue and the report: a saved probe (store/probes.py) has one catalogue row
per topic, and `mwperf report` takes it by folder, id or prefix, alone or beside runs."""

from pathlib import Path

from mwperf.report import build
from mwperf.store.probes import probe_rows, save_probe

DOC = {"system": "zenoh tcp/robot:7447", "start_ns": 1_795_000_000_000_000_000,
       "duration_ns": 2_000_000_000, "probe_cpu_s": 0.02, "gap_factor": 3.0,
       "topics": [{"topic": "robot/scan", "msgtype": "zenoh", "count": 80, "rate_hz": 40.0,
                   "gap_p50_ns": 25_000_000, "gap_p99_ns": 26_000_000, "gap_max_ns": 500_000_000,
                   "gaps": 1, "bursts": 0, "size_p50": 4096, "size_max": 4096},
                  {"topic": "robot/image", "msgtype": "zenoh", "count": 60, "rate_hz": 30.0,
                   "gap_p50_ns": 33_000_000, "gap_p99_ns": 34_000_000, "gap_max_ns": 35_000_000,
                   "gaps": 0, "bursts": 0, "size_p50": 315_392, "size_max": 315_392}]}


def test_rows_one_per_topic() -> None:
    rows = probe_rows(DOC, "p1", "p1")
    assert [r["topic"] for r in rows] == ["robot/scan", "robot/image"]
    assert rows[0]["gap_max_ns"] == 500_000_000 and rows[1]["size_p50"] == 315_392
    assert all(r["system"] == "zenoh tcp/robot:7447" and r["duration_ns"] == 2_000_000_000
               for r in rows)


def test_the_report_takes_a_probe_by_folder_id_or_prefix(tmp_path: Path) -> None:
    folder = save_probe(tmp_path, DOC, "the table\n")
    assert (folder / "probe.json").is_file() and (folder / "probe.txt").read_text() == "the table\n"
    for name in (str(folder), folder.name, folder.name[:22]):
        page = build(tmp_path, [name], "html")
        assert "Probes of live systems" in page and "robot/scan" in page, name
    text = build(tmp_path, [folder.name], "markdown")
    assert "| robot/image |" in text.replace(f"| {folder.name} | zenoh tcp/robot:7447 ", "")
