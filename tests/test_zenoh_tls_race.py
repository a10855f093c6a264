"""zenoh's TLS link race (security/zenoh_tls_race.py, eclipse-zenoh/zenoh#2557) is named where
it shows on a zenoh point secured with TLS: a process whose backtrace is inside zenoh-link-tls,
or messages a reliable link lost; never on another transport, mode or a best-effort link."""

from mwperf.security.zenoh_tls_race import CODE, ISSUE, warnings

LOST = {"config": {"reliability": "reliable"}, "measurement": {"accounting": {"lost": 6}}}
WHOLE = {"config": {"reliability": "reliable"}, "measurement": {"accounting": {"lost": 0}}}
BACKTRACE = ("memory allocation of 139973521078096 bytes failed\nstack backtrace:\n"
             "   8: <zenoh_link_tls::unicast::LinkUnicastTls as zenoh_link_commons::...")


def test_a_reliable_links_loss_is_named_with_the_upstream_issue() -> None:
    [found] = warnings("zenoh", "mtls", LOST, {})
    assert found["code"] == CODE and found["message"].startswith("6 messages lost")
    assert ISSUE in found["message"] and ISSUE in (found["hint"] or "")


def test_a_process_that_died_in_the_link_is_named() -> None:
    [found] = warnings("zenoh", "tls", LOST, {"pong": BACKTRACE, "ping": "other"})
    assert found["message"].startswith("pong died inside zenoh's TLS link"), found


def test_nothing_where_the_race_did_not_show_or_cannot_be() -> None:
    assert warnings("zenoh", "tls", WHOLE, {"ping": "killed by a user"}) == []
    assert warnings("zenoh", None, LOST, {"pong": BACKTRACE}) == []  # plain tcp/
    assert warnings("mqtt", "tls", LOST, {}) == []
    assert warnings("zenoh", "mtls", LOST, {"pong": BACKTRACE}, "quic") == []  # QUIC's link
    assert warnings("zenoh", "mtls", LOST, {}, "tls") != []
    best_effort = {**LOST, "config": {"reliability": "best-effort"}}
    assert warnings("zenoh", "tls", best_effort, {}) == []
