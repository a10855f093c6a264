"""mwperf run --link end to end: the injected delay, loss and rate are measured back, both
directions are emulated, and nothing (namespaces, devices, processes, leases) is left after
success, failure, Ctrl-C, or a SIGKILLed mwperf once the next one reaps.

Needs root, mwperf-linkem and the real agent; skipped without them, except in CI (CI=true),
where a missing piece is a failure. Tolerances are wide enough for a loaded 2-core machine and
tight enough to catch a wrong unit or a lost direction.
"""

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from latency_quantiles import low_quantile_ns
from conftest import alive, as_v2, children, read_saved, require_emulation, run_mwperf

from mwperf.leases import reap_stale, start_time
from mwperf.schema import validation_error

pytestmark = pytest.mark.agent


@pytest.fixture(autouse=True)
def _needs_root_and_linkem() -> None:
    require_emulation("--link tests")


@pytest.fixture
def env(leased_env: dict[str, str]) -> dict[str, str]:
    return leased_env


def run(env: dict[str, str], tmp_path: Path, *args: str, process: bool = False
        ) -> tuple[int, dict[str, Any], str]:
    out = tmp_path / "result.json"
    out.unlink(missing_ok=True)
    done = run_mwperf("run", *args, "--json-out", str(out), "--no-save", env=env, timeout=120,
                      process=process)
    assert "Traceback" not in done.stderr, done.stderr
    assert out.is_file(), done.stderr
    return done.returncode, read_saved(out), done.stderr


def rtt_p50_ms(env: dict[str, str], tmp_path: Path, link: str) -> float:
    code, result, _ = run(env, tmp_path, "--transport", "udp", "--rate", "20", "--duration",
                          "2s", "--warmup", "200ms", "--payload", "64", "--link", link)
    assert code == 0, result["status_reason"]
    return result["measurement"]["response"]["p50_ns"] / 1e6


def test_delay_each_way_adds_twice_to_the_rtt(env: dict[str, str], tmp_path: Path) -> None:
    base = rtt_p50_ms(env, tmp_path, "delay=0")
    both = rtt_p50_ms(env, tmp_path, "delay=10ms") - base
    one = rtt_p50_ms(env, tmp_path, "up:delay=10ms") - base
    assert 18 <= both <= 22, f"D=10ms each way: RTT +{both:.3f} ms, expected 20 ± 2"
    assert 8 <= one <= 12, f"D=10ms up only: RTT +{one:.3f} ms, expected 10 ± 2"


def test_loss_is_measured_back_and_counted(env: dict[str, str], tmp_path: Path) -> None:
    code, result, _ = run(env, tmp_path, "--transport", "udp", "--mode", "oneway", "--rate",
                          "1000", "--duration", "3s", "--warmup", "200ms", "--payload", "64",
                          "--link", "up:loss=10%")
    assert code == 0, result["status_reason"]
    accounting = result["measurement"]["accounting"]
    n, lost = accounting["sent"], accounting["lost"]
    sigma = math.sqrt(n * 0.1 * 0.9)
    assert abs(lost - 0.1 * n) <= 4 * sigma, f"lost {lost} of {n}, expected 10 %"
    assert validation_error(as_v2(result), "run-result") is None
    link = result["link"]
    assert link["backend"] == "userspace" and link["spec"] == "up:loss=10%"
    assert link["up"]["loss"] == 0.1 and link["down"]["loss"] == 0
    up = link["emulator"]["up"]
    assert up["dropped"]["loss"] >= lost and up["received"] >= n
    assert link["emulator"]["down"]["dropped"]["loss"] == 0


def test_serial_rate_limit_with_8n1_framing(env: dict[str, str], tmp_path: Path) -> None:
    code, result, _ = run(env, tmp_path, "--transport", "udp", "--mode", "oneway", "--rate",
                          "200", "--duration", "4s", "--warmup", "1s", "--payload", "100",
                          "--link", "serial-115200")
    assert code == 0, result["status_reason"]
    m = result["measurement"]
    wire_bits = m["throughput"]["msgs_per_s"] * (m["message_bytes"] + 28) * 10
    assert abs(wire_bits / 115200 - 1) <= 0.10, f"{wire_bits:.0f} bit/s on the wire"
    assert result["link"]["emulator"]["up"]["dropped"]["queue"] > 0  # offered above capacity


def test_tcp_across_a_lossy_jittery_link(env: dict[str, str], tmp_path: Path) -> None:
    code, result, _ = run(env, tmp_path, "--transport", "tcp", "--rate", "100", "--duration",
                          "2s", "--warmup", "200ms", "--link", "delay=2ms,jitter=1ms,loss=5%")
    assert code == 0, result["status_reason"]
    accounting = result["measurement"]["accounting"]
    assert accounting["received"] == accounting["sent"] > 150  # TCP retransmits what was lost
    assert result["measurement"]["response"]["p50_ns"] >= 4_000_000
    assert result["link"]["emulator"]["up"]["dropped"]["loss"] > 0


def oneway(env: dict[str, str], tmp_path: Path, link: str, seconds: str = "3s"
           ) -> dict[str, Any]:
    code, result, _ = run(env, tmp_path, "--transport", "udp", "--mode", "oneway", "--rate",
                          "1000", "--duration", seconds, "--warmup", "200ms", "--payload", "64",
                          "--link", link)
    assert code in (0, 3), result["status_reason"]
    return result


def test_duplicates_and_reordering_reach_the_agent(env: dict[str, str], tmp_path: Path) -> None:
    result = oneway(env, tmp_path, "up:dup=10%,up:delay=2ms,up:reorder=10%", "2s")
    accounting, up = result["measurement"]["accounting"], result["link"]["emulator"]["up"]
    n = accounting["sent"]
    assert 0.05 * n <= accounting["duplicated"] <= 0.15 * n, accounting
    assert accounting["reordered"] >= 0.03 * n, accounting  # overtook the 2 ms queue
    assert up["duplicated"] >= accounting["duplicated"] and up["reordered"] > 0


def test_corruption_is_dropped_by_the_receivers_checksum(env: dict[str, str],
                                                         tmp_path: Path) -> None:
    result = oneway(env, tmp_path, "up:corrupt=10%", "2s")
    accounting, up = result["measurement"]["accounting"], result["link"]["emulator"]["up"]
    n = accounting["sent"]
    assert accounting["corrupted"] == 0  # the kernel never hands a corrupted datagram up
    assert 0.05 * n <= accounting["lost"] <= 0.15 * n, accounting
    assert up["corrupted"] >= accounting["lost"]


def test_scheduled_outage(env: dict[str, str], tmp_path: Path) -> None:
    result = oneway(env, tmp_path, "outage=1500ms+500ms", "3s")
    accounting, up = result["measurement"]["accounting"], result["link"]["emulator"]["up"]
    assert 400 <= up["dropped"]["outage"] <= 600, up  # 500 ms at 1 kHz
    # the agents start a few 100 ms after the link: most of the outage falls after warm-up
    assert 250 <= accounting["lost"] <= 600, accounting
    assert result["link"]["emulator"]["up"]["dropped"]["loss"] == 0


@pytest.mark.parametrize("transport", ["zenoh", "cyclonedds", "fastdds", "rustdds"])
def test_middleware_across_the_link(env: dict[str, str], tmp_path: Path, transport: str) -> None:
    code, result, _ = run(env, tmp_path, "--transport", transport, "--rate", "50", "--duration",
                          "2s", "--warmup", "500ms", "--link", "delay=5ms")
    assert code == 0, result["status_reason"]
    accounting = result["measurement"]["accounting"]
    assert accounting["received"] == accounting["sent"] > 50
    # 2 x 5 ms for every message; the fastest tenth not much more (the p50 read 17.6 ms for
    # fastdds beside two busy loops: scheduling, not the link; tests/latency_quantiles.py)
    response = result["measurement"]["response"]
    assert response["min_ns"] >= 10e6 and low_quantile_ns(response) <= 15e6, response
    assert result["config"]["opts"] == []  # mwperf's own DDS settings are not the user's


class LeaseWatcher:
    """Records every resource any lease in ``folder`` names while a run goes on."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.seen: set[tuple[str, str]] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.is_set():
            for path in self.folder.glob("*.json") if self.folder.is_dir() else []:
                try:
                    self.seen |= {tuple(r) for r in json.loads(path.read_text())["resources"]}
                except (OSError, ValueError, KeyError):
                    pass
            time.sleep(0.002)

    def stop(self) -> set[tuple[str, str]]:
        self._stop.set()
        self._thread.join()
        return self.seen


def leftovers(seen: set[tuple[str, str]], lease_dir: Path) -> list[str]:
    """What of ``seen`` still exists, plus any lease file left."""
    left = [f"lease {p}" for p in lease_dir.glob("*.json")] if lease_dir.is_dir() else []
    for kind, name in seen:
        if kind == "netns" and Path("/run/netns", name).exists():
            left.append(f"netns {name}")
        if kind == "process":
            pid, _, started = name.partition(":")
            if alive(int(pid)) and str(start_time(int(pid))) == started:
                left.append(f"process {name}")
        if kind == "link" and Path("/sys/class/net", name).exists():
            left.append(f"link {name}")
    return left


@pytest.fixture
def watched(env: dict[str, str]) -> Iterator[tuple[LeaseWatcher, Path]]:
    lease_dir = Path(env["MWPERF_LEASE_DIR"])
    watcher = LeaseWatcher(lease_dir)
    yield watcher, lease_dir
    watcher.stop()


def test_nothing_left_after_success(env: dict[str, str], tmp_path: Path, watched) -> None:
    watcher, lease_dir = watched
    code, result, _ = run(env, tmp_path, "--transport", "udp", "--rate", "100", "--duration",
                          "1s", "--warmup", "200ms", "--link", "wifi-80211n",
                          process=True)  # what a process leaves behind, as after a failure
    seen = watcher.stop()
    assert code == 0, result["status_reason"]
    kinds = {kind for kind, _ in seen}
    assert {"netns", "process"} <= kinds, seen
    assert {h["netns"] for h in result["link"]["hosts"].values()} <= {n for _, n in seen}
    assert leftovers(seen, lease_dir) == []


def test_nothing_left_after_a_failure(env: dict[str, str], tmp_path: Path, watched) -> None:
    watcher, lease_dir = watched
    fake = Path(__file__).parent / "fakes" / "fake_agent.py"
    done = run_mwperf("run", "--transport", "udp", "--duration", "1s", "--no-save", "--link",
                      "delay=1ms", env={**env, "MWPERF_AGENT": str(fake),
                                        "FAKE_AGENT": "pong:exit-before-ready"}, timeout=60,
                      process=True)  # what a process leaves behind, not the in-process run
    seen = watcher.stop()
    assert done.returncode == 1 and "pong exited before it was ready" in done.stderr, done.stderr
    assert ("netns" in {kind for kind, _ in seen}), seen
    assert leftovers(seen, lease_dir) == []


def test_nothing_left_after_ctrl_c(env: dict[str, str], tmp_path: Path, watched) -> None:
    watcher, lease_dir = watched
    proc = subprocess.Popen([sys.executable, "-m", "mwperf.cli", "run", "--transport", "udp",
                             "--duration", "30s", "--warmup", "100ms", "--no-save", "--link",
                             "delay=5ms"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while len(children(proc.pid)) < 3 and time.monotonic() < deadline:  # linkem + 2 agents
        time.sleep(0.05)
    spawned = children(proc.pid)
    assert len(spawned) == 3, spawned
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    seen = watcher.stop()
    assert proc.returncode == 3, err  # partial: what was measured is kept
    assert not [pid for pid in spawned if alive(pid)]
    assert leftovers(seen, lease_dir) == []


def test_sigkilled_mwperf_is_reaped_by_the_next(env: dict[str, str], tmp_path: Path,
                                                watched) -> None:
    watcher, lease_dir = watched
    proc = subprocess.Popen([sys.executable, "-m", "mwperf.cli", "run", "--transport", "udp",
                             "--duration", "30s", "--no-save", "--link", "delay=5ms"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while len(children(proc.pid)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    spawned = children(proc.pid)
    proc.kill()
    proc.wait()
    time.sleep(0.3)  # PDEATHSIG ends the children; the namespaces stay
    seen = watcher.stop()
    assert [n for k, n in seen if k == "netns" and Path("/run/netns", n).exists()], seen
    os.environ["MWPERF_LEASE_DIR"], saved = str(lease_dir), os.environ.get("MWPERF_LEASE_DIR")
    try:
        notes: list[str] = []
        reap_stale(notes.append)
    finally:
        if saved is None:
            del os.environ["MWPERF_LEASE_DIR"]
        else:
            os.environ["MWPERF_LEASE_DIR"] = saved
    assert any("netns" in note for note in notes), notes
    assert not [pid for pid in spawned if alive(pid)]
    assert leftovers(seen, lease_dir) == []
