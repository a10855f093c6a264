"""--subscribers N end to end with the real agent: one pub, three sub processes, on udp (the pub
sends to each in turn) and on Cyclone DDS (native fan-out); every subscriber receives every
message at a low rate and has its own row; a subscriber killed mid-run fails alone while the
others keep their numbers (udp, tcp, and mqtt, whose subscribers share one "ready" flag: one
leaving must not end the pub's stream); nothing is left running.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import alive, descendants, read_saved, run_mwperf, wait_into_measurement

pytestmark = pytest.mark.agent

RATE_HZ = 50
DURATION_S = 2


def measure(env: dict[str, str], tmp_path: Path, transport: str) -> dict[str, Any]:
    out = tmp_path / "result.json"
    done = run_mwperf("run", "--transport", transport, "--mode", "oneway", "--rate",
                      str(RATE_HZ), "--duration", f"{DURATION_S}s", "--warmup", "300ms",
                      "--payload", "Array64", "--subscribers", "3", "--json-out", str(out),
                      "--no-save", env=env, timeout=120)
    assert done.returncode in (0, 3), done.stdout + done.stderr
    return read_saved(out)


@pytest.mark.parametrize("transport", ["udp", "cyclonedds"])
def test_three_subscribers_each_receive_everything(real_env: dict[str, str], tmp_path: Path,
                                                   transport: str) -> None:
    result = measure(real_env, tmp_path, transport)
    sent = RATE_HZ * DURATION_S
    rows = result["per_subscriber"]
    assert [(r["subscriber"], r["name"]) for r in rows] == [(0, "sub.0"), (1, "sub.1"),
                                                           (2, "sub.2")]
    assert [a["role"] for a in result["agents"]].count("sub") == 3
    for row in rows:
        accounting = row["measurement"]["accounting"]
        assert accounting["sent"] == sent, row  # counted against the pub's own sends
        assert accounting["lost"] == 0 and accounting["received"] == sent, row
        assert accounting["duplicated"] == 0 and accounting["foreign"] == 0, row
    total = result["measurement"]
    assert total["accounting"]["sent"] == 3 * sent
    assert total["response"]["count"] == 3 * sent
    low = min(r["measurement"]["response"]["min_ns"] for r in rows)
    assert total["response"]["min_ns"] == low
    assert result["status"] == "complete", result["status_reason"]


@pytest.mark.parametrize("transport", ["udp", "tcp", "mqtt"])
def test_a_killed_subscriber_fails_alone(real_env: dict[str, str], tmp_path: Path,
                                         transport: str) -> None:
    out = tmp_path / "result.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "mwperf.cli", "run", "--transport", transport, "--mode", "oneway",
         "--rate", str(RATE_HZ), "--duration", "3s", "--warmup", "200ms", "--payload",
         "Array64", "--subscribers", "3", "--json-out", str(out), "--no-save"],
        env=real_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    victim = None
    while victim is None:
        assert time.monotonic() < deadline and proc.poll() is None, "sub.1 never ran"
        for pid in descendants(proc.pid):
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(arg.endswith(b"sub.1.json") for arg in argv):
                victim = pid
        time.sleep(0.05)
    # mid-run on the pub's own timeline: a second into its measured phase (a fixed sleep after
    # finding the processes came after the 3 s run under load)
    wait_into_measurement(proc.pid, 1.0, deadline)
    os.kill(victim, signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 3, stdout + stderr  # partial: one subscriber failed
    result = read_saved(out)
    rows = {r["name"]: r for r in result["per_subscriber"]}
    assert rows["sub.1"]["status"] == "failed" and rows["sub.1"]["measurement"] is None
    for name in ("sub.0", "sub.2"):
        accounting = rows[name]["measurement"]["accounting"]
        assert rows[name]["status"] == "complete", rows[name]
        assert accounting["sent"] == 3 * RATE_HZ and accounting["lost"] == 0, accounting
    assert result["measurement"]["accounting"]["sent"] == 2 * 3 * RATE_HZ
    assert result["status"] == "partial" and "sub.1" in result["status_reason"]
    assert not alive(victim) and descendants(proc.pid) == []


def test_round_trip_refuses_several_subscribers(real_env: dict[str, str]) -> None:
    done = run_mwperf("run", "--transport", "udp", "--subscribers", "2", "--no-save",
                      env=real_env, timeout=60)
    assert done.returncode == 2
    assert "--subscribers 2: only with --mode oneway" in done.stderr


def test_the_agent_refuses_a_ping_with_subscribers_and_a_wrong_address_count() -> None:
    from conftest import REAL_AGENT

    ping = subprocess.run([str(REAL_AGENT), "ping", "--transport", "udp", "--connect",
                           "127.0.0.1:9", "--subscribers", "2"], capture_output=True, text=True,
                          timeout=30, check=False)
    assert ping.returncode == 2 and "--subscribers 2: only a pub" in ping.stderr
    pub = subprocess.run([str(REAL_AGENT), "pub", "--transport", "udp", "--connect",
                          "127.0.0.1:9;127.0.0.1:10", "--subscribers", "3"], capture_output=True,
                         text=True, timeout=30, check=False)
    assert pub.returncode == 2
    assert "--connect: 2 subscribers' addresses given for --subscribers 3" in pub.stderr
    over = subprocess.run([str(REAL_AGENT), "pub", "--transport", "udp", "--connect",
                           "127.0.0.1:9", "--subscribers", "17"], capture_output=True,
                          text=True, timeout=30, check=False)
    assert over.returncode == 2 and "--subscribers" in over.stderr
