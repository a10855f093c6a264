"""Repeated link flaps (``--link outage=5s+2s,every=10s``) without the emulator: the grammar, its
usage errors (naming --link and the key), the canonical form mwperf-linkem parses, the flap
windows, and each flap's figures worked out from raw samples against hand-made ground truth.
(The emulator's own schedule: crates/mwperf-linkem/src/spec.rs; end to end:
tests/test_link_flaps_e2e.py.)"""

import pytest

from mwperf.emulation.links import flap_windows, parse_link
from mwperf.errors import UsageError
from mwperf.resilience import flaps

MS = 1_000_000
S = 1_000_000_000


def test_every_repeats_the_outage_of_its_directions() -> None:
    spec = parse_link("outage=5s+2s,every=10s")
    for d in (spec.up, spec.down):
        assert (d.outage_at_ns, d.outage_ns, d.outage_every_ns) == (5 * S, 2 * S, 10 * S)
    assert "outage_every_ns=10000000000" in spec.up.canonical()
    # in any order, one direction only, and with a preset
    assert parse_link("every=10s,outage=5s+2s").up.outage_every_ns == 10 * S
    one = parse_link("up:outage=1s+100ms,up:every=500ms")
    assert (one.up.outage_every_ns, one.down.outage_every_ns, one.down.outage_ns) == (
        500 * MS, 0, 0)
    # without every: once, and nothing new in the canonical form (older emulators parse it)
    once = parse_link("outage=5s+2s")
    assert once.up.outage_every_ns == 0 and "every" not in once.up.canonical()


@pytest.mark.parametrize(("text", "words"), [
    ("every=10s", ["--link", "key 'every'", "has none", "outage=5s+2s,every=10s"]),
    ("outage=5s+2s,every=2s", ["--link", "key 'every'", "not longer than the outage"]),
    ("outage=5s+2s,every=1s", ["never come back"]),
    ("outage=5s+2s,every=soon", ["--link", "key 'every'", "cannot parse 'soon'"]),
    ("outage=5s+2s,every=0s", ["key 'every'", "above 0"]),
    ("up:outage=5s+2s,down:every=10s", ["the down direction has none"]),
])
def test_a_bad_every_names_the_flag_the_key_and_what_is_allowed(text: str,
                                                                words: list[str]) -> None:
    with pytest.raises(UsageError) as caught:
        parse_link(text)
    for word in words:
        assert word in str(caught.value), caught.value


def test_the_windows_repeat_until_the_run_ends() -> None:
    assert flap_windows(5, 7, 10, 30) == [(5, 7), (15, 17), (25, 27)]
    assert flap_windows(5, 7, 10, 25) == [(5, 7), (15, 17)]  # begins at 25: not before it
    assert flap_windows(5, 7, 0, 100) == [(5, 7)]


def rows(seqs: list[int]) -> list[tuple[int, int, int]]:
    """1 kHz from t = 0: message k sent at k ms, arriving 100 µs later."""
    return [(k, k * MS, k * MS + 100_000) for k in seqs]


def test_each_flap_loses_what_was_sent_while_the_link_was_down() -> None:
    # down [100, 150) ms and [300, 350) ms: messages 100..149 and 300..349 never arrive
    arrived = [k for k in range(0, 500) if not (100 <= k < 150 or 300 <= k < 350)]
    found = flaps([(100 * MS, 150 * MS), (300 * MS, 350 * MS)], 200 * MS, rows(arrived),
                  600 * MS)
    assert (found["count"], found["measured"], found["lost"]) == (2, 2, 100)
    for item, start in zip(found["items"], (100, 300), strict=True):
        assert item["lost"] == 50 and item["sent_in_gap"] == 50 and item["note"] is None
        # the first message sent at or after the start that arrived: sent at the end
        assert item["first_message_after_ns"] == (start + 50) * MS + 100_000
        assert item["recovery_ns"] == 100_000


def test_a_reliable_link_delivers_late_and_loses_nothing() -> None:
    # messages 100..159 held back and delivered in order when the retransmission came (at
    # 155 ms, 5 ms after the link was back), the rest on time
    held = [(k, k * MS, 155 * MS + k) for k in range(100, 160)]
    found = flaps([(100 * MS, 150 * MS)], 200 * MS, rows(list(range(100))) + held
                  + rows(list(range(160, 180))), 600 * MS)
    (item,) = found["items"]
    assert item["lost"] == 0 and item["recovery_ns"] == 5 * MS + 100


def test_flaps_the_measurement_did_not_see_have_no_figures() -> None:
    found = flaps([(100 * MS, 150 * MS), (300 * MS, 350 * MS), (500 * MS, 550 * MS)], 200 * MS,
                  rows(list(range(0, 100)) + list(range(150, 320))), 520 * MS)
    first, second, third = found["items"]
    assert first["lost"] == 50 and second["lost"] is None and third["lost"] is None
    assert second["note"] == "nothing sent after the flap arrived"
    assert third["note"] == "after the last arrival: nothing measured"
    assert (found["count"], found["measured"]) == (3, 1)
