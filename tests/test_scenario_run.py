"""Running scenarios with the fake agent: --dry-run, a failing point and a hung one (timeout)
do not end the sweep, --resume after SIGKILL of mwperf measures only the missing points and
the catalogue stays whole, the summary files, the CLI's scenario flags."""

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import alive, run_mwperf, traced_pids
from test_store_support import catalogue_rows

from mwperf.agent import find_agent
from mwperf.scenario import Request, launch

SHORT = """\
mode: [oneway, roundtrip]
transport: [udp, tcp]
payload: Array64
duration: 300ms
warmup: 0s
"""


def run(tmp_path: Path, text: str, **request: object) -> tuple[object, str]:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    lines = io.StringIO()
    fields = dict(scenario=str(path), quick=False, results_dir=tmp_path / "r", resume=None,
                  conditions={})
    fields.update(request)
    summary = launch(Request(**fields), find_agent(), lines)  # type: ignore[arg-type]
    return summary, lines.getvalue()


def test_dry_run_lists_points_and_measures_nothing(fake_env: dict[str, str],
                                                   tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(SHORT + "repeat: 2\n")
    done = run_mwperf("run", str(tmp_path / "s.yaml"), "--dry-run", "--results",
                      str(tmp_path / "r"), env=fake_env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "    1  udp oneway 1000 Hz Array64 (rep 1/2)"
    assert lines[7] == "    8  tcp roundtrip 1000 Hz Array64 (rep 2/2)"
    assert lines[8].startswith("8 points (8 to measure, 0 skipped); measuring time 2.40 s")
    assert not (tmp_path / "r").exists()
    assert not list(Path(fake_env["FAKE_AGENT_TRACE"]).iterdir())  # no agent ran


def test_a_failed_point_is_recorded_and_the_sweep_goes_on(
        fake_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_AGENT", "sub:fail")  # one-way points fail, round trips do not
    summary, progress = run(tmp_path, SHORT)
    assert [(o.point.label(), o.status) for o in summary.observed] == [
        ("udp oneway 1000 Hz Array64", "failed"), ("tcp oneway 1000 Hz Array64", "failed"),
        ("udp roundtrip 1000 Hz Array64", "complete"),
        ("tcp roundtrip 1000 Hz Array64", "complete")]
    assert summary.status == "failed"
    folder = summary.run.folder
    manifest = json.loads((folder / "sweep.json").read_text())
    assert [(e["index"], e["status"]) for e in manifest["entries"]] == [
        (1, "failed"), (2, "failed"), (3, "complete"), (4, "complete")]
    assert manifest["entries"][0]["reason"] == "sub: peer unreachable"
    assert all((folder / e["result"] / "result.json").is_file() for e in manifest["entries"])
    data = json.loads((folder / "summary.json").read_text())
    assert [row["status"] for row in data["rows"]] == ["failed", "failed", "complete", "complete"]
    assert data["rows"][0]["axes"] == {"mode": "oneway", "transport": "udp"}
    markdown = (folder / "summary.md").read_text().splitlines()
    assert markdown[0] == "# s" and markdown[2].startswith("| transport | mode | rate |")
    assert ("[1/4] udp oneway 1000 Hz Array64: failed  p50 12.0 µs  p99 36.0 µs  loss 0.00% "
            "(sub: peer unreachable)") in progress
    assert "failed: udp oneway 1000 Hz Array64 (and 1 more point): sub: peer unreachable" \
        in summary.text()
    assert catalogue_rows(tmp_path / "r", "SELECT point_index, status FROM points ORDER BY 1") \
        == [(1, "failed"), (2, "failed"), (3, "complete"), (4, "complete")]


def test_a_hung_point_is_stopped_by_the_timeout(fake_env: dict[str, str], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_AGENT", "ping:hang")  # round trips hang (ignore SIGINT)
    # the timeout must let the other point finish: 2 s, or three times what that point took
    # alone on this machine now (measured: at load 19 it took more than 2 s)
    (tmp_path / "alone").mkdir()
    began = time.monotonic()
    alone, _ = run(tmp_path / "alone", "mode: oneway\npayload: Array64\nduration: 300ms\n"
                                       "warmup: 0s\n")
    timeout = max(2.0, 3 * (time.monotonic() - began))
    assert [o.status for o in alone.observed] == ["complete"]
    started = time.monotonic()
    summary, _ = run(tmp_path, "mode: [roundtrip, oneway]\npayload: Array64\nduration: 300ms\n"
                               f"warmup: 0s\ntimeout: {timeout:.2f}s\n")
    assert time.monotonic() - started < 30 + 2 * timeout
    hung, fine = summary.observed
    assert hung.status == "failed" and (
        f"timed out after {timeout:.2f} s (the scenario's timeout)" in hung.reason), hung.reason
    assert fine.status == "complete", fine.reason
    assert not [pid for pid in traced_pids(Path(fake_env["FAKE_AGENT_TRACE"])).values()
                if alive(pid)]


def test_ctrl_c_ends_the_sweep_after_the_point_in_flight(
        fake_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = Path(fake_env["FAKE_AGENT_TRACE"])
    monkeypatch.setenv("FAKE_AGENT_CLOCK", "real")  # Ctrl-C while the 30 s point measures

    def ctrl_c_once_tcp_runs() -> None:
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
    summary, _ = run(tmp_path, """\
transport: [udp, tcp, uds]
duration: [200ms, 30s]
exclude: [{transport: [udp, uds], duration: 30s}, {transport: tcp, duration: 200ms}]
payload: Array64
warmup: 0s
""")
    assert summary.run.interrupted
    assert [(o.row.transport, o.status) for o in summary.observed] == [("udp", "complete"),
                                                                       ("tcp", "partial")]
    assert summary.observed[1].reason == "interrupted by Ctrl-C"
    assert summary.status == "partial" and summary.pending == 1
    assert "not measured: 1 point (stopped; 'mwperf run --resume FOLDER' measures them)" \
        in summary.text()
    manifest = json.loads((summary.run.folder / "sweep.json").read_text())
    assert [e["status"] for e in manifest["entries"]] == ["complete", "partial", "pending"]


def test_resume_after_sigkill_measures_only_the_missing_points(
        fake_env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("transport: [udp, tcp, uds]\nrate: [100, 200]\n"
                                     "payload: Array64\nduration: 500ms\nwarmup: 0s\n")
    root = tmp_path / "r"
    sweep = subprocess.Popen([sys.executable, "-m", "mwperf.cli", "run", str(tmp_path / "s.yaml"),
                              "--results", str(root)], env=fake_env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    done: list[dict] = []
    while time.monotonic() < deadline and len(done) < 2:
        time.sleep(0.05)
        for manifest in root.glob("*/sweep.json"):
            try:
                entries = json.loads(manifest.read_text())["entries"]
            except (OSError, ValueError):
                continue
            done = [e for e in entries if e["status"] == "complete"]
    time.sleep(0.25)  # into the third point
    sweep.send_signal(signal.SIGKILL)
    sweep.wait()
    assert 2 <= len(done) < 6
    (folder,) = root.glob("*/")
    before = json.loads((folder / "sweep.json").read_text())["entries"]
    kept = {e["index"]: e["result"] for e in before if e["status"] == "complete"}
    time.sleep(0.5)  # agents die with mwperf (parent-death signal)
    assert not [pid for pid in traced_pids(Path(fake_env["FAKE_AGENT_TRACE"])).values()
                if alive(pid)]

    resumed = run_mwperf("run", "--resume", str(folder), env=fake_env)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stderr.count("(kept from the earlier run)") == len(kept)
    after = json.loads((folder / "sweep.json").read_text())["entries"]
    assert [e["status"] for e in after] == ["complete"] * 6
    assert {e["index"]: e["result"] for e in after if e["index"] in kept} == kept  # not redone
    assert len({e["result"] for e in after}) == 6
    rows = catalogue_rows(root, "SELECT point_index, folder FROM points ORDER BY 1")
    listed = {f"{folder.name}/{e['result']}" for e in after}
    assert [i for i, _ in rows if _ in listed] == [1, 2, 3, 4, 5, 6]  # each index once
    assert catalogue_rows(root, "SELECT kind, scenario FROM runs WHERE run_id = ?",
                          [folder.name]) == [("sweep", "s")]
    summary = json.loads((folder / "summary.json").read_text())
    assert (summary["status"], len(summary["rows"])) == ("complete", 6)


def test_a_transport_not_built_in_is_skipped_with_a_note(fake_env: dict[str, str],
                                                         tmp_path: Path) -> None:
    summary, progress = run(tmp_path, "transport: [iceoryx2, udp]\npayload: Array64\n"
                                      "duration: 200ms\nwarmup: 0s\n")
    assert [(o.row.transport, o.status) for o in summary.observed] == [("udp", "complete")]
    assert summary.status == "complete"
    assert "[1/2] iceoryx2 roundtrip 1000 Hz Array64: skipped (transport 'iceoryx2' is not " \
        "built into the agent)" in progress
    assert "skipped: transport 'iceoryx2' is not built into the agent (1 point)" in summary.text()
    data = summary.to_dict()
    assert data["skipped"] == [{"index": 1, "label": "iceoryx2 roundtrip 1000 Hz Array64",
                                "reason": "transport 'iceoryx2' is not built into the agent"}]


def test_resume_refuses_another_scenario(fake_env: dict[str, str], tmp_path: Path) -> None:
    folder = tmp_path / "r" / "20261123T000000Z-a-0000"
    folder.mkdir(parents=True)
    (folder / "sweep.json").write_text(json.dumps({"scenario": "a", "entries": []}))
    (tmp_path / "b.yaml").write_text("rate: 10\n")
    done = run_mwperf("run", str(tmp_path / "b.yaml"), "--resume", str(folder), env=fake_env)
    assert (done.returncode, done.stderr) == (2, f"mwperf: error: --resume: {folder} is a sweep "
                                                 f"of scenario 'a', not 'b'\n")


def test_scenarios_lists_the_built_ins(fake_env: dict[str, str]) -> None:
    done = run_mwperf("scenarios", env=fake_env)
    assert done.returncode == 0
    names = [line.split()[0] for line in done.stdout.splitlines()]
    assert names == ["bridge-payloads", "bridges", "busy-loop-executors",
                     "busy-loop-executors-rclpy", "costs", "cpu-quotas", "default",
                     "graphs", "rate-sweep-3-topics", "resilience", "restarts", "restarts-bridges",
                     "restarts-sub",
                     "restarts-zenohd", "ros1-bag-replay", "ros1-rate-sweep",
                     "ros1-subscribers", "ros1-three-hosts", "ros2-tax", "security", "services",
                     "soak",
                     "throughput"]
    assert "default                    every built-in transport side by side" in done.stdout


def test_resume_adopts_a_point_saved_but_not_yet_listed(fake_env: dict[str, str],
                                                        tmp_path: Path) -> None:
    """Killed between saving a point and rewriting sweep.json: the saved point is taken over,
    not measured again (and not catalogued twice)."""
    summary, _ = run(tmp_path, "transport: [udp, tcp]\npayload: Array64\nduration: 200ms\n"
                               "warmup: 0s\n")
    folder = summary.run.folder
    manifest = json.loads((folder / "sweep.json").read_text())
    orphan = manifest["entries"][1]["result"]
    manifest["entries"][1].update(status="pending", result=None, reason=None)
    (folder / "sweep.json").write_text(json.dumps(manifest))
    resumed = run_mwperf("run", "--resume", str(folder), env=fake_env)
    assert resumed.returncode == 0, resumed.stderr
    after = json.loads((folder / "sweep.json").read_text())["entries"]
    assert [(e["status"], e["result"]) for e in after] == [
        ("complete", manifest["entries"][0]["result"]), ("complete", orphan)]
    assert len(list((folder / "points").iterdir())) == 2
    assert resumed.stderr.count("(kept from the earlier run)") == 2
    assert len(catalogue_rows(tmp_path / "r", "SELECT point_id FROM points")) == 2
