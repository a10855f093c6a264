"""End to end with the real mwperf-agent (skipped until 'make build' has produced it)."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import REAL_AGENT, alive, children, read_saved, run_mwperf

pytestmark = pytest.mark.agent


def run(env: dict[str, str], tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "result.json"
    done = run_mwperf("run", *args, "--json-out", str(out), "--results", str(tmp_path / "r"),
                      env=env, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    assert out.is_file(), done.stderr
    return done.returncode, read_saved(out)


def check_clean(result: dict[str, Any], sent: int | None = None) -> None:
    assert result["status"] == "complete", result["status_reason"]
    m = result["measurement"]
    accounting = m["accounting"]
    assert accounting["received"] == accounting["sent"] > 0
    assert accounting["lost"] == accounting["corrupted"] == accounting["foreign"] == 0
    assert m["response"]["p50_ns"] > 0 and m["service"]["p50_ns"] > 0
    if sent is not None:
        assert accounting["sent"] == sent


@pytest.mark.parametrize("transport", ["udp", "tcp", "uds"])
def test_roundtrip_1s_1khz(real_env: dict[str, str], tmp_path: Path, transport: str) -> None:
    code, result = run(real_env, tmp_path, "--transport", transport, "--rate", "1000",
                       "--duration", "1s", "--payload", "Array64")
    assert code == 0
    check_clean(result)
    assert 900 <= result["measurement"]["accounting"]["sent"] <= 1100
    assert sorted(a["role"] for a in result["agents"]) == ["ping", "pong"]
    assert result["measurement"]["payload_bytes"] == result["config"]["payload_bytes"] == 64


def test_oneway_udp(real_env: dict[str, str], tmp_path: Path) -> None:
    code, result = run(real_env, tmp_path, "--transport", "udp", "--mode", "oneway",
                       "--duration", "1s")
    assert code == 0, result["status_reason"]
    accounting = result["measurement"]["accounting"]
    pub = next(a for a in result["agents"] if a["role"] == "pub")
    assert accounting["sent"] == pub["sent"] > 0
    assert accounting["received"] + accounting["lost"] >= accounting["sent"] - accounting["corrupted"]
    assert accounting["lost"] <= accounting["sent"] // 100
    assert result["measurement"]["latency_kind"] == "one-way"


def test_count_500(real_env: dict[str, str], tmp_path: Path) -> None:
    code, result = run(real_env, tmp_path, "--transport", "udp", "--count", "500", "--samples")
    assert code == 0
    check_clean(result, sent=500)
    assert result["measurement"]["response"]["count"] == 500
    (folder,) = (tmp_path / "r").glob("*/")
    lines = (folder / "samples.csv").read_text().splitlines()
    assert lines[0] == "seq,intended_ns,sent_ns,peer_rx_ns,recv_ns,response_ns,service_ns"
    assert len(lines) == 501


def test_ctrl_c_partial_and_nothing_left(real_env: dict[str, str], tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "mwperf.cli", "run", "--transport", "udp",
                             "--duration", "30s", "--warmup", "100ms", "--results",
                             str(tmp_path / "r")],
                            env=real_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 10
    while len(children(proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    agents = children(proc.pid)
    assert len(agents) == 2
    time.sleep(2.0)  # readiness + 100 ms warm-up, then measured messages (slow on a loaded CI box)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 3, err
    (folder,) = (tmp_path / "r").glob("*/")
    result = read_saved(folder / "result.json")
    assert (result["status"], result["status_reason"]) == ("partial", "interrupted by Ctrl-C")
    assert result["measurement"]["accounting"]["received"] > 0
    assert not [pid for pid in agents if alive(pid)]


def suite_deadline_s(name: str) -> float:
    """The longest a suite may take by its own rules: every planned point at its scenario's
    per-point timeout (scenario/deadline.py stops a point there), plus 60 s to set up. A
    guessed 300 s was not enough beside two busy loops and a cold bridge build (a stress run:
    the suite still going, each point within its own timeout)."""
    from mwperf.agent import Agent
    from mwperf.scenario.catalog import load_scenario
    from mwperf.scenario.expand import expand
    scenario = load_scenario(name, quick=True)
    points = expand(scenario, Agent(REAL_AGENT).transports())
    assert scenario.timeout_ns is not None, "the suite sets a per-point timeout"
    return len(points) * scenario.timeout_ns / 1e9 + 60


def test_default_suite_quick(real_env: dict[str, str], tmp_path: Path) -> None:
    done = run_mwperf("run", "default", "--quick", "--results", str(tmp_path / "r"),
                      env=real_env, timeout=suite_deadline_s("default"), process=True)
    (folder,) = (tmp_path / "r").glob("*/")
    rows = json.loads((folder / "summary.json").read_text())["rows"]
    transports = {row["transport"] for row in rows}
    assert {"udp", "tcp", "uds"} <= transports and len(rows) == 12 * len(transports)
    # a point fails only where the middleware refused a send for its whole blocking time (a
    # Fast DDS writer's max_blocking_time, 100 ms: CI's load once starved a 512 KiB 1 kHz ros2
    # pong that long), or is partial only where RustDDS's reliable repair of a 512 KiB reply
    # (its fragments) took longer than the ping's --peer-timeout under CI's load (2.33 % of 294
    # replies missing, "peer silent for 2.00 s"): measured outcomes the result names, not
    # faults of the suite
    refused = [row for row in rows if row["status"] == "failed" and row["transport"] == "ros2"
               and "the receiver did not make room in time" in (row["status_reason"] or "")]
    refused += [row for row in rows if row["status"] == "partial"
                and row["transport"] == "rustdds" and row["payload"] == "PointCloud512k"
                and "peer silent for" in (row["status_reason"] or "")]
    assert {row["status"] for row in rows if row not in refused} <= {"complete",
                                                                       "not supported"}, done.stdout
    assert (done.returncode != 0) == bool(refused), done.stdout + done.stderr
    unsupported = {(row["transport"], row["payload"]) for row in rows
                   if row["status"] == "not supported"}
    assert {("udp", "Array64k"), ("udp", "PointCloud512k")} <= unsupported
    assert ("not supported: udp roundtrip 100 Hz Array64k (and 2 more points): --payload: a "
            "payload of 65536 bytes does not fit one udp message") in done.stdout  # before it ran
    assert f"saved in {folder}" in done.stdout
