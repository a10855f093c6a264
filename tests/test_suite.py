"""Suites: the default points, failures recorded, Ctrl-C keeps finished points."""

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from mwperf import suite
from mwperf.agent import find_agent
from mwperf.errors import UsageError


def test_default_suite_points() -> None:
    points = suite.suite_points("default", quick=False)
    assert len(points) == 4 * 3 * 9
    assert {(p["transport"], p["rate"], p["payload"]) for p in points} == {
        (t, r, p) for t in suite.TRANSPORTS for r in ("100", "1000", "0")
        for p in ("Struct256", "Array1k", "Array64k", "PointCloud512k")}
    assert {(p["mode"], p["duration"], p["warmup"]) for p in points} == {("roundtrip", "1s", "300ms")}
    assert [p["transport"] for p in points[:9]] == list(suite.TRANSPORTS)  # side by side
    assert {p["duration"] for p in suite.suite_points("default", quick=True)} == {"300ms"}
    assert len(suite.suite_points("default", True, ["udp", "mqtt"])) == 24
    with pytest.raises(UsageError, match="SCENARIO: unknown scenario 'x'; allowed: default"):
        suite.suite_points("x", quick=False)


def test_suite_runs_the_built_transports(fake_env: dict[str, str], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []
    monkeypatch.setattr(suite, "suite_points",
                        lambda name, quick, transports: seen.append(transports) or [])
    run(tmp_path)
    assert seen == [["udp", "tcp", "uds"]]


def test_unsupported_point_is_not_a_failure(fake_env: dict[str, str], tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_AGENT", "ping:usage")
    short_points(monkeypatch, ["udp"])
    outcome = run(tmp_path)
    (row,) = outcome.rows
    assert row.status == "not supported" and "do not fit in one UDP datagram" in row.status_reason
    assert row.payload_bytes == 64
    assert outcome.status == "complete"
    assert "not supported: udp roundtrip 1000 Hz Array64: ping rejected the point" in outcome.report()


def short_points(monkeypatch: pytest.MonkeyPatch, transports: list[str]) -> None:
    points = [{"transport": t, "mode": "roundtrip", "rate": "1000", "payload": "Array64",
               "duration": "300ms", "warmup": "0s"} for t in transports]
    monkeypatch.setattr(suite, "suite_points", lambda name, quick, transports=(): points)


def run(tmp_path: Path, conditions: dict[str, Any] | None = None) -> suite.SuiteOutcome:
    lines: list[str] = []
    return suite.run_suite("default", find_agent(), tmp_path / "r", False, conditions or {},
                           lines.append)


def test_failing_point_is_recorded_and_suite_goes_on(fake_env: dict[str, str], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    short_points(monkeypatch, ["udp", "bogus", "uds"])
    outcome = run(tmp_path, {"busy_poll": True})
    assert [row.status for row in outcome.rows] == ["complete", "failed", "complete"]
    assert outcome.rows[1].status_reason.startswith("--transport: unknown transport 'bogus'")
    assert outcome.status == "failed"
    summary = json.loads((outcome.folder / "summary.json").read_text())
    assert [row["transport"] for row in summary] == ["udp", "bogus", "uds"]
    assert (outcome.folder / summary[0]["result"] / "result.json").is_file()
    assert summary[0]["result"].startswith("points/")
    markdown = (outcome.folder / "summary.md").read_text().splitlines()
    assert markdown[0].startswith("| transport") and len(markdown) == 5
    report = outcome.report()
    assert "failed: udp" not in report and "failed: bogus roundtrip 1000 Hz Array64" in report
    assert report.endswith(f"saved in {outcome.folder}\n")


def test_ctrl_c_keeps_finished_points(fake_env: dict[str, str], tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(suite, "suite_points", lambda name, quick, transports=(): [
        {"transport": "udp", "mode": "roundtrip", "rate": "1000", "payload": "Array64",
         "duration": "200ms", "warmup": "0s"},
        {"transport": "tcp", "mode": "roundtrip", "rate": "1000", "payload": "Array64",
         "duration": "30s", "warmup": "0s"},
        {"transport": "uds", "mode": "roundtrip", "rate": "1000", "payload": "Array64",
         "duration": "200ms", "warmup": "0s"}])
    trace = Path(fake_env["FAKE_AGENT_TRACE"])

    def ctrl_c_once_tcp_runs() -> None:  # however slow the host is
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if '"tcp"' in (trace / "ping.argv.json").read_text():
                    break
            except OSError:
                pass
            time.sleep(0.02)
        time.sleep(0.8)  # the fake ping has installed its signal handler
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=ctrl_c_once_tcp_runs, daemon=True).start()
    outcome = run(tmp_path)
    assert outcome.interrupted
    assert [(row.transport, row.status) for row in outcome.rows] == [("udp", "complete"),
                                                                     ("tcp", "partial")]
    assert outcome.rows[1].status_reason == "interrupted by Ctrl-C"
    assert outcome.status == "partial"
    assert len(json.loads((outcome.folder / "summary.json").read_text())) == 2
