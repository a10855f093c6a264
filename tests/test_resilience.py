"""Resilience metrics (python/mwperf/resilience.py) on synthetic counts with known answers, and
the pieces that carry the outage window from the link emulator to the agents."""

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from mwperf.config import SESSION_TIMEOUT_NS, build_point
from mwperf.emulation.links import parse_link
from mwperf.emulation.network import scheduled_window
from mwperf.emulation.userspace import _epoch
from mwperf.errors import UsageError
from mwperf.resilience import missed_warning, section, session_state
from mwperf.parts.outage import outage_args, outlasting
from mwperf.schema import SCHEMA_PATH

S = 1_000_000_000
START, END = 100 * S, 102 * S  # a 2 s outage
DISCOVERY = {"matched_ns": 3_000_000, "first_reply_ns": 250_000, "probes": 1}


def counts(sent: int | None = None, delivered: int | None = None,
           first_after_ns: int | None = None, last_before_ns: int | None = None,
           series_origin_ns: int | None = None) -> dict[str, Any]:
    """An agent report's ``outage`` section."""
    return {"start_ns": START, "end_ns": END, "sent": sent, "delivered": delivered,
            "last_before_ns": last_before_ns, "first_after_ns": first_after_ns,
            "series_origin_ns": series_origin_ns}


def test_roundtrip_outage_lost_recovery_survived() -> None:
    # 1 kHz for 2 s: 2000 sent inside the window, none came back; the first echo 35 ms after
    ping = counts(sent=2000, delivered=0, first_after_ns=END + 35_000_000,
                  last_before_ns=START - 900_000, series_origin_ns=START - 30 * S)
    got = section(DISCOVERY, ping, ping, SESSION_TIMEOUT_NS, END + 8 * S)
    assert got["time_to_connect_ns"] == 3_250_000
    assert got["outage"] == {
        "start_ns": START, "end_ns": END, "duration_ns": 2 * S, "sent": 2000, "delivered": 0,
        "lost": 2000, "last_before_ns": START - 900_000, "recovery_ns": 35_000_000,
        "session": "survived", "session_timeout_ns": SESSION_TIMEOUT_NS,
        "series_origin_ns": START - 30 * S}


def test_oneway_combines_the_pub_sends_with_the_sub_deliveries() -> None:
    # a reliable transport retransmits 1900 of 2000 after the link is back
    pub = counts(sent=2000)
    sub = counts(delivered=1900, first_after_ns=END + 400_000_000)
    got = section({"matched_ns": 1_000, "first_reply_ns": None, "probes": 0}, pub, sub,
                  SESSION_TIMEOUT_NS, END + 10 * S)["outage"]
    assert (got["lost"], got["recovery_ns"], got["session"]) == (100, 400_000_000, "survived")


def test_an_outage_over_before_the_first_measured_message_says_nothing() -> None:
    # scheduled inside the set-up: nothing sent in it, nothing delivered before it, and the
    # first delivery after it is the start of the measurement, not a recovery
    ping = counts(sent=0, delivered=0, first_after_ns=END + 600_000_000)
    got = section(DISCOVERY, ping, ping, SESSION_TIMEOUT_NS, END + 3 * S)
    assert (got["outage"]["lost"], got["outage"]["recovery_ns"], got["outage"]["session"]) == (
        None, None, "undetermined")
    code, message, hint = missed_warning(got, ping, ping, END + 3 * S)
    assert code == "outage-missed" and "before the first measured message" in message
    assert "START+LENGTH" in hint


def test_an_outage_after_the_sender_finished_says_nothing() -> None:
    ping = counts(sent=0, delivered=0, last_before_ns=START - 2 * S)
    got = section(DISCOVERY, ping, ping, SESSION_TIMEOUT_NS, START - S)
    assert (got["outage"]["recovery_ns"], got["outage"]["session"]) == (None, "undetermined")
    assert "after the sender had finished" in missed_warning(got, ping, ping, START - S)[1]


def test_an_outage_inside_the_measurement_has_no_warning() -> None:
    ping = counts(sent=2000, delivered=0, first_after_ns=END + 35_000_000,
                  last_before_ns=START - 900_000)
    got = section(DISCOVERY, ping, ping, SESSION_TIMEOUT_NS, END + 8 * S)
    assert missed_warning(got, ping, ping, END + 8 * S) is None


def test_dead_session_nothing_after_the_bound_while_the_sender_still_ran() -> None:
    ping = counts(sent=2000, delivered=0)
    got = section(DISCOVERY, ping, ping, 5 * S, END + 5 * S + 1)["outage"]
    assert (got["lost"], got["recovery_ns"], got["session"]) == (2000, None, "dead")


def test_session_states_at_the_bounds() -> None:
    assert session_state(5 * S, END, 5 * S, END + 9 * S) == "survived"
    assert session_state(5 * S + 1, END, 5 * S, END + 9 * S) == "dead"  # back, but too late
    assert session_state(None, END, 5 * S, END + 5 * S) == "dead"
    assert session_state(None, END, 5 * S, END + 5 * S - 1) == "undetermined"
    assert session_state(None, END, 5 * S, None) == "undetermined"


def test_no_outage_still_reports_time_to_connect() -> None:
    assert section(DISCOVERY, None, None, SESSION_TIMEOUT_NS, END) == {
        "time_to_connect_ns": 3_250_000, "outage": None}
    assert section(None, None, None, SESSION_TIMEOUT_NS, None)["time_to_connect_ns"] is None


def test_a_missing_half_leaves_lost_unknown_not_zero() -> None:
    got = section(DISCOVERY, None, counts(delivered=5), SESSION_TIMEOUT_NS, END + 9 * S)
    assert got["outage"]["lost"] is None


def test_sections_match_the_schema() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    schema.pop("oneOf")
    validator = Draft202012Validator({**schema, "$ref": "#/$defs/resilience"})
    ping = counts(sent=2000, delivered=0, first_after_ns=END + 1)
    validator.validate(section(DISCOVERY, ping, ping, S, END + 9 * S))
    validator.validate(section(DISCOVERY, None, None, S, None))
    assert not validator.is_valid({"time_to_connect_ns": 1, "outage": {**section(
        DISCOVERY, ping, ping, S, END)["outage"], "session": "maybe"}})


def test_scheduled_window_counts_from_the_link_epoch() -> None:
    assert scheduled_window(7 * S, parse_link("outage=5s+2s")) == (12 * S, 14 * S)
    assert scheduled_window(7 * S, parse_link("delay=10ms")) is None


def test_epoch_from_the_ready_line() -> None:
    assert _epoch("READY mwa0 mwb0 epoch_ns=123456789\n") == 123456789
    assert _epoch("READY mwa0 mwb0\n") is None


@pytest.fixture
def as_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """build_point refuses --link without root; these tests build points, they run nothing."""
    monkeypatch.setattr("mwperf.config.require_root", lambda: None)


@pytest.mark.usefixtures("as_root")
def test_agents_get_the_window_and_outlast_it() -> None:
    assert outage_args("ping", (1, 2)) == ["--outage-window", "1:2"]
    assert outage_args("pong", (1, 2)) == [] and outage_args("sub", None) == []
    cfg = build_point({"link": "outage=5s+2s"}, Catalogue)
    # a 2 s outage + the 5 s session bound + 1 s: the sender does not give up on a silent peer
    assert outlasting(cfg, (5 * S, 7 * S)).peer_timeout_ns == 8 * S
    assert outlasting(cfg, None) is cfg


@pytest.mark.usefixtures("as_root")
def test_session_timeout_option() -> None:
    assert build_point({"link": "outage=1s+1s", "session_timeout": "2s"},
                       Catalogue).session_timeout_ns == 2 * S
    with pytest.raises(UsageError, match="--session-timeout: only together with --link"):
        build_point({"session_timeout": "2s"}, Catalogue)
    with pytest.raises(UsageError, match="--session-timeout: cannot parse 'soon'"):
        build_point({"link": "outage=1s+1s", "session_timeout": "soon"}, Catalogue)


class Catalogue:
    """What build_point needs from an agent."""

    def transports(self) -> list[str]:
        return ["udp", "tcp"]

    def payloads(self) -> dict[str, int]:
        return {"Array1k": 1024}
