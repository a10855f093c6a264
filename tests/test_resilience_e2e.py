"""Resilience metrics end to end: the real agents across mwperf-linkem with a scheduled outage.

Ground truth: at a fixed rate R, a best-effort transport loses every message sent while the
link is down, so lost ≈ R × outage. The tolerance (±20 %) survives a loaded 2-core machine
(the sender catches up after a stall, shifting a few sends across the window's edges) but
catches a wrong unit (ms vs s is a factor 1000) or a window on the wrong clock (lost ≈ 0).
A reliable transport (TCP) retransmits after the outage: nothing lost, a recovery > 0.

Needs root, mwperf-linkem and the real agent; skipped without them (CI=true: a failure).
"""

from pathlib import Path
from typing import Any

import pytest
from conftest import as_v2, read_saved, require_emulation, run_mwperf

from mwperf.schema import validation_error

pytestmark = pytest.mark.agent

RATE = 1000
OUTAGE_S = 1.0
LINK = "outage=1500ms+1s"
"""down 1.5 s after the link came up (the agents start a few 100 ms after it), for 1 s"""


@pytest.fixture(autouse=True)
def _needs_root_and_linkem() -> None:
    require_emulation("--link tests")


@pytest.fixture
def env(leased_env: dict[str, str]) -> dict[str, str]:
    return leased_env


def run(env: dict[str, str], tmp_path: Path, *args: str) -> dict[str, Any]:
    out = tmp_path / "result.json"
    done = run_mwperf("run", "--rate", str(RATE), "--duration", "4s", "--warmup", "200ms",
                      "--payload", "64", "--link", LINK, *args, "--json-out", str(out),
                      "--no-save", env=env, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    assert out.is_file(), done.stderr
    result = read_saved(out)
    assert validation_error(as_v2(result), "run-result") is None
    return result


def check_window(result: dict[str, Any]) -> dict[str, Any]:
    """The emulator's window is the agents' window, and its drops fall inside it."""
    window = result["link"]["outage_window"]
    assert window["end_ns"] - window["start_ns"] == int(OUTAGE_S * 1e9)
    drops = result["link"]["emulator"]["up"]["outage_drops"]
    assert window["start_ns"] <= drops["first_ns"] <= drops["last_ns"] < window["end_ns"]
    outage = result["resilience"]["outage"]
    assert (outage["start_ns"], outage["end_ns"]) == (window["start_ns"], window["end_ns"])
    assert result["resilience"]["time_to_connect_ns"] is not None
    # the outage falls inside the measurement (after warm-up): the report can shade it exactly
    assert 0 < outage["start_ns"] - outage["series_origin_ns"] < 4_000_000_000, outage
    return outage


@pytest.mark.parametrize("mode", ["roundtrip", "oneway"])
def test_best_effort_loses_rate_times_outage(env: dict[str, str], tmp_path: Path,
                                             mode: str) -> None:
    result = run(env, tmp_path, "--transport", "udp", "--mode", mode)
    assert result["status"] == "complete", result["status_reason"]
    outage = check_window(result)
    expected = RATE * OUTAGE_S
    assert abs(outage["sent"] - expected) <= 0.2 * expected, outage
    assert abs(outage["lost"] - expected) <= 0.2 * expected, outage
    assert outage["session"] == "survived" and 0 <= outage["recovery_ns"] < 500_000_000, outage


def test_reliable_transport_retransmits_after_the_outage(env: dict[str, str],
                                                         tmp_path: Path) -> None:
    result = run(env, tmp_path, "--transport", "tcp", "--session-timeout", "10s")
    outage = check_window(result)
    assert outage["lost"] == 0 and outage["sent"] > 0.8 * RATE * OUTAGE_S, outage
    assert outage["session"] == "survived" and outage["recovery_ns"] > 0, outage


def test_no_outage_no_outage_section(env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    done = run_mwperf("run", "--transport", "udp", "--rate", "100", "--duration", "1s",
                      "--link", "delay=1ms", "--json-out", str(out), "--no-save", env=env)
    assert done.returncode == 0, done.stderr
    result = read_saved(out)
    assert result["resilience"]["outage"] is None and result["link"]["outage_window"] is None
    assert result["resilience"]["time_to_connect_ns"] > 0


def test_a_session_silent_beyond_the_bound_is_reported_dead(env: dict[str, str],
                                                            tmp_path: Path) -> None:
    # TCP backs its retransmissions off exponentially (0.2, 0.4, 0.8, 1.6, 3.2 s): after a 4 s
    # outage the next one comes ~2 s after the link is back, far beyond a 300 ms bound; the
    # ping gives up on the silent peer (outage + bound + 1 s) and the run ends, partial
    out = tmp_path / "result.json"
    done = run_mwperf("run", "--transport", "tcp", "--rate", "100", "--duration", "10s",
                      "--warmup", "300ms", "--link", "outage=2s+4s", "--session-timeout",
                      "300ms", "--json-out", str(out), "--no-save", env=env, timeout=120)
    result = read_saved(out)
    assert done.returncode == 3 and result["status"] == "partial", done.stderr
    outage = result["resilience"]["outage"]
    assert outage["session"] == "dead", outage
    assert outage["recovery_ns"] is None or outage["recovery_ns"] > 300_000_000, outage
    assert "peer silent" in result["status_reason"]
