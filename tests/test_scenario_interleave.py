"""``interleave: true``: a scenario's repetitions run round by round (repetition r of every point
before repetition r+1 of any), in file order within a round, numbered in that order; a value
other than true/false names the file, the line and the field (exit 2)."""

from pathlib import Path

import pytest
from scenario_support import validate

from mwperf.errors import UsageError
from mwperf.scenario import load_scenario

TEXT = """\
payload: [64, 1KiB]
transport: [udp, tcp]
repeat: 3
interleave: {value}
"""


def test_rounds_come_one_after_the_other(tmp_path: Path) -> None:
    _, points, _ = validate(tmp_path / "x.yaml", TEXT.format(value="true"))
    order = [(p.repetition, p.options["payload"], p.options["transport"]) for p in points]
    assert order == [(rep, pl, t) for rep in (1, 2, 3) for pl in ("64", "1KiB")
                     for t in ("udp", "tcp")]
    assert [p.index for p in points] == list(range(1, 13))
    assert points[4].label() == "udp roundtrip 1000 Hz 64 B (rep 2/3)"


def test_without_it_each_point_repeats_in_place(tmp_path: Path) -> None:
    _, points, _ = validate(tmp_path / "x.yaml", TEXT.format(value="false"))
    assert [p.repetition for p in points[:3]] == [1, 2, 3]
    assert [p.options["transport"] for p in points[:3]] == ["udp"] * 3


def test_a_bad_value_names_the_field(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as error:
        validate(tmp_path / "x.yaml", TEXT.format(value="3"))
    assert str(error.value) == (f"{tmp_path}/x.yaml:4: field 'interleave': must be true or "
                                "false (true: repetition r of every point before repetition r+1 "
                                "of any), got '3'")
    assert error.value.exit_code == 2


def test_the_ros2_tax_scenario_interleaves_its_rounds() -> None:
    scenario = load_scenario("ros2-tax")
    assert scenario.interleave and scenario.repeat == 5
    assert load_scenario("ros2-tax", quick=True).interleave
