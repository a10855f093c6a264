"""--restart end to end with the real agents: a socket transport (udp), a DDS (Cyclone), a
broker (mosquitto) and a router (the zenoh router of client mode).

Ground truth, independent of the analysis: the ping's raw samples (samples.csv) and its own
accounting. Every message the ping sent from the kill until it sent the first one that came
back went into the restart's gap, so ``lost`` = (that send time - the kill) x the rate, within
one period either side (the message in flight at the kill) plus what a loaded machine's late
sends shift; ``lost`` never exceeds the ping's own count of lost messages; rediscovery is after
the kill and inside the run. A restarted sub (one-way) the same way against the merged samples
(both subs' arrivals) and the pub's own count of what it sent. Timing-sensitive: in conftest's
SERIAL list.
"""

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_mwperf

from mwperf.schema import validation_error

pytestmark = pytest.mark.agent

RATE = 1000
DURATION_S = 3


@pytest.fixture
def env(leased_env: dict[str, str]) -> dict[str, str]:
    return leased_env


def run(env: dict[str, str], tmp_path: Path, *args: str) -> tuple[dict[str, Any], list[dict]]:
    out = tmp_path / "result.json"
    done = run_mwperf("run", "--rate", str(RATE), "--duration", f"{DURATION_S}s", "--warmup",
                      "500ms", *args, "--json-out", str(out), "--results",
                      str(tmp_path / "results"), env=env, timeout=180)
    assert "Traceback" not in done.stderr, done.stderr
    assert out.is_file(), done.stderr
    result = json.loads(out.read_text())
    assert validation_error(result, "run-result") is None
    (samples,) = (tmp_path / "results").glob("*/samples.csv")
    with open(samples, newline="") as handle:
        rows = [{k: int(v) for k, v in row.items()} for row in csv.DictReader(handle)]
    return result, rows


def check(result: dict[str, Any], rows: list[dict], target: str) -> dict[str, Any]:
    (entry,) = result["restarts"]
    assert entry["target"] == target
    assert entry["recovered"] in ("session", "rebuilt"), entry
    killed = entry["killed_ns"]
    first = min((r for r in rows if r["sent_ns"] >= killed), key=lambda r: r["recv_ns"])
    assert entry["first_message_after_ns"] == first["recv_ns"]
    assert 0 < entry["rediscovery_ns"] < DURATION_S * 1e9
    down_s = (first["sent_ns"] - killed) / 1e9
    assert abs(entry["lost"] - down_s * RATE) <= 2 + 0.05 * down_s * RATE, (entry, down_s)
    assert entry["lost"] <= result["measurement"]["accounting"]["lost"]
    # the kill came at T after the measured phase began: after the first measured send + T
    assert killed - min(r["sent_ns"] for r in rows) >= entry["at_ns"] - 5_000_000
    return entry


def test_a_udp_pong_restart_loses_what_was_sent_while_it_was_down(env, tmp_path) -> None:
    result, rows = run(env, tmp_path, "--transport", "udp", "--restart", "pong@1s")
    entry = check(result, rows, "pong")
    assert entry["recovered"] == "session"  # datagrams: the ping keeps its socket


def test_a_cyclonedds_pong_restart_is_rediscovered(env, tmp_path) -> None:
    result, rows = run(env, tmp_path, "--transport", "cyclonedds", "--restart", "pong@1s")
    assert check(result, rows, "pong")["recovered"] == "session"


def test_a_mosquitto_restart_is_survived_by_reconnecting(env, tmp_path) -> None:
    result, rows = run(env, tmp_path, "--transport", "mqtt", "--restart", "mosquitto@1s")
    entry = check(result, rows, "mosquitto")
    # usually "rebuilt" (the ping saw its connection fail and reopened it); in one CI run of
    # several the ping's REOPENED fell outside kill..first reply and it read "session": the
    # classification of a broker restart is not settled yet (issue 29's note), the accounting is
    assert entry["recovered"] in ("rebuilt", "session")
    if entry["recovered"] == "rebuilt":
        assert "ping" in entry["reopened_by"] or "pong" in entry["reopened_by"]
    assert entry["ready_ns"] > entry["started_ns"] >= entry["killed_ns"]


def test_a_zenoh_router_restart(env, tmp_path) -> None:
    result, rows = run(env, tmp_path, "--transport", "zenoh", "--opt", "mode=client",
                       "--restart", "zenohd@1s")
    check(result, rows, "zenohd")


def check_sub(result: dict[str, Any], rows: list[dict]) -> dict[str, Any]:
    """A sub restart against the merged samples and the pub's count: received + lost = sent,
    received = the rows of samples.csv, lost ~ the down time x the rate."""
    (entry,) = result["restarts"]
    assert entry["target"] == "sub" and entry["recovered"] in ("session", "rebuilt"), entry
    killed = entry["killed_ns"]
    accounting = result["measurement"]["accounting"]
    pub = next(a for a in result["agents"] if a["role"] == "pub")
    assert accounting["sent"] == pub["sent"]
    assert accounting["received"] == len({r["seq"] for r in rows}) == len(rows)
    assert accounting["received"] + accounting["lost"] == accounting["sent"]
    # the killed sub may still record for a moment after killed_ns (stamped as the signal is
    # sent; a loaded machine delivers it later): it was dead (waited for) before started_ns,
    # so the rows from started_ns on are the restarted sub's
    old = [r for r in rows if r["recv_ns"] < entry["started_ns"]]
    new = [r for r in rows if r["recv_ns"] >= entry["started_ns"]]
    assert old and new, "both subs recorded arrivals"
    assert any(r["recv_ns"] < killed for r in old)
    first = min(new, key=lambda r: r["recv_ns"])
    assert entry["first_message_after_ns"] == first["recv_ns"]
    assert entry["rediscovery_ns"] == first["recv_ns"] - killed
    last_old = max(old, key=lambda r: r["seq"])
    down_s = (first["sent_ns"] - last_old["sent_ns"]) / 1e9  # sent between the two: lost
    assert abs(entry["lost"] - (down_s * RATE - 1)) <= 2 + 0.05 * down_s * RATE, (entry, down_s)
    assert entry["lost"] <= accounting["lost"]
    codes = [w["code"] for w in result["warnings"]]
    assert "restart-survivor-only" in codes, codes
    assert any("restarted sub's alone" in note for note in entry["notes"])
    return entry


def test_a_udp_sub_restart_is_measured_over_both_subs(env, tmp_path) -> None:
    result, rows = run(env, tmp_path, "--transport", "udp", "--mode", "oneway",
                       "--restart", "sub@1s")
    entry = check_sub(result, rows)
    assert entry["recovered"] == "session"  # datagrams: the pub keeps its socket


def test_a_cyclonedds_sub_restart_is_rediscovered(env, tmp_path) -> None:
    result, rows = run(env, tmp_path, "--transport", "cyclonedds", "--mode", "oneway",
                       "--restart", "sub@1s")
    assert check_sub(result, rows)["recovered"] == "session"
