"""Scenario files: good ones load with their fields and lines; every bad one is refused before
anything runs with FILE:LINE: field 'NAME': what is wrong and what is allowed."""

from pathlib import Path

import pytest
from scenario_support import validate

from mwperf.config import OPTIONS
from mwperf.errors import UsageError
from mwperf.scenario import load_scenario
from mwperf.scenario.model import Analysis

GOOD = """\
description: a good one
transport: [zenoh, tcp]
rate:
  - 100
  - 1000
payload: Array1k
busy-loop: 1ms
busy_poll: true
reliability: best-effort
duration: 500ms
repeat: 2
timeout: 30s
exclude:
  - {transport: tcp, rate: 1000}
analysis: {knee_factor: 0.5, knee_loss_pct: 2}
quick:
  rate: [100]
  duration: 100ms
  repeat: 1
"""


def test_a_good_file(tmp_path: Path) -> None:
    scenario, points, configs = validate(tmp_path / "good.yaml", GOOD)
    assert (scenario.name, scenario.description, scenario.repeat) == ("good", "a good one", 2)
    assert scenario.timeout_ns == 30_000_000_000
    assert scenario.analysis == Analysis(knee_factor=0.5, knee_loss_pct=2.0)
    assert [(f.name, f.axis, f.line) for f in scenario.fields] == [
        ("transport", True, 2), ("rate", True, 3), ("payload", False, 6),
        ("busy_loop", False, 7), ("busy_poll", False, 8), ("reliability", False, 9),
        ("duration", False, 10)]
    assert [v.line for v in scenario.get("rate").values] == [4, 5]
    assert len(points) == 3 * 2  # (udp 100, udp 1000, tcp 100) x repeat 2
    cfg = configs[1]
    assert (cfg.busy_loop_ns, cfg.busy_poll, cfg.reliability) == (1_000_000, True,
                                                                  "best-effort")
    assert scenario.source == GOOD


def test_opt_reaches_the_points_and_is_checked_against_each_transport(tmp_path: Path) -> None:
    """Every point's transport must know every --opt key: a sweep mixing transports gives
    its options where they apply (include entries), not to all."""
    _, _, configs = validate(tmp_path / "z.yaml", "transport: zenoh\nopt: [[mode=client, "
                             "express=false]]\n")
    assert {c.opts for c in configs.values()} == {("mode=client", "express=false")}
    with pytest.raises(UsageError) as caught:
        validate(tmp_path / "t.yaml", "transport: [zenoh, udp]\nopt: [[mode=client]]\n")
    assert "--opt mode: not an option of udp; allowed: none" in str(caught.value)


def test_an_opt_axis_may_have_a_point_without_options(tmp_path: Path) -> None:
    """``[]`` on an opt axis is the point without any (zenoh plain beside one option), and an
    exclude rule names the other value."""
    _, _, configs = validate(tmp_path / "z.yaml", "transport: [zenoh, udp]\n"
                             "opt: [[], [mode=client]]\n"
                             "exclude:\n  - {transport: udp, opt: [[mode=client]]}\n")
    assert sorted((c.transport, c.opts) for c in configs.values()) == [
        ("udp", ()), ("zenoh", ()), ("zenoh", ("mode=client",))]
    _, points, configs = validate(tmp_path / "n.yaml", "transport: [zenoh, udp]\n"
                                  "opt: [[], [mode=client]]\nexclude:\n"
                                  "  - {transport: udp, opt: [[mode=client]]}\n"
                                  "  - {transport: zenoh, opt: [[]]}\n")  # [] named: none
    assert sorted((c.transport, c.opts) for c in configs.values()) == [
        ("udp", ()), ("zenoh", ("mode=client",))]
    assert sorted(p.label() for p in points) == ["udp roundtrip 1000 Hz Array1k opt=none",
                                                 "zenoh roundtrip 1000 Hz Array1k opt=mode=client"]
    with pytest.raises(UsageError, match="exclude gives no value to match"):
        validate(tmp_path / "e.yaml", "transport: [zenoh, udp]\nopt: [[], [mode=client]]\n"
                 "exclude:\n  - {transport: udp, opt: []}\n")


def test_the_quick_variant_overrides_fields(tmp_path: Path) -> None:
    scenario, points, configs = validate(tmp_path / "good.yaml", GOOD, quick=True)
    assert scenario.quick and scenario.repeat == 1
    assert [f.name for f in scenario.fields][:2] == ["transport", "rate"]  # file order kept
    assert [p.options["rate"] for p in points] == ["100", "100"]
    assert {c.duration_ns for c in configs.values()} == {100_000_000}
    assert scenario.get("rate").line == 17


def test_keys_are_config_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An option added to config.OPTIONS (e.g. by the link emulation) is a valid field."""
    monkeypatch.setitem(OPTIONS, "link", "text")
    path = tmp_path / "link.yaml"
    path.write_text("link: [wifi-80211n, lte]\n")
    scenario = load_scenario(str(path))
    assert scenario.get("link").axis


ALLOWED = ", ".join([*OPTIONS, "description", "repeat", "interleave", "exclude", "timeout", "quick",
                     "analysis", "hosts", "links", "place"])
BAD = [
    ("rate: 100\nratte: [1, 2]\n",
     f"t.yaml:2: field 'ratte': unknown field (did you mean 'rate'?); allowed: {ALLOWED}"),
    ("rate: [100, 200\n", "t.yaml:2: not valid YAML: expected ',' or ']', but got '<stream end>'"),
    ("", "t.yaml:1: the file is empty; a scenario is a mapping of fields, e.g. "
         "'transport: [udp, tcp]'"),
    ("- rate: 100\n", "t.yaml:1: a scenario is a mapping of fields (e.g. 'rate: [100, 1000]'), "
                      "not a list"),
    ("rate: 100\nmode: oneway\nrate: 200\n",
     "t.yaml:3: field 'rate': given twice (first on line 1)"),
    ("busy-loop: 1ms\nbusy_loop: 2ms\n",
     "t.yaml:2: field 'busy_loop': the same field as 'busy-loop'; give it once"),
    ("rate: []\n", "t.yaml:1: field 'rate': an empty list gives no points; give a value or a "
                   "list of values (an axis)"),
    ("rate:\n  - 100\n  - 200\n  - 100\n",
     "t.yaml:4: field 'rate': value '100' is listed twice (first on line 2)"),
    ("busy_poll: 3\n", "t.yaml:1: field 'busy_poll': must be true or false, got '3'"),
    ("rate: {fast: 1}\n", "t.yaml:1: field 'rate': must be a single value (a list makes an "
                          "axis), got {'fast': 1}"),
    ("payload:\n", "t.yaml:1: field 'payload': must be a single value (a list makes an axis), "
                   "got nothing"),
    ("repeat: 0\n", "t.yaml:1: field 'repeat': must be a whole number >= 1 (measurements of "
                    "each point), got '0'"),
    ("timeout: forever\n", "t.yaml:1: field 'timeout': must be a duration > 0 such as 60s or "
                           "5m (a point still running after it is stopped), got 'forever'"),
    ("rate: [10, 100]\nmode: oneway\nexclude:\n  - {mode: oneway}\n",
     "t.yaml:4: field 'mode': exclude names a field that is not an axis (a list) here; "
     "axes: rate"),
    ("rate: [10, 100]\nexclude:\n  - rate: 5\n",
     "t.yaml:3: field 'rate': exclude value '5' is not on the axis; allowed: 10, 100"),
    ("exclude: {rate: 5}\n", "t.yaml:1: field 'exclude': must be a list of partial points, "
                             "e.g. '- {transport: udp, payload: Array64k}'"),
    ("analysis:\n  knee: 2\n", "t.yaml:2: field 'knee': unknown analysis setting; allowed: "
                               "knee_factor, knee_loss_pct"),
    ("analysis: {knee_factor: 0}\n", "t.yaml:1: field 'knee_factor': must be a number > 0 (p99 "
                                     "must stay below period x knee_factor), got '0'"),
    ("quick: fast\n", "t.yaml:1: field 'quick': must be a mapping of the fields the quick "
                      "variant changes, e.g. 'quick: {duration: 300ms}'"),
    ("quick:\n  description: x\n",
     "t.yaml:2: field 'description': a quick variant cannot change it; allowed in quick: "
     + ", ".join([*OPTIONS, "repeat", "interleave", "exclude", "timeout"])),
    ("description: [a, b]\n", "t.yaml:1: field 'description': must be text (one line shown "
                              "by 'mwperf scenarios')"),
    ("opt: [mode]\n", "t.yaml:1: field 'opt': must be KEY=VALUE (e.g. mode=client), got "
                      "'mode'"),
    # values checked by config.build_point, reported at the line of the value
    ("rate:\n  - 100\n  - -5\n", "t.yaml:3: field 'rate': must be >= 0 (0 = as fast as "
                                 "possible), got -5"),
    ("payload: [Array1k, Array3k]\n", "t.yaml:1: field 'payload': unknown payload 'Array3k'; "
     "use a catalogue name (Array32 \u2026 PointCloud4m, see 'mwperf payloads') or a size "
     "such as 100 or 64KiB"),
    ("transport: [udp, udpx]\n", "t.yaml:1: field 'transport': unknown transport 'udpx'; "
     "allowed: udp, tcp, uds, iceoryx2, cyclonedds, fastdds, rustdds, zenoh, mqtt, foxglove, ros1, ros2, "
     "built-in"),
    ("count: 100\nduration: 1s\n", "t.yaml:1: field 'count': --count and --duration are "
                                   "mutually exclusive; give one of them"),
    ("transport: udp\npong: relay\n", "t.yaml:2: field 'pong': --pong relay: only with "
     "--transport cyclonedds or fastdds or rustdds or ros1 or ros2 (got udp); other "
     "transports use --pong agent"),
    ("executor: [single, triple]\n", "t.yaml:1: field 'executor': unknown executor 'triple'; "
                                     "allowed: single, multi, events"),
    ("busy_loop: -1ms\n", "t.yaml:1: field 'busy_loop': must be 0 or longer, got '-1ms'; use "
                          "e.g. 10s, 500ms, 2m"),
    ("mode: oneway\nsubscribers: 2\nsamples: true\n", "t.yaml:3: field 'samples': raw samples "
     "are kept only with --subscribers 1 (got --subscribers 2)"),
]


@pytest.mark.parametrize(("text", "message"), BAD, ids=[m.split(":")[1] + ":" + m.split("'")[1]
                                                         if "'" in m else m for _, m in BAD])
def test_a_bad_file_names_file_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(UsageError) as error:
        validate(tmp_path / "t.yaml", text)
    assert str(error.value).replace(str(tmp_path) + "/", "") == message
    assert error.value.exit_code == 2


def test_unknown_scenario_names_the_built_ins() -> None:
    with pytest.raises(UsageError, match=r"^SCENARIO: unknown scenario 'nosuch'; allowed: a YAML "
                                         r"file or a built-in name \(bridge-payloads, bridges, "
                                         r"busy-loop-executors, busy-loop-executors-rclpy, costs, cpu-quotas, default, "
                                         r"graphs, rate-sweep-3-topics, resilience, restarts, restarts-bridges, restarts-sub, restarts-zenohd, "
                                         r"ros1-bag-replay, ros1-rate-sweep, ros1-subscribers, ros1-three-hosts, ros2-tax, security, services, soak, "
                                         r"throughput; "
                                         r"see 'mwperf "
                                         r"scenarios'\)$"):
        load_scenario("nosuch")
    with pytest.raises(UsageError, match=r"^SCENARIO: cannot read missing\.yaml: "):
        load_scenario("missing.yaml")


def test_options_cover_every_point_flag_of_mwperf_run() -> None:
    """A flag added to 'mwperf run' for points must be registered in config.OPTIONS (and so
    become a scenario field)."""
    from mwperf.cli import CONDITION_OPTIONS, POINT_OPTIONS
    assert set(OPTIONS) == {*POINT_OPTIONS, *CONDITION_OPTIONS, "samples", "opt"}
