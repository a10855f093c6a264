"""The report's ROS 2 tax section (report/tax.py) on saved synthetic results of known latencies:
each stack's p50 divided by raw Fast DDS's of the same distribution, stream and round, the
median over the rounds with the lowest and highest; never a ratio across rounds or
distributions; raw Fast DDS of Debian's library (no --opt distro) is not the tax's baseline."""

import json
from pathlib import Path
from typing import Any

from report_support import config, result, write_point

from mwperf.report import build, tax
from mwperf.report.data import load_runs
from mwperf.store import ingest_point
from mwperf.store.catalogue import connect

SWEEP = "20261129T100000Z-ros2-tax-0001"


def point(transport: str, pong: str, distro: str | None, p50_us: int, payload: int = 64
          ) -> dict[str, Any]:
    opts = [f"distro={distro}"] if distro else []
    cfg = config(transport=transport, pong=pong, opts=opts, rate=100.0, payload=str(payload),
                 payload_bytes=payload)
    return {"cfg": cfg, "values": [p50_us * 1000] * 50}


def sweep(root: Path, rounds: list[list[dict[str, Any]]]) -> None:
    """One sweep whose round r (a repetition) holds the points ``rounds[r]``, catalogued in
    measuring order as an interleaved sweep records them."""
    folder = root / SWEEP
    entries, index = [], 0
    root.mkdir(parents=True, exist_ok=True)
    with connect(root, views=False):  # one attachment for the sweep
        for rep, members in enumerate(rounds, start=1):
            for member in members:
                index += 1
                kind = member["cfg"]["transport"]
                point_id = f"20261129T1000{index:02d}Z-{kind}-roundtrip-{index:04x}"
                doc = result(point_id, member["values"], member["cfg"])
                written = write_point(folder / "points" / point_id, json.loads(json.dumps(doc)))
                entries.append({"index": index, "label": point_id, "result": f"points/{point_id}"})
                (folder / "sweep.json").write_text(json.dumps({"scenario": "ros2-tax",
                                                               "entries": entries}))
                ingest_point(written, index=index, repetition=rep)


def three_rounds(root: Path) -> None:
    # round by round (raw, rcl, rclpy): rcl/raw = 1.5, 1.2, 2.0 -> median 1.5 (a ratio of the
    # median p50s, 200/100 = 2.0, would be wrong); rclpy/raw = 3, 3, 4 -> 3.0
    sweep(root, [
        [point("fastdds", "agent", "kilted", 100), point("ros2", "agent", "kilted", 150),
         point("ros2", "relay", "kilted", 300)],
        [point("fastdds", "agent", "kilted", 200), point("ros2", "agent", "kilted", 240),
         point("ros2", "relay", "kilted", 600)],
        [point("fastdds", "agent", "kilted", 100), point("ros2", "agent", "kilted", 200),
         point("ros2", "relay", "kilted", 400)],
    ])


def by_stack(root: Path) -> dict[tuple[str, str], tax.Ratio]:
    return {(r.distro, r.stack): r for r in tax.ratios(load_runs(root, ["latest"]))}


def test_each_round_is_divided_by_its_own_raw_fast_dds(tmp_path: Path) -> None:
    root = tmp_path / "results"
    three_rounds(root)
    found = by_stack(root)
    rcl, rclpy = found[("kilted", tax.STACKS[1])], found[("kilted", tax.STACKS[2])]
    assert rcl.p50_ratios == [1.5, 1.2, 2.0]
    assert rclpy.p50_ratios == [3.0, 3.0, 4.0]
    assert found[("kilted", tax.RAW)].p50_ratios == [1.0, 1.0, 1.0]
    table = build(root, ["latest"], "markdown")
    assert ("| kilted | 64 B | 100 Hz | rcl + rmw_fastrtps_cpp | 3 | 200 µs | "
            "x1.50 (1.20\u20132.00) |") in table
    assert "| kilted | 64 B | 100 Hz | rclpy echo | 3 | 400 µs | x3.00 (3.00\u20134.00) |" in table


def test_the_html_page_has_the_section_with_a_chart_per_distribution(tmp_path: Path) -> None:
    root = tmp_path / "results"
    three_rounds(root)
    page = build(root, ["latest"])
    assert 'id="ros2-tax"' in page
    assert "ROS 2 kilted: round-trip p50 as a ratio to raw Fast DDS of kilted" in page
    assert "kilted 64 B rcl + rmw_fastrtps_cpp: p50 x1.50 of raw Fast DDS over 3 rounds" in page


def test_distributions_and_payloads_are_never_mixed(tmp_path: Path) -> None:
    root = tmp_path / "results"
    sweep(root, [[point("fastdds", "agent", "jazzy", 100), point("ros2", "agent", "jazzy", 110),
                  point("fastdds", "agent", "kilted", 200), point("ros2", "agent", "kilted", 500),
                  point("fastdds", "agent", "kilted", 1000, payload=65536),
                  point("ros2", "agent", "kilted", 1200, payload=65536)]])
    found = {(r.distro, r.payload_bytes, r.stack): r.p50_ratios
             for r in tax.ratios(load_runs(root, ["latest"]))}
    assert found[("jazzy", 64, tax.STACKS[1])] == [1.1]
    assert found[("kilted", 64, tax.STACKS[1])] == [2.5]
    assert found[("kilted", 65536, tax.STACKS[1])] == [1.2]


def test_no_baseline_in_the_round_no_ratio_and_a_note(tmp_path: Path) -> None:
    """Debian's Fast DDS (no --opt distro) is another library: not the baseline of the tax."""
    root = tmp_path / "results"
    sweep(root, [[point("fastdds", "agent", None, 100), point("ros2", "agent", "kilted", 150)]])
    found = tax.ratios(load_runs(root, ["latest"]))
    assert [(r.stack, r.p50_ratios) for r in found] == [(tax.STACKS[1], [])]
    assert "| kilted | 64 B | 100 Hz | rcl + rmw_fastrtps_cpp | 1 | 150 µs | - |" \
        in build(root, ["latest"], "markdown")
    assert "no raw Fast DDS point of the same distribution" in build(root, ["latest"])


def test_no_ros2_points_no_section(tmp_path: Path) -> None:
    root = tmp_path / "results"
    sweep(root, [[point("fastdds", "agent", "kilted", 100), point("udp", "agent", None, 50)]])
    assert tax.markdown(load_runs(root, ["latest"])) == ""
    assert 'id="ros2-tax"' not in build(root, ["latest"])


def test_distributions_are_compared_round_by_round(tmp_path: Path) -> None:
    root = tmp_path / "results"
    raw = [("jazzy", 100), ("kilted", 150), ("jazzy", 300), ("kilted", 300), ("jazzy", 200)]
    members = [point("fastdds", "agent", name, p50) for name, p50 in raw]
    sweep(root, [members[:2], members[2:4], members[4:]])  # kilted's third round is missing
    ((names, jazzy, kilted, ratio),) = tax.distributions(tax.ratios(load_runs(root, ["latest"])))
    assert names == ("jazzy", "kilted") and ratio == [1.5, 1.0]
