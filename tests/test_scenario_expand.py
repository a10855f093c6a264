"""Expansion: axes in file order (first slowest), exclusions, repetitions, 'built-in'
transports, config hashes; every built-in scenario validates and its quick variant is small."""

import os
from pathlib import Path

import pytest
from scenario_support import SourceCatalogue, validate

from mwperf.config import TRANSPORTS
from mwperf.scenario import load_scenario
from mwperf.scenario.catalog import built_in_names, describe_built_ins
from mwperf.scenario.check import check_points
from mwperf.scenario.expand import expand
from mwperf.scenario.progress import planned_s


def test_product_in_file_order_with_exclusions_and_repeats(tmp_path: Path) -> None:
    _, points, _ = validate(tmp_path / "x.yaml", """\
payload: [Array64, Array1k]
rate: [10, 100, 0]
transport: [udp, tcp]
repeat: 2
exclude:
  - {transport: tcp, rate: [0, 100]}
  - {payload: Array1k, rate: 10, transport: udp}
""")
    combos = [(p.options["payload"], p.options["rate"], p.options["transport"], p.repetition)
              for p in points]
    expected = [(pl, r, t, rep) for pl in ("Array64", "Array1k") for r in ("10", "100", "0")
                for t in ("udp", "tcp") for rep in (1, 2)
                if not (t == "tcp" and r in ("0", "100"))
                and not (pl == "Array1k" and r == "10" and t == "udp")]
    assert combos == expected
    assert [p.index for p in points] == list(range(1, len(expected) + 1))
    assert points[0].label() == "udp roundtrip 10 Hz Array64 (rep 1/2)"
    assert points[0].config_hash() != points[1].config_hash()  # repetitions differ
    assert points[0].axes == (("payload", "Array64"), ("rate", "10"), ("transport", "udp"))
    assert points[0].lines == {"payload": 1, "rate": 2, "transport": 3}


def test_labels_name_the_other_axes(tmp_path: Path) -> None:
    _, points, _ = validate(tmp_path / "x.yaml", "reliability: [reliable, best-effort]\n"
                                                 "topics: [1, 3]\nrate: 0\n")
    assert [p.label() for p in points] == [
        "udp roundtrip max Array1k reliability=reliable topics=1",
        "udp roundtrip max Array1k reliability=reliable topics=3",
        "udp roundtrip max Array1k reliability=best-effort topics=1",
        "udp roundtrip max Array1k reliability=best-effort topics=3"]


def test_built_in_transports(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("transport: built-in\nrate: [10, 20]\n")
    scenario = load_scenario(str(path))
    assert [p.transport for p in expand(scenario, ["tcp", "udp", "quic"])] == [
        "udp", "udp", "tcp", "tcp", "quic", "quic"]  # side-by-side order, then the others
    assert [p.transport for p in expand(scenario, None)][::2] == list(TRANSPORTS)
    path.write_text("transport: [built-in, udp]\n")
    assert [p.transport for p in expand(load_scenario(str(path)), ["udp", "tcp"])] == [
        "udp", "tcp"]


def test_conditions_apply_to_every_point(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("rate: [10, 20]\n")
    points = expand(load_scenario(str(path)), ["udp"], {"busy_poll": True})
    assert all(p.options["busy_poll"] is True for p in points)


def test_the_default_scenario_is_the_side_by_side_suite() -> None:
    points = expand(load_scenario("default"), None)
    assert len(points) == 4 * 3 * len(TRANSPORTS)
    assert {(p.options["transport"], p.options["rate"], p.options["payload"]) for p in points} \
        == {(t, r, p) for t in TRANSPORTS for r in ("100", "1000", "0")
            for p in ("Struct256", "Array1k", "Array64k", "PointCloud512k")}
    assert {(p.options["mode"], p.options["duration"], p.options["warmup"]) for p in points} \
        == {("roundtrip", "500ms", "200ms")}
    # every transport under the same CPU-idle conditions (issue 41: fair side by side)
    assert {p.options["keep_awake"] for p in points} == {True}
    assert [p.transport for p in points[:len(TRANSPORTS)]] == list(TRANSPORTS)  # side by side
    assert {p.options["duration"] for p in expand(load_scenario("default", True), None)} \
        == {"300ms"}
    assert len(expand(load_scenario("default", True), ["udp", "mqtt"])) == 24


QUICK_BUDGET_S = 6 * 60
"""a quick variant measures for at most this long when every known transport is built"""
LONGER_QUICK_S = {"soak": 15 * 60}
"""the soak's quick variant is one minute per point by design (issue 29): a slope needs time"""


@pytest.mark.parametrize("name", built_in_names())
def test_every_built_in_validates_and_its_quick_variant_is_small(name: str) -> None:
    if load_scenario(name).topology is not None and os.geteuid() != 0:
        pytest.skip("points on emulated hosts are refused without root")
    full, quick = load_scenario(name), load_scenario(name, quick=True)
    full_points, quick_points = expand(full, None), expand(quick, None)
    check_points(full, full_points, SourceCatalogue)
    configs = check_points(quick, quick_points, SourceCatalogue)
    assert full.description and "\n" not in full.description
    assert 4 <= len(quick_points) <= len(full_points)
    measuring_s = sum(planned_s(c) for c in configs.values())
    setup_s = 1.5 * len(quick_points)
    assert measuring_s + setup_s < LONGER_QUICK_S.get(name, QUICK_BUDGET_S), \
        (name, measuring_s, len(quick_points))


def test_built_in_sizes_match_the_seeds() -> None:
    sizes = {name: len(expand(load_scenario(name), None)) for name in built_in_names()}
    assert sizes["ros1-rate-sweep"] == 2 * 11 * 5  # relay/agent x 200 Hz..10 kHz x 5 runs
    assert sizes["busy-loop-executors"] == 10 * 3 * 2 * 20  # busy x (1s, 3s, 3m) x QoS x 20
    # busy x (1 single, 1 events, 3 single, 3 multi, 3 events) x QoS x 20
    assert sizes["busy-loop-executors-rclpy"] == 10 * 5 * 2 * 20
    assert sizes["rate-sweep-3-topics"] == 2 * 10 * 20  # QoS x 10..100 Hz x 20 samples
    # payloads x rates x (mqtt direct/mqtt-bridge, cyclonedds direct/zenoh-ros2dds/foxglove);
    # the old name is an alias
    assert sizes["bridges"] == sizes["bridge-payloads"] == 3 * 4 * 5
    assert sizes["cpu-quotas"] == 2 * 2 * 4 * 3  # udp/ros1 x echo work x quota x 3 runs
    assert sizes["ros1-subscribers"] == 2 * 5 * 2 * 5  # ros1/udp x 1..16 subs x 2 rates x 5 runs
    # (udp, tcp, zenoh x 2, cyclonedds x 2 reliabilities) x 8 disturbances x 3 runs
    assert sizes["resilience"] == 6 * 8 * 3
    assert sizes["ros1-three-hosts"] == 2 * 10 * 3  # Ethernet/WiFi x 200..2000 Hz x 3 runs
    # every known transport x 5 sizes x reliable/best-effort x 1/4 subscribers, but zenoh's
    # four subscribers (they need a router: --opt mode=client)
    assert sizes["throughput"] == 11 * 5 * 2 * 2 - 5 * 2
    # jazzy/kilted x 4 payloads x (raw Fast DDS, rcl, rclpy echo) x 5 interleaved rounds
    assert sizes["ros2-tax"] == 2 * 4 * 3 * 5
    assert [name for name, _ in describe_built_ins()] == sorted(sizes)


def test_every_built_in_is_documented() -> None:
    docs = (Path(__file__).resolve().parents[1] / "docs" / "scenarios.md").read_text()
    assert [name for name in built_in_names() if f"| `{name}` |" not in docs] == []
