"""Bridges without running any: the pair checks, achieved vs offered rate and its warning, and
the summary's ranking by added latency (pure functions; end to end: test_bridges_e2e.py)."""

import pytest

from mwperf.bridges import check_pair, names
from mwperf.bridges.rate import achieved, short_warning
from mwperf.errors import UsageError
from mwperf.scenario.bridges import rank_bridges
from mwperf.scenario.expand import PlannedPoint
from mwperf.scenario.observe import Observation
from mwperf.show.table import Row


def test_every_bridge_and_direct_are_allowed_values() -> None:
    assert names() == ("direct", "mqtt-bridge", "zenoh-ros2dds", "foxglove")


@pytest.mark.parametrize(("bridge", "transport", "message"), [
    ("mqtt-bridge", "ros1", "--bridge mqtt-bridge --transport ros1: mqtt-bridge does not carry "
                            "ros1"),
    ("zenoh-ros2dds", "mqtt", "--bridge zenoh-ros2dds --transport mqtt: zenoh-ros2dds does not "
                              "carry mqtt"),
    ("foxglove", "ros1", "--bridge foxglove --transport ros1: foxglove does not carry ros1"),
    ("foxglove", "foxglove", "--bridge foxglove --transport foxglove: foxglove does not carry "
                             "foxglove"),
    ("rosbridge", "udp", "--bridge: unknown bridge 'rosbridge'; allowed: direct, mqtt-bridge, "
                         "zenoh-ros2dds, foxglove"),
])
def test_a_pair_that_cannot_work_names_both(bridge: str, transport: str, message: str) -> None:
    with pytest.raises(UsageError) as error:
        check_pair(bridge, transport, "roundtrip")
    assert str(error.value).startswith(message) and error.value.exit_code == 2


def test_direct_goes_with_every_transport() -> None:
    for transport in ("udp", "ros1", "iceoryx2"):
        check_pair("direct", transport, "oneway")


def test_achieved_against_offered_and_the_95_percent_warning() -> None:
    # zenoh-plugin-ros2dds#192: 1 kHz offered for 10 s, 500 arrived (~50 Hz)
    rates = achieved(1000.0, 1, {"accounting": {"received": 500}}, 10.0)
    assert rates == {"offered_msgs_per_s": 1000.0, "achieved_msgs_per_s": 50.0,
                     "delivered_ratio": 0.05}
    code, message, _ = short_warning("zenoh-ros2dds", rates)
    assert code == "bridge-rate-short"
    assert message == ("zenoh-ros2dds delivered 50 msg/s of the 1000 msg/s offered (5.0 %, "
                       "below 95 %)")
    # 3 topics at 100 Hz for 2 s: 600 offered; 570 is 95 %, 569 is short
    assert short_warning("x", achieved(100.0, 3, {"accounting": {"received": 570}}, 2.0)) is None
    assert short_warning("x", achieved(100.0, 3, {"accounting": {"received": 569}}, 2.0))
    # --count: the window is count / rate
    assert achieved(100.0, 1, {"accounting": {"received": 50}}, None, 100)["delivered_ratio"] \
        == 0.5
    # closed loop (rate 0) offers nothing to fall short of; no measurement: unknown
    assert achieved(0.0, 1, {"accounting": {"received": 9}}, 1.0)["delivered_ratio"] is None
    assert achieved(100.0, 1, None, 1.0)["delivered_ratio"] is None


def _obs(index: int, transport: str, bridge: str, rate: float, p50: float | None,
         p99: float | None = None, msgs: float | None = None) -> Observation:
    point = PlannedPoint(index, {"transport": transport, "bridge": bridge, "rate": rate,
                                 "payload": "Array1k", "duration": "2s"},
                         (("transport", transport), ("bridge", bridge), ("rate", f"{rate:g}")),
                         {})
    row = Row(transport, "roundtrip", rate, "Array1k", 1024, p50_ns=p50, p99_ns=p99 or p50,
              count=int(2 * (msgs if msgs is not None else rate)), status="complete")
    return Observation(point, "complete", None, row)


def test_bridges_are_ranked_by_added_p50_against_their_own_direct_path() -> None:
    observed = [
        _obs(1, "mqtt", "direct", 100, 60e6), _obs(2, "mqtt", "mqtt-bridge", 100, 61e6),
        _obs(3, "cyclonedds", "direct", 100, 62e6),
        _obs(4, "cyclonedds", "zenoh-ros2dds", 100, 62.5e6, 70e6, msgs=50),
        _obs(5, "mqtt", "direct", 1000, 60e6), _obs(6, "mqtt", "mqtt-bridge", 1000, None),
    ]
    rankings = {r.point: r for r in rank_bridges(observed)}
    at_100 = rankings["roundtrip 100 Hz Array1k"]
    assert [(c.bridge, c.added_p50_ns) for c in at_100.costs] == [("zenoh-ros2dds", 0.5e6),
                                                                   ("mqtt-bridge", 1e6)]
    assert at_100.costs[0].added_p99_ns == 8e6 and at_100.costs[0].delivered == 0.5
    assert at_100.line().startswith("roundtrip 100 Hz Array1k: zenoh-ros2dds (cyclonedds) "
                                    "+500 µs (p50 62.5 ms vs direct 62.0 ms; p99 +8.00 ms, "
                                    "50 % delivered) < mqtt-bridge (mqtt) +1.00 ms")
    unmeasured = rankings["roundtrip 1000 Hz Array1k"]
    assert unmeasured.costs[0].added_p50_ns is None
    assert "mqtt-bridge (mqtt) not measured" in unmeasured.line()
    no_direct = rank_bridges([_obs(7, "mqtt", "mqtt-bridge", 10, 5e6)])[0]
    assert "mqtt-bridge (mqtt) p50 5.00 ms, direct path not measured" in no_direct.line()


def test_a_missing_foxglove_package_names_it_and_the_install(monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    from mwperf.bridges import foxglove_bridge
    from mwperf.errors import RunError
    monkeypatch.setattr(foxglove_bridge, "_installed", lambda package: package != "cyclonedds")
    with pytest.raises(RunError) as error:
        foxglove_bridge.ensure(None)  # type: ignore[arg-type]
    assert str(error.value) == ("--bridge foxglove: the Python package cyclonedds is not "
                                "installed; install with pip install 'mwperf[bridges]' "
                                "(foxglove-sdk and cyclonedds)")


class _Catalogue:
    def transports(self) -> list[str]:
        return ["udp", "mqtt", "cyclonedds"]

    def payloads(self) -> dict[str, int]:
        return {"Array1k": 1024}


@pytest.mark.parametrize(("transport", "bridge", "refused"), [
    ("mqtt", "mqtt-bridge", False), ("udp", "direct", False),
    ("cyclonedds", "zenoh-ros2dds", True), ("cyclonedds", "foxglove", True)])
def test_one_way_to_several_subscribers_through_a_bridge_that_fans_out(
        transport: str, bridge: str, refused: bool) -> None:
    from mwperf.config import build_point
    options = {"transport": transport, "bridge": bridge, "mode": "oneway", "subscribers": "3"}
    if not refused:
        point = build_point(options, _Catalogue)
        assert (point.bridge, point.subscribers) == (bridge, 3)
        return
    with pytest.raises(UsageError) as error:
        build_point(options, _Catalogue)
    assert str(error.value).startswith(
        f"--bridge {bridge} --subscribers 3: not through {bridge}: the publisher meets the "
        "bridge's one reader, not the subscribers behind it")
