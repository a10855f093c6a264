"""--restart without the middleware: the TARGET@T grammar, the allowed targets per point, the
usage errors (exit 2, naming --restart and what is allowed), and the analysis of a ping's
samples against hand-made ground truth."""

from types import SimpleNamespace

import pytest
from conftest import run_mwperf

from mwperf.errors import UsageError
from mwperf.restarts import (agent_lines, allowed_targets, analyse, analyse_topics,
                             merge_sub_samples,
                             parse_restarts, survivor_accounting)

MS = 1_000_000


def test_targets_and_times_parse() -> None:
    assert parse_restarts(["pong@5s", "mosquitto@2500ms"]) == (("pong", 5_000_000_000),
                                                              ("mosquitto", 2_500_000_000))
    assert parse_restarts("pong@1s,zenohd@2s") == (("pong", 10**9), ("zenohd", 2 * 10**9))
    assert parse_restarts(None) == ()


@pytest.mark.parametrize("bad", ["pong", "pong@", "@5s", "pong@5", "pong@0s", "pong@-1s"])
def test_a_malformed_restart_names_the_flag(bad: str) -> None:
    with pytest.raises(UsageError, match="--restart"):
        parse_restarts([bad])


@pytest.mark.parametrize(("args", "words"), [
    (["--restart", "nosuch@1s"], ["--restart nosuch", "allowed targets: pong"]),
    (["--restart", "pong@999s"], ["--restart pong@999s", "beyond the end"]),
    (["--restart", "ping@1s"], ["cannot restart the ping", "allowed targets of this point: pong"]),
    (["--mode", "oneway", "--restart", "pub@1s"], ["--restart pub@1s", "cannot restart the pub",
                                                   "allowed targets of this point: sub"]),
    (["--mode", "oneway", "--topics", "2", "--restart", "sub@1s"],
     ["cannot restart the sub", "one topic and one subscriber"]),
    (["--transport", "tcp", "--restart", "mosquitto@1s"], ["not a process of this point"]),
])
def test_bad_restarts_exit_2_naming_the_flag_and_the_targets(
        fake_env: dict[str, str], args: list[str], words: list[str]) -> None:
    done = run_mwperf("run", "--duration", "3s", *args, env=fake_env)
    assert done.returncode == 2, done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


def point(transport: str, opts: dict[str, str] | None = None, pong: str = "agent",
          bridge: str | None = None, mode: str = "roundtrip", topics: int = 1,
          subscribers: int = 1) -> SimpleNamespace:
    return SimpleNamespace(transport=transport, mode=mode, pong=pong, bridge=bridge,
                           option=lambda key: (opts or {}).get(key), topics=topics,
                           subscribers=subscribers)


def test_the_daemons_of_a_point_are_targets() -> None:
    assert allowed_targets(point("mqtt")) == ["pong", "mosquitto"]
    assert allowed_targets(point("zenoh")) == ["pong"]
    assert allowed_targets(point("zenoh", {"mode": "client"})) == ["pong", "zenohd"]
    assert allowed_targets(point("ros1", pong="relay")) == ["rosmaster", "relay"]
    assert allowed_targets(point("foxglove")) == ["pong", "foxglove-server"]
    assert allowed_targets(point("mqtt", bridge="mqtt-bridge")) == ["pong", "bridge-a", "bridge-b"]
    assert allowed_targets(point("cyclonedds")) == ["pong"]


def test_a_one_way_point_restarts_its_one_sub_and_its_daemons() -> None:
    assert allowed_targets(point("udp", mode="oneway")) == ["sub"]
    assert allowed_targets(point("mqtt", mode="oneway")) == ["sub", "mosquitto"]
    assert allowed_targets(point("zenoh", {"mode": "client"}, mode="oneway")) == ["sub", "zenohd"]
    assert allowed_targets(point("mqtt", mode="oneway", bridge="mqtt-bridge")) == [
        "bridge-a", "bridge-b"]
    assert allowed_targets(point("udp", mode="oneway", topics=2)) == []
    assert allowed_targets(point("zenoh", mode="oneway", subscribers=3)) == []


def rows(seqs: list[int], t0: int = 0) -> list[tuple[int, int, int]]:
    """Samples at 1 kHz: message k sent at t0 + k ms, back 100 µs later."""
    return [(k, t0 + k * MS, t0 + k * MS + 100_000) for k in seqs]


def test_the_gap_after_a_kill_is_lost_and_the_first_reply_after_is_rediscovery() -> None:
    # killed at 10.5 ms: 11..19 never came back, 20 is the first reply to a message sent after
    samples = rows(list(range(0, 11)) + list(range(20, 40)))
    event = {"target": "pong", "at_ns": 10 * MS, "killed_ns": 10 * MS + 500_000,
             "started_ns": 11 * MS, "ready_ns": 15 * MS}
    (entry,) = analyse([event], samples, 40, 0, {"ping": []})
    assert entry["lost"] == 9 and entry["sent_in_gap"] == 9
    assert entry["first_message_after_ns"] == 20 * MS + 100_000
    assert entry["rediscovery_ns"] == 20 * MS + 100_000 - (10 * MS + 500_000)
    assert entry["recovered"] == "session" and entry["duplicates"] == 0


def test_a_survivor_that_reopened_makes_it_rebuilt_and_silence_makes_it_no() -> None:
    event = {"target": "mosquitto", "at_ns": 10 * MS, "killed_ns": 10 * MS + 500_000}
    samples = rows(list(range(0, 11)) + list(range(15, 30)))
    (entry,) = analyse([event], samples, 30, 0, {"ping": [14 * MS], "pong": []})
    assert entry["recovered"] == "rebuilt" and entry["reopened_by"] == ["ping"]
    (dead,) = analyse([event], rows(list(range(0, 11))), 30, 0, {"ping": []})
    assert dead["recovered"] == "no" and dead["lost"] == 19 and dead["rediscovery_ns"] is None


def test_several_topics_sum_their_losses_and_wait_for_the_slowest() -> None:
    event = {"target": "pong", "at_ns": 10 * MS, "killed_ns": 10 * MS + 500_000}
    fast = rows(list(range(0, 11)) + list(range(13, 40)))  # 2 lost, back at 13
    slow = rows(list(range(0, 11)) + list(range(20, 40)))  # 9 lost, back at 20
    (entry,) = analyse_topics([event], [("/a", fast, 40, 0), ("/b", slow, 40, 1)], {"ping": []})
    assert (entry["lost"], entry["sent_in_gap"], entry["duplicates"]) == (11, 11, 1)
    assert entry["first_message_after_ns"] == 20 * MS + 100_000  # the slower topic's
    assert entry["recovered"] == "session"
    assert "/a: lost 2" in entry["notes"][-1] and "/b: lost 9" in entry["notes"][-1]
    (dead,) = analyse_topics([event], [("/a", fast, 40, 0), ("/b", rows(list(range(11))), 40, 0)],
                             {"ping": []})
    assert dead["recovered"] == "no" and dead["first_message_after_ns"] is None
    assert dead["rediscovery_ns"] is None and dead["lost"] == 2 + 29


def test_agent_lines() -> None:
    text = "READY udp 127.0.0.1:5\nMEASURING 123\nREOPENED 456\nREOPENED 789\n"
    assert agent_lines(text) == {"MEASURING": [123], "REOPENED": [456, 789]}


def test_a_restarted_sub_is_measured_over_both_incarnations() -> None:
    # 1 kHz; the sub killed at 10.5 ms having recorded 0..10; the restarted sub's first
    # arrival is message 20 (sent 20 ms), it also got 25 twice (its own duplicate) and 30 was
    # received by both (impossible on most transports: counted as a duplicate across)
    killed = rows(list(range(0, 11)) + [30])
    survivor = rows(list(range(20, 40)))
    merged, across = merge_sub_samples([killed, survivor])
    assert across == 1 and [r[0] for r in merged] == list(range(0, 11)) + list(range(20, 40))
    event = {"target": "sub", "at_ns": 10 * MS, "killed_ns": 10 * MS + 500_000,
             "started_ns": 11 * MS, "ready_ns": 15 * MS}
    (entry,) = analyse([event], merged, 40, 1 + across, {"pub": []}, restarted=[survivor])
    assert entry["first_message_after_ns"] == 20 * MS + 100_000  # the restarted sub's first
    assert entry["rediscovery_ns"] == 20 * MS + 100_000 - (10 * MS + 500_000)
    assert entry["lost"] == 9 and entry["sent_in_gap"] == 9 and entry["duplicates"] == 2
    assert entry["recovered"] == "session"
    # the survivor counted 20 of 40 (lost 20) and one duplicate: the merge adds the 11 only
    # the killed sub got, and the one both got
    survivor_acc = {"sent": 40, "received": 20, "lost": 20, "duplicated": 1, "reordered": 0}
    acc = survivor_accounting(survivor_acc, {r[0] for r in survivor}, {r[0] for r in merged},
                              across)
    assert (acc["received"], acc["lost"], acc["duplicated"]) == (31, 9, 2)
    assert acc["sent"] - acc["lost"] == acc["received"]


def test_a_sub_that_never_came_back() -> None:
    event = {"target": "sub", "at_ns": 10 * MS, "killed_ns": 10 * MS + 500_000}
    (entry,) = analyse([event], rows(list(range(0, 11))), 40, 0, {}, restarted=[[]])
    assert entry["recovered"] == "no" and entry["lost"] == 29
