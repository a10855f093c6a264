"""Foxglove WebSocket end to end with the real agent and the real foxglove-sdk server
(python/mwperf/bridges/foxglove_server.py): the ``foxglove`` transport through the relay, the
``--bridge foxglove`` path (a cyclonedds ping -> the server's DDS side -> WebSocket -> a
foxglove pong, and back by client publish), across emulated hosts, a bridge killed mid-run,
and nothing left running."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import (processes_here, read_saved, require_emulation, run_mwperf,
                      wait_into_measurement)

pytestmark = pytest.mark.agent

COUNT = ("--rate", "200", "--count", "300", "--warmup", "200ms")


def _servers() -> list[int]:
    """Foxglove server processes started by this test's mwperf (from its daemons' script), less
    those that were running before this module's tests (another user of the machine's) and
    those of other tests running beside it (started_here)."""
    return [pid for pid in processes_here(lambda cmd: "foxglove_server.py\0--host" in cmd)
            if pid not in _BEFORE]


_BEFORE: set[int] = set()
_BEFORE.update(_servers())


def _run(tmp_path: Path, env: dict[str, str], *args: str) -> dict:
    out = tmp_path / "r.json"
    done = run_mwperf("run", *args, "--json-out", str(out), "--no-save", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return read_saved(out)


def test_the_foxglove_transport_through_the_relay_delivers_every_message(
        real_env: dict[str, str], tmp_path: Path) -> None:
    result = _run(tmp_path, real_env, "--transport", "foxglove", *COUNT)
    counts = result["measurement"]["accounting"]
    assert result["status"] == "complete"
    assert counts["sent"] == counts["received"] == 300 and counts["lost"] == 0
    (server,) = result["daemons"]
    assert server["name"] == "foxglove-server" and server["version"]
    assert server["peak_rss_kib"] > 0
    assert _servers() == []


def test_the_foxglove_bridge_carries_dds_over_websocket_and_back(
        real_env: dict[str, str], tmp_path: Path) -> None:
    # every message counted: a deep keep-last queue on the DDS sides (the bridge takes the
    # point's depth), as a node not scheduled for 50 ms drops from keep-last 10 (262 of 300
    # arrived at load 19)
    result = _run(tmp_path, real_env, "--transport", "cyclonedds", "--bridge", "foxglove",
                  *COUNT, "--depth", "1000")
    counts = result["measurement"]["accounting"]
    assert result["status"] == "complete"
    assert counts["sent"] == counts["received"] == 300
    bridge = result["bridge"]
    assert bridge["name"] == "foxglove" and "=WebSocket=>" in bridge["path"]
    assert [h["name"] for h in bridge["halves"]] == ["bridge-a"]
    assert bridge["websocket"].startswith("ws://127.0.0.1:") and bridge["foxglove_sdk"]
    assert bridge["halves"][0]["cpu_user_s"] is not None
    assert 0.95 < bridge["delivered_ratio"] < 1.05
    assert _servers() == []


def test_foxglove_bridge_and_direct_across_the_bridge_hosts(real_env: dict[str, str],
                                                           tmp_path: Path) -> None:
    """The bridge beside the sender (host ga); the WebSocket crosses the WAN to the pong."""
    require_emulation("the foxglove bridge across emulated hosts")
    p50 = {}
    for name in ("foxglove", "direct"):
        result = _run(tmp_path, real_env, "--transport", "cyclonedds", "--bridge", name,
                      "--link", "delay=5ms", "--rate", "100", "--duration", "1s",
                      "--warmup", "300ms", "--depth", "1000")  # every message counted
        place = result["link"]["place"]
        assert (place["ping"], place["bridge-a"], place["pong"]) == ("a", "ga", "b")
        assert result["measurement"]["accounting"]["lost"] == 0
        p50[name] = result["measurement"]["response"]["p50_ns"]
    assert p50["direct"] > 10e6 and p50["foxglove"] > 10e6  # 5 ms each way on the WAN
    assert _servers() == []


def test_a_foxglove_bridge_killed_mid_run_gives_a_partial_result_with_the_reason(
        real_env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = subprocess.Popen([sys.executable, "-m", "mwperf.cli", "run", "--transport",
                             "cyclonedds", "--bridge", "foxglove", "--rate", "200",
                             "--duration", "4s", "--warmup", "300ms", "--peer-timeout", "1s",
                             "--json-out", str(out), "--no-save"], env=real_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while not _servers() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _servers(), "the bridge never started"
        wait_into_measurement(proc.pid, 1.0, deadline + 40)  # 1 s into the ping's measurement
        for pid in _servers():
            os.kill(pid, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    result = read_saved(out)
    assert result["status"] == "partial", stderr
    assert "bridge-a exited during the run (exit code -9)" in result["status_reason"]
    counts = result["measurement"]["accounting"]
    assert 0 < counts["received"] <= counts["sent"] < 200 * 4
    assert _servers() == []


def test_a_foxglove_transport_across_a_link_meets_at_the_server_host(
        real_env: dict[str, str], tmp_path: Path) -> None:
    require_emulation("the foxglove transport across an emulated link")
    result = _run(tmp_path, real_env, "--transport", "foxglove", "--link", "delay=2ms",
                  "--rate", "100", "--duration", "1s", "--warmup", "300ms")
    assert result["link"]["place"]["foxglove-server"] == "b"
    assert result["measurement"]["response"]["p50_ns"] > 4e6  # 2 ms each way
    assert _servers() == []
