"""The side-by-side suite as a scenario ('transport: built-in'): the transports built into the
agent, a point the transport cannot carry is "not supported" (not a failure), the summary."""

import io
import json
from pathlib import Path

import pytest
from conftest import read_saved, run_mwperf, traced_pids

from mwperf.agent import find_agent
from mwperf.scenario import Request, launch
from mwperf.scenario.summary import Summary


def run(tmp_path: Path, text: str) -> Summary:
    (tmp_path / "suite.yaml").write_text(text)
    return launch(Request(str(tmp_path / "suite.yaml"), False, tmp_path / "r", None, {}),
                  find_agent(), io.StringIO())


def test_built_in_means_the_agents_transports(fake_env: dict[str, str], tmp_path: Path) -> None:
    summary = run(tmp_path, "transport: built-in\npayload: Array64\nduration: 200ms\n"
                            "warmup: 0s\n")
    assert [o.row.transport for o in summary.observed] == ["udp", "tcp", "uds"]
    assert summary.status == "complete"


def test_unsupported_point_is_not_a_failure(fake_env: dict[str, str], tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_AGENT", "ping:usage")
    summary = run(tmp_path, "transport: udp\npayload: Array64\nduration: 300ms\nwarmup: 0s\n")
    (row,) = [o.row for o in summary.observed]
    assert row.status == "not supported" and "do not fit in one UDP datagram" in row.status_reason
    assert row.payload_bytes == 64
    assert summary.status == "complete"
    assert "not supported: udp roundtrip 1000 Hz Array64: ping rejected the point" in (
        summary.text())


def test_a_payload_over_the_transports_limit_is_not_supported_and_starts_nothing(
        fake_env: dict[str, str], tmp_path: Path) -> None:
    """The sizes part refuses it before anything starts (parts/sizes.py): a sweep records it
    "not supported" with the reason and goes on."""
    summary = run(tmp_path, "transport: udp\npayload: Array64k\nduration: 200ms\nwarmup: 0s\n")
    (row,) = [o.row for o in summary.observed]
    assert row.status == "not supported", row.status_reason
    assert "--payload: a payload of 65536 bytes does not fit one udp message" in row.status_reason
    assert summary.status == "complete" and traced_pids(Path(fake_env["FAKE_AGENT_TRACE"])) == {}


def test_the_default_suite_from_the_command_line(fake_env: dict[str, str],
                                                 tmp_path: Path) -> None:
    """`mwperf run default --quick` as `make run` runs it (the dry run shows the points of
    every payload: the fake serves the agent's catalogue; one payload really runs)."""
    listing = run_mwperf("run", "default", "--quick", "--dry-run", env=fake_env)
    assert listing.returncode == 0, listing.stderr
    for payload in ("Struct256", "Array1k", "Array64k", "PointCloud512k"):  # default.yaml's
        assert f" {payload}" in listing.stdout, payload
    (tmp_path / "one.yaml").write_text("payload: Array1k\nrate: [100, 0]\n"
                                       "transport: built-in\nduration: 200ms\nwarmup: 0s\n")
    done = run_mwperf("run", str(tmp_path / "one.yaml"), "--busy-poll", "--results",
                      str(tmp_path / "r"), env=fake_env)
    assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "r").glob("*-one-*/")
    summary = json.loads((folder / "summary.json").read_text())
    assert [(r["transport"], r["rate"]) for r in summary["rows"]] == [
        ("udp", 100), ("tcp", 100), ("uds", 100), ("udp", 0), ("tcp", 0), ("uds", 0)]
    result = read_saved(folder / summary["rows"][0]["result"] / "result.json")
    assert result["config"]["busy_poll"] is True  # a condition flag reaches every point
    assert done.stdout.endswith(f"saved in {folder}\n")
    markdown = (folder / "summary.md").read_text().splitlines()
    assert markdown[2].startswith("| transport")
    assert len([line for line in markdown if line.startswith("| ")]) == 2 + 6
    assert "- rate: max vs 100 Hz over 3 matched pairs: p50 x1.00, p99 x1.00 (median ratio " \
        "max/100 Hz)" in markdown and "  - udp: p50 12.0 µs -> 12.0 µs (x1.00), p99 36.0 µs " \
        "-> 36.0 µs (x1.00)" in markdown
