"""The report's "Where the time goes" section (issue 27): a stacked horizontal bar per
configuration (mean share × mean latency per layer, in the result's order, labelled), each
point's layers by percentile, a table of p50/p99/share; shared memory's unobservable layers
not drawn and said so; repetitions pooled; Markdown and JSON carry the table. All on synthetic
results (tests/layers_support.py)."""

import json
import re
from pathlib import Path

import pytest
from layers_support import none_section, section
from report_support import config, latencies, result, write_point

from mwperf.durations import format_ns
from mwperf.report import build
from mwperf.report.layers import curve
from mwperf.store import ingest_point

UDP = "20261126T100000Z-udp-roundtrip-0001"
SHM = "20261126T100100Z-iceoryx2-roundtrip-0002"
NONE = "20261126T100200Z-zenoh-roundtrip-0003"
PLAIN = "20261126T100300Z-tcp-roundtrip-0004"


def add(root: Path, run_id: str, transport: str, layers: object = ...,
        **changes: object) -> dict:
    document = result(run_id, latencies(100), config(transport=transport, **changes))
    if layers is not ...:
        document["layers"] = layers
    ingest_point(write_point(root / run_id, document))
    return document


def collection(root: Path) -> dict[str, dict]:
    """Four single points: udp split over a link, iceoryx2 (shared memory), zenoh where
    nothing could be observed, tcp without --layers."""
    return {"udp": add(root, UDP, "udp", section(link=True))["layers"],
            "shm": add(root, SHM, "iceoryx2", section(shm=True, seed=7))["layers"],
            "none": add(root, NONE, "zenoh", none_section("seccomp forbids LD_PRELOAD")),
            "plain": add(root, PLAIN, "tcp")}


def found(pattern: str, text: str) -> str:
    match = re.search(pattern, text, re.S)
    assert match is not None, pattern
    return match.group(0)


def stack(page: str) -> str:
    return found(r'<svg class="chart" data-chart="layers-stack".*?</svg>', page)


def test_a_stacked_bar_per_point_of_its_layers_mean_times(tmp_path: Path) -> None:
    root = tmp_path / "r"
    layers = collection(root)
    page = build(root, [UDP, SHM, NONE, PLAIN])
    assert '<h2 id="layers">Where the time goes (per-layer latency)</h2>' in page
    chart = stack(page)
    segments = re.findall(r'<rect class="datum"[^>]*data-tip="([^"]*)"', chart)
    assert len(segments) == 5 + 3  # udp: all five; iceoryx2: app, executor, middleware+transport
    udp_total = layers["udp"]["total"]["mean_ns"]
    for layer, tip in zip(layers["udp"]["layers"], segments[:5]):
        value = layer["share"] * udp_total
        assert tip.startswith("udp\n") and f"{layer['label']}: {format_ns(value)}" in tip
    assert [t.split("\n")[1].split(":")[0] for t in segments[5:]] == [
        "sender app \u2192 middleware", "executor and callback",
        "middleware and transport, not split"]
    widths = [float(w) for w in re.findall(r'<rect class="datum"[^>]*width="([0-9.]+)"', chart)]
    assert widths[2] == pytest.approx(max(widths[:5]))  # kernel and network is the longest
    assert f">{format_ns(udp_total)}</text>" in chart  # the bar's total written after it
    assert chart.count('class="datum"') == 8  # zenoh (none) and tcp (no --layers): no bar


def test_each_point_has_its_layers_by_percentile(tmp_path: Path) -> None:
    root = tmp_path / "r"
    collection(root)
    page = build(root, [UDP, SHM, NONE, PLAIN])
    charts = re.findall(r'<svg class="chart" data-chart="layers-distribution".*?</svg>', page, re.S)
    assert len(charts) == 2
    assert charts[0].count('class="trace"') == 5 + 1  # five layers and the measured latency
    assert charts[1].count('class="trace"') == 3 + 1
    assert "stroke-dasharray" in charts[0]  # the measured latency dashed


def test_the_table_says_which_layers_could_not_be_seen_and_which_points_not_split(
        tmp_path: Path) -> None:
    root = tmp_path / "r"
    layers = collection(root)
    page = build(root, [UDP, SHM, NONE, PLAIN])
    table = found(r'<table class="layers">.*?</table>', page)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in
             re.findall(r"<tr>(.*?)</tr>", table)[1:]]
    assert len(cells) == 3  # tcp ran without --layers
    send = layers["udp"]["layers"][1]
    assert cells[0][4] == (f"{format_ns(send['p50_ns'])} / {format_ns(send['p99_ns'])} "
                           f"({100 * send['share']:.0f} %)")
    assert cells[1][4] == "not observable" and cells[1][2] == "1,000 of 1,000"
    assert "shared memory: no system call carries the message" in table
    assert cells[2][2] == "none: seccomp forbids LD_PRELOAD"
    assert ("1 point measured with --layers could not be split: seccomp forbids LD_PRELOAD"
            in page)


def test_repetitions_are_pooled_into_one_bar(tmp_path: Path) -> None:
    root = tmp_path / "r"
    sweep = root / "20261126T110000Z-sweep"
    entries = []
    sections = [section(seed=s, kind="oneway") for s in (1, 2, 3)]
    for i, sec in enumerate(sections, start=1):
        point_id = f"p{i}"
        document = result(point_id, latencies(100), config(mode="oneway"))
        document["layers"] = sec
        folder = write_point(sweep / "points" / point_id, document)
        entries.append({"index": 1, "label": point_id, "result": f"points/{point_id}"})
        (sweep / "sweep.json").write_text(json.dumps({"scenario": "s", "entries": entries}))
        ingest_point(folder, index=1, repetition=i)
    chart = stack(build(root, ["latest"]))
    tips = re.findall(r'<rect class="datum"[^>]*data-tip="([^"]*)"', chart)
    assert len(tips) == 5 and "(3 repetitions)" in tips[0]
    total = sum(s["total"]["mean_ns"] for s in sections) / 3
    share = sum(s["layers"][2]["share"] for s in sections) / 3
    assert f"kernel and network: {format_ns(share * total)}" in tips[2]


def test_markdown_and_json_carry_the_layers(tmp_path: Path) -> None:
    root = tmp_path / "r"
    layers = collection(root)
    text = build(root, [UDP, SHM, NONE, PLAIN], "markdown")
    assert "Where the time goes (per layer: p50 / p99" in text
    assert "| # | point | split | sender app \u2192 middleware | middleware send path |" in text
    rows = json.loads(build(root, [UDP, SHM, NONE, PLAIN], "json"))["layers"]
    assert [r["method"] for r in rows] == ["ld_preload", "ld_preload", "none"]
    assert rows[0]["layers"]["kernel_network"]["p50_ns"] == layers["udp"]["layers"][2]["p50_ns"]
    assert rows[1]["layers"]["middleware_send"]["observable"] is False


def test_a_report_without_layers_has_no_such_section(tmp_path: Path) -> None:
    root = tmp_path / "r"
    add(root, PLAIN, "tcp")
    assert 'id="layers"' not in build(root, ["latest"])
    assert "Where the time goes" not in build(root, ["latest"], "markdown")


def test_the_percentile_curve_puts_the_maximum_at_the_split_count() -> None:
    sec = section(n=1000)
    points = curve(sec, sec["total"]["q_ns"])
    assert points[0] == (1.0, float(sec["total"]["q_ns"][0]))
    assert points[-1] == (1000.0, float(sec["total"]["max_ns"]))
    assert [x for x, _ in points] == sorted(x for x, _ in points)

