"""Repeated link flaps end to end: the real agents across mwperf-linkem with
``outage=1500ms+300ms,every=1200ms`` (down 1.5 s after the link came up and again 1.2 s after
each start, 300 ms each): two flaps fall inside a 3 s measurement.

Ground truth: at 1 kHz over UDP (best effort) every message sent while the link is down is lost,
so each flap loses ~300 (±20 %: a stalled sender shifts a few sends across the edges), and the
next message sent after the link is back arrives within a period or two (recovery < 100 ms);
and the emulator's own count of the packets its outage dropped in the pub's direction equals
the flaps' lost messages summed (every dropped packet was a measured message: nothing else
crosses a UDP one-way stream in that direction). Needs root, mwperf-linkem and the real agent;
skipped without them. Timing-sensitive: in conftest's SERIAL list.
"""

from pathlib import Path

import pytest
from conftest import as_v2, read_saved, require_emulation, run_mwperf

from mwperf.schema import validation_error

pytestmark = pytest.mark.agent

RATE = 1000
FLAP_S = 0.3
LINK = "outage=1500ms+300ms,every=1200ms"


@pytest.fixture(autouse=True)
def _needs_root_and_linkem() -> None:
    require_emulation("--link tests")


def test_two_flaps_each_lose_what_was_sent_while_the_link_was_down(
        leased_env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    done = run_mwperf("run", "--transport", "udp", "--mode", "oneway", "--rate", str(RATE),
                      "--duration", "3s", "--warmup", "200ms", "--payload", "64", "--link", LINK,
                      "--json-out", str(out), "--no-save", env=leased_env, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    result = read_saved(out)
    assert validation_error(as_v2(result), "run-result") is None
    window = result["link"]["outage_window"]
    assert window["every_ns"] == 1_200_000_000
    outage = result["resilience"]["outage"]
    flaps = outage["flaps"]
    measured = [f for f in flaps["items"] if f["lost"] is not None]
    assert len(measured) >= 2, flaps
    assert flaps["items"][0]["start_ns"] == window["start_ns"] == outage["start_ns"]
    for k, flap in enumerate(flaps["items"]):
        assert flap["start_ns"] == window["start_ns"] + k * window["every_ns"]
        assert flap["end_ns"] - flap["start_ns"] == int(FLAP_S * 1e9)
    expected = RATE * FLAP_S
    for flap in measured:
        assert abs(flap["lost"] - expected) <= 0.2 * expected, flap
        assert 0 <= flap["recovery_ns"] < 100_000_000, flap
    # the first flap is the agents' own window too: their count and the samples' agree
    assert abs(outage["lost"] - measured[0]["lost"]) <= 2, (outage, measured[0])
    # the emulator dropped exactly what the flaps lost, within the edges' messages in flight
    dropped = result["link"]["emulator"]["up"]["dropped"]["outage"]
    assert abs(dropped - flaps["lost"]) <= 2 * len(measured), (dropped, flaps)
    assert dropped == pytest.approx(expected * len(measured), rel=0.2)
