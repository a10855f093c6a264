"""--restart end to end with the real agents: a socket transport (udp), a DDS (Cyclone), a
broker (mosquitto) and a router (the zenoh router of client mode).

Ground truth, independent of the analysis: the ping's raw samples (samples.csv), its schedule
(one message per period) and its own accounting. Every message due from the kill until the first
one that came back after it is lost, and at most those after the last reply that came back
before the kill (the ones in flight may be lost too, or come late); ``lost`` never exceeds the
ping's own count of lost messages; rediscovery is after the kill and inside the run. A restarted
sub (one-way) the same way against the merged samples (both subs' arrivals) and the pub's own
count of what it sent. Every bound comes from the ping's schedule and samples, none from how
fast the machine is: the module runs side by side with the other tests (it passed 8 of 8 runs
beside three busy loops on 2 cores, 2026-11-26) and in scripts/stress-e2e.sh.
"""

import csv
from pathlib import Path
from typing import Any

import pytest
from conftest import as_v2, read_saved, run_mwperf

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
    result = read_saved(out)
    assert validation_error(as_v2(result), "run-result") is None
    (samples,) = (tmp_path / "results").glob("*/samples.csv")
    with open(samples, newline="") as handle:
        rows = [{k: int(v) for k, v in row.items()} for row in csv.DictReader(handle)]
    return result, rows


def check_lost(lost: int, rows: list[dict], killed: int, last: dict, first: dict) -> None:
    """At least every message due from the kill until the first that came back (sent at or
    after its due time, so after the kill: it had nowhere to go), at most every one after the
    last that came back before the kill (those in flight went with the killed process too,
    unless they came late)."""
    period = 1_000_000_000 // RATE
    assert all(r["intended_ns"] - first["intended_ns"] == (r["seq"] - first["seq"]) * period
               for r in rows), "the schedule: one message per period"
    due_after = -(-(first["intended_ns"] - killed) // period)  # due at or after the kill
    window = first["seq"] - last["seq"] - 1
    assert due_after - 2 <= lost <= window, (lost, due_after, window)


def check(result: dict[str, Any], rows: list[dict], target: str) -> dict[str, Any]:
    (entry,) = result["restarts"]
    assert entry["target"] == target
    assert entry["recovered"] in ("session", "rebuilt"), entry
    killed = entry["killed_ns"]
    first = min((r for r in rows if r["sent_ns"] >= killed), key=lambda r: r["recv_ns"])
    assert entry["first_message_after_ns"] == first["recv_ns"]
    assert 0 < entry["rediscovery_ns"] < DURATION_S * 1e9
    # what was in flight at the kill (sent after the last reply that came back before it: a
    # loaded machine holds several) went with the killed process too
    last = max((r for r in rows if r["recv_ns"] < killed), key=lambda r: r["seq"])
    check_lost(entry["lost"], rows, killed, last, first)
    assert entry["lost"] <= result["measurement"]["accounting"]["lost"]
    # the kill came at T after the measured phase began: after the first measured message was
    # due + T (the schedule's time of seq 0, from any row: a late first send under load, or a
    # first message lost, moves no bound)
    period = 1_000_000_000 // RATE
    (began,) = {r["intended_ns"] - r["seq"] * period for r in rows}
    assert killed - began >= entry["at_ns"], (killed - began, entry["at_ns"])
    return entry


def test_a_udp_pong_restart_loses_what_was_sent_while_it_was_down(env, tmp_path) -> None:
    result, rows = run(env, tmp_path, "--transport", "udp", "--restart", "pong@1s")
    entry = check(result, rows, "pong")
    assert entry["recovered"] == "session"  # datagrams: the ping keeps its socket


def test_a_pong_restart_with_several_topics_is_analysed_on_each_topics_samples(
        env, tmp_path) -> None:
    """--topics 3: each topic has its own samples file, each analysed as one topic is (the
    analysis read samples.csv, absent with several topics, and said 'recovered: no, all lost'
    while most round trips came back); the entry is the sum of the topics' losses, back when the
    slowest topic is."""
    out = tmp_path / "result.json"
    done = run_mwperf("run", "--transport", "udp", "--topics", "3", "--rate", str(RATE),
                      "--duration", f"{DURATION_S}s", "--warmup", "500ms", "--restart", "pong@1s",
                      "--json-out", str(out), "--results", str(tmp_path / "results"), env=env,
                      timeout=180)
    assert out.is_file(), done.stderr
    result = read_saved(out)
    assert validation_error(as_v2(result), "run-result") is None
    (entry,) = result["restarts"]
    assert entry["recovered"] == "session", entry
    files = sorted((tmp_path / "results").glob("*/samples.*.csv"))
    assert len(files) == 3
    firsts = []
    for path in files:
        with open(path, newline="") as handle:
            rows = [{k: int(v) for k, v in row.items()} for row in csv.DictReader(handle)]
        firsts.append(min(r["recv_ns"] for r in rows if r["sent_ns"] >= entry["killed_ns"]))
    assert entry["first_message_after_ns"] == max(firsts)
    # what the restart lost is lost: no more than the ping counted lost over all topics
    assert 0 < entry["lost"] <= result["measurement"]["accounting"]["lost"]
    assert "3 topics" in entry["notes"][-1]


def test_a_cyclonedds_pong_restart_is_rediscovered(env, tmp_path) -> None:
    result, rows = run(env, tmp_path, "--transport", "cyclonedds", "--restart", "pong@1s")
    assert check(result, rows, "pong")["recovered"] == "session"


def test_a_mosquitto_restart_is_survived_by_reconnecting(env, tmp_path) -> None:
    result, rows = run(env, tmp_path, "--transport", "mqtt", "--restart", "mosquitto@1s")
    entry = check(result, rows, "mosquitto")
    # a broker gone closes both clients' connections: they must open them again (a "session"
    # reading once came from a kill stamped before the signal, a thread switch between them)
    assert entry["recovered"] == "rebuilt", entry
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
    check_lost(entry["lost"], rows, killed, max(old, key=lambda r: r["seq"]), first)
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


def test_a_foxglove_pong_restart_reconnects_through_the_server(env, tmp_path) -> None:
    # the killed pong's channels close on the server: foxglove-sdk calls the relay back with
    # its own locks held (this once deadlocked the server: the restarted pong's handshake
    # timed out and the server did not stop on SIGTERM)
    result, rows = run(env, tmp_path, "--transport", "foxglove", "--restart", "pong@1s")
    entry = check(result, rows, "pong")
    # the pong's ready channel going is the peer leaving (Closed, as a TCP connection's end):
    # the ping opens its endpoint again ("rebuilt"). Unless the server announced the restarted
    # pong's channels before it noticed the killed one's connection close (its tasks' order on a
    # loaded machine: CI, 2026-11-29): the ping then subscribes to the new reply channel over the
    # session it kept, never sees the peer leave, and recovery is "session". Either way the
    # replies after the kill came from the restarted pong.
    assert (entry["recovered"] == "rebuilt") == ("ping" in entry["reopened_by"]), entry
    assert entry["first_message_after_ns"] > entry["started_ns"], entry
    codes = [w["code"] for w in result["warnings"]]
    assert "daemon-killed" not in codes, result["warnings"]


def test_a_bridge_broker_restart_is_survived(env, tmp_path) -> None:
    # mqtt-bridge: the ping's broker (bridge-a, which also holds mosquitto's bridge connection
    # to bridge-b) killed and started again: the ping reconnects, the bridge connection is
    # dialled again by the restarted broker itself
    result, rows = run(env, tmp_path, "--transport", "mqtt", "--bridge", "mqtt-bridge",
                       "--restart", "bridge-a@1s")
    entry = check(result, rows, "bridge-a")
    assert entry["recovered"] == "rebuilt" and "ping" in entry["reopened_by"], entry


def test_a_mosquitto_restart_one_way(env, tmp_path) -> None:
    # one way: the pub and the sub both lose their broker connection and open it again; the
    # gap against the sub's samples and the pub's count
    result, rows = run(env, tmp_path, "--transport", "mqtt", "--mode", "oneway",
                       "--restart", "mosquitto@1s")
    entry = check(result, rows, "mosquitto")
    assert entry["recovered"] == "rebuilt", entry
    assert "sub" in entry["reopened_by"], entry
    accounting = result["measurement"]["accounting"]
    pub = next(a for a in result["agents"] if a["role"] == "pub")
    assert accounting["sent"] == pub["sent"]
    assert accounting["received"] + accounting["lost"] == accounting["sent"]
