"""mwperf report: the HTML page and the summary formats from a catalogue of synthetic runs
whose statistics are computed from known samples, the RUN selection, the knee, the HDR curve,
the per-message downsampling (spikes kept), and problem points shown first."""

import csv
import io
import json
import re
from pathlib import Path

import pytest
from conftest import run_mwperf
from report_support import add_point, add_sweep, config, latencies

from mwperf.errors import UsageError
from mwperf.report import build
from mwperf.report.data import load_runs
from mwperf.report.distribution import curve
from mwperf.report.knee import group_knee
from mwperf.scenario.knee import ALWAYS, KNEE

SWEEP = "20261122T110000Z-rates-ab12"
SINGLE = "20261122T100000Z-udp-roundtrip-0001"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sweep of udp and tcp at three rates (tcp's 5 kHz point unsustainable), a 3-topic
    point, a failed point, and a single run with raw samples and a spike. Built once per module
    (per worker): the tests only read it."""
    root = tmp_path_factory.mktemp("report") / "results"
    points = []
    for transport, base in (("udp", 40_000), ("tcp", 60_000)):
        for rate in (100.0, 1000.0, 5000.0):
            median = base if not (transport == "tcp" and rate == 5000.0) else 400_000
            points.append((f"{SWEEP}-{transport}-{int(rate)}",
                           latencies(600, median, seed=int(rate)),
                           {"cfg": config(transport=transport, rate=rate)}))
    points.append((f"{SWEEP}-topics", latencies(300, 50_000, seed=7),
                   {"cfg": config(topics=3, rate=100.0, busy_loop_ns=1_800_000),
                    "topics": [latencies(100, 2e6 * (i + 1), seed=i) for i in range(3)]}))
    points.append((f"{SWEEP}-failed", [], {"cfg": config(transport="tcp", rate=20000.0),
                                           "status": "failed", "reason": "pong crashed"}))
    add_sweep(root, SWEEP, points)
    spiky = latencies(5000, 30_000, seed=3)
    spiky[4321] = 9_000_000
    add_point(root, SINGLE, spiky, samples=True, started_at="2026-11-22T09:00:00Z",
              warnings=[{"code": "sender-behind", "message": "fell behind", "hint": "spin"}])
    return root


def test_html_has_every_plot_with_data_and_problems_first(results: Path) -> None:
    html = build(results, [SWEEP, SINGLE])
    for name in ("latency-rate", "distribution", "timeline-seconds", "timeline-messages",
                 "loss-rate", "jitter-rate", "topics", "cpu", "rss"):
        charts = re.findall(rf'<svg class="chart" data-chart="{name}".*?</svg>', html, re.S)
        assert charts, name
        assert all('class="datum"' in c or 'class="trace' in c for c in charts), name
    assert html.index('id="attention"') < html.index('id="summary"') < html.index('data-chart')
    attention = html[html.index('id="attention"'):html.index('id="summary"')]
    assert "pong crashed" in attention and "1 point did not complete" in attention
    assert "sender-behind" in attention or "sender-behind" in html[:html.index('id="summary"')]
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "<script src" not in html and "<link rel=\"stylesheet\"" not in html


def test_knee_marked_from_known_data(results: Path) -> None:
    [run] = load_runs(results, [SWEEP], messages=False)
    tcp = [p for p in run.points if p.get("transport") == "tcp" and p.get("latency_count")]
    knee = group_knee("tcp", tcp)
    assert knee is not None and knee.verdict == KNEE and knee.rate == 1000.0
    assert knee.above is not None and knee.above.rate == 5000.0
    udp = [p for p in run.points if p.get("transport") == "udp" and p.get("topics") == 1]
    beyond = group_knee("udp", udp)
    assert beyond is not None and beyond.verdict == ALWAYS and beyond.rate == 5000.0
    assert group_knee("one rate", udp[:1]) is None
    html = build(results, [SWEEP])
    assert "knee at 1000 Hz" in html and "5000 Hz: p99" in html  # the evidence, both points
    assert "sustainable at every rate measured" in html


def test_hdr_curve_follows_the_histogram() -> None:
    points = curve([(100, 50), (200, 40), (1000, 10)])
    assert points[0] == (1.0, 100.0)
    assert (2.0, 200.0) in points  # 50 % below 200 ns
    assert points[-1] == (100.0, 1000.0)  # the maximum at 1/(1-q) = count


def test_per_message_buckets_keep_the_spike(results: Path) -> None:
    [run] = load_runs(results, [SINGLE])
    [point] = run.points
    assert 0 < len(point.messages) <= 1000
    assert max(b.max_ns for b in point.messages) == 9_000_000
    assert min(b.min_ns for b in point.messages) == point.get("latency_min_ns")


def test_summary_formats_carry_the_catalogue_numbers(results: Path) -> None:
    table = json.loads(build(results, [SINGLE], "json"))
    [row] = table["points"]
    [run] = load_runs(results, [SINGLE], messages=False)
    assert row["p99_ns"] == run.points[0].get("latency_p99_ns")
    assert row["count"] == 5000 and table["warnings"][0]["code"] == "sender-behind"
    rows = list(csv.DictReader(io.StringIO(build(results, [SWEEP], "csv"))))
    assert len(rows) == 8 and {r["status"] for r in rows} == {"complete", "failed"}
    markdown = build(results, [SWEEP, SINGLE], "markdown")
    assert markdown.count("\n| ") >= 9 + 2 and "sender-behind" in markdown


def test_run_selection_latest_prefix_and_errors(results: Path) -> None:
    [latest] = load_runs(results, ["latest"], messages=False)
    assert latest.run_id == SWEEP
    [prefixed] = load_runs(results, ["20261122T10"], messages=False)
    assert prefixed.run_id == SINGLE
    with pytest.raises(UsageError, match="matches 2 runs"):
        load_runs(results, ["2026"])
    with pytest.raises(UsageError, match="no run 'nope'"):
        load_runs(results, ["nope"])


def test_cli_writes_the_file_and_rejects_unknown_runs(results: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    done = run_mwperf("report", SWEEP, "--results", str(results), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_text().startswith("<!DOCTYPE html>")
    bad = run_mwperf("report", "nope", "--results", str(results))
    assert bad.returncode == 2 and "RUN: no run 'nope'" in bad.stderr
    fmt = run_mwperf("report", "--results", str(results), "--format", "pdf")
    assert fmt.returncode == 2 and "--format" in fmt.stderr


def test_long_series_are_bucketed_keeping_extremes() -> None:
    from mwperf.report.timeline import MAX_SECONDS, downsample
    rows = [{"t_s": t, "received": 10, "min_ns": 100, "p50_ns": 200, "p99_ns": 300,
             "max_ns": 400} for t in range(5000)]
    rows[3333].update(max_ns=9_999_999, min_ns=7)
    out = downsample(rows)
    assert len(out) <= MAX_SECONDS
    assert max(r["max_ns"] for r in out) == 9_999_999 and min(r["min_ns"] for r in out) == 7
    assert sum(r["received"] for r in out) == 50_000
    assert downsample(rows[:10]) == rows[:10]


def test_per_topic_histograms_reach_the_topic_rows(results: Path) -> None:
    [run] = load_runs(results, [SWEEP], messages=False)
    [point] = [p for p in run.points if p.get("topics") == 3]
    assert [t["topic"] for t in point.topics] == [0, 1, 2]
    medians = [t["latency_p50_ns"] for t in point.topics]
    assert medians[0] < medians[1] < medians[2]  # the topics' own samples, 2/4/6 ms
    assert all(sum(c for _, c in t["histogram"]) == 100 for t in point.topics)


def test_many_lines_are_split_into_one_chart_per_payload(tmp_path: Path) -> None:
    root = tmp_path / "results"
    points = [(f"p-{t}-{pl}-{r}", latencies(50, 40_000, seed=r),
               {"cfg": config(transport=t, payload=pl, rate=float(r))})
              for t in ("udp", "tcp", "uds", "zenoh") for pl in ("Array1k", "Struct256", "Array64k")
              for r in (100, 1000)]
    add_sweep(root, "20261122T130000Z-suite-cccc", points)
    html = build(root, ["latest"])
    charts = re.findall(r'<svg class="chart" data-chart="latency-rate".*?</svg>', html, re.S)
    assert len(charts) == 3  # one per payload, the four transports in each
    for chart in charts:
        assert chart.count('class="legend"') == 4
    assert "Struct256: response latency vs rate" in html
    curves = re.findall(r'<svg class="chart" data-chart="distribution".*?</svg>', html, re.S)
    assert len(curves) == 6 and all(c.count('class="legend"') == 4 for c in curves)


def test_commands_are_documented() -> None:
    repo = Path(__file__).resolve().parent.parent
    readme = (repo / "README.md").read_text()
    results = (repo / "docs" / "results.md").read_text()
    details = (repo / "docs" / "report.md").read_text()
    for command in ("mwperf report", "mwperf compare", "mwperf import performance-test",
                    "mwperf import ros2-performance"):
        assert command in results and command in details, command
    assert "docs/results.md" in readme and "docs/report.png" in readme and (repo / "docs" / "report.png").stat().st_size > 10_000
    helped = run_mwperf("import", "--help")
    assert "performance-test" in helped.stdout and "ros2-performance" in helped.stdout


def test_repetitions_draw_one_line_through_their_medians(tmp_path: Path) -> None:
    root = tmp_path / "results"
    points = [(f"r{rate}-{rep}", latencies(200, 40_000 * (1 + rep / 10), seed=rep),
               {"cfg": config(rate=float(rate))}) for rate in (100, 1000) for rep in range(3)]
    add_sweep(root, "20261122T140000Z-reps-dddd", points)
    [run] = load_runs(root, ["latest"], messages=False)
    from mwperf.report.groups import by_rate
    medians = by_rate(run.points, "latency_p50_ns")
    assert [x for x, _ in medians] == [100.0, 1000.0]
    at_100 = sorted(p.get("latency_p50_ns") for p in run.points if p.get("rate") == 100.0)
    assert medians[0][1] == at_100[1]
    chart = re.search(r'<svg class="chart" data-chart="latency-rate".*?</svg>',
                      build(root, ["latest"]), re.S)[0]
    [p50_line] = re.findall(r'<polyline class="trace" points="([^"]+)"', chart)
    assert len(p50_line.split()) == 2  # two rates, not six repetitions
    assert chart.count("<circle") == 6  # every repetition keeps its marker


def test_page_size_does_not_grow_with_the_samples(tmp_path: Path) -> None:
    sizes = []
    for n in (2_000, 40_000):
        root = tmp_path / f"r{n}"
        add_point(root, SINGLE, latencies(n, 30_000, seed=n), samples=True,
                  cfg=config(rate=20_000.0))
        sizes.append(len(build(root, ["latest"]).encode()))
    assert sizes[1] < 1.5 * sizes[0], sizes  # 20× the samples, about the same page


def test_a_link_outage_is_shaded_on_the_timeline(tmp_path: Path) -> None:
    from report_support import result, write_point
    from mwperf.store import ingest_point
    root = tmp_path / "results"
    document = result(SINGLE, latencies(5000, 40_000), config(rate=1000.0, warmup_ns=500_000_000))
    document["link"] = {"spec": "outage=3s+1s", "preset": None, "backend": "userspace",
                        "up": {"outage_at_ns": 3_000_000_000, "outage_ns": 1_000_000_000},
                        "down": {"outage_at_ns": 3_000_000_000, "outage_ns": 1_000_000_000},
                        "emulator": None}
    document["discovery"] = {"matched_ns": 100_000_000, "first_reply_ns": 0, "probes": 1}
    ingest_point(write_point(root / SINGLE, document))
    [run] = load_runs(root, ["latest"], messages=False)
    assert run.points[0].outage_s == pytest.approx((2.4, 3.4))  # 3 s - 0.5 s warm-up - 0.1 s
    chart = re.search(r'<svg class="chart" data-chart="timeline-seconds".*?</svg>',
                      build(root, ["latest"]), re.S)[0]
    assert chart.count('class="shade"') == 1 and "link outage 2.40–3.40 s" in chart
    received = re.search(r'<svg class="chart" data-chart="timeline-received".*?</svg>',
                         build(root, ["latest"]), re.S)[0]
    assert 'class="shade"' in received and received.count('class="datum"') == 5


def test_a_measured_outage_window_is_shaded_exactly(tmp_path: Path) -> None:
    from report_support import result, write_point
    from mwperf.store import ingest_point
    root = tmp_path / "results"
    document = result(SINGLE, latencies(5000, 40_000), config(rate=1000.0, warmup_ns=500_000_000))
    document["link"] = {"spec": "outage=3s+1s", "preset": None, "backend": "userspace",
                        "up": {"outage_at_ns": 3_000_000_000, "outage_ns": 1_000_000_000},
                        "down": {"outage_at_ns": 3_000_000_000, "outage_ns": 1_000_000_000},
                        "emulator": None}
    origin = 50_000_000_000  # the series' second 0 on CLOCK_MONOTONIC
    document["resilience"] = {"time_to_connect_ns": 1_000, "outage": {
        "start_ns": origin + 2_123_000_000, "end_ns": origin + 3_123_000_000,
        "duration_ns": 1_000_000_000, "sent": 1000, "delivered": 0, "lost": 1000,
        "last_before_ns": None, "recovery_ns": 2_000_000, "session": "survived",
        "session_timeout_ns": 5_000_000_000, "series_origin_ns": origin}}
    ingest_point(write_point(root / SINGLE, document))
    [run] = load_runs(root, ["latest"], messages=False)
    assert run.points[0].outage_s == pytest.approx((2.123, 3.123)) and run.points[0].outage_exact
    chart = re.search(r'<svg class="chart" data-chart="timeline-seconds".*?</svg>',
                      build(root, ["latest"]), re.S)[0]
    assert "link outage 2.123–3.123 s (as the link emulator applied it" in chart


def test_bridge_points_are_drawn_beside_their_direct_path(tmp_path: Path) -> None:
    from report_support import result, write_point
    from mwperf.store import ingest_point
    root = tmp_path / "results"
    sweep = root / "bridges"
    entries = []
    for index, (name, median) in enumerate((("direct", 60e6), ("mqtt-bridge", 71e6)), start=1):
        document = result(f"p{index}", latencies(500, median),
                          config(transport="mqtt", rate=100.0))
        document["bridge"] = {"name": name, "path": f"path of {name}", "halves": [],
                              "offered_msgs_per_s": 100.0, "achieved_msgs_per_s": 99.0,
                              "delivered_ratio": 0.99}
        folder = write_point(sweep / "points" / f"p{index}", document)
        entries.append({"index": index, "label": name, "result": f"points/p{index}"})
        (sweep / "sweep.json").write_text(json.dumps({"scenario": "synthetic",
                                                       "entries": entries}))
        ingest_point(folder, index=index)
    chart = re.search(r'<svg class="chart" data-chart="bridges-mqtt-Array1k".*?</svg>',
                      build(root, ["latest"]), re.S)[0]
    assert "direct" in chart and "mqtt-bridge (path of mqtt-bridge) at 100 Hz" in chart
    assert "99 % of the offered rate delivered" in chart
    bars = re.findall(r'<rect[^>]*data-tip="([^"]*)"', chart)
    assert [tip.split(" (")[0] for tip in bars] == ["direct", "mqtt-bridge"]


def test_first_screen_ranks_transports_per_payload_and_rate(tmp_path: Path) -> None:
    """The ranking from known data: per payload x rate, by p50 and by p99 separately (a
    transport with the better median but the worse tail swaps places), loss beside the entry,
    repetitions by their medians; then warnings by kind (points folded) and one knee line per
    transport."""
    from mwperf.report.data import load_runs
    from mwperf.report.ranking import knee_lines, situations
    root = tmp_path / "results"
    points = []
    for rate in (100.0, 1000.0):
        for transport, median, spread in (("udp", 40_000, 0.9), ("tcp", 50_000, 0.05),
                                          ("uds", 30_000, 0.05)):
            for rep in (1, 2):
                slow = transport == "udp" and rate == 1000.0
                points.append((f"{transport}-{int(rate)}-{rep}",
                               latencies(400, median * (30 if slow else 1), seed=rep,
                                         spread=spread),
                               {"cfg": config(transport=transport, rate=rate),
                                "lost": 4 if transport == "tcp" else 0,
                                "warnings": [{"code": "too-few-samples", "message": "few",
                                              "hint": "longer"}] if rep == 1 else []}))
    add_sweep(root, "20261122T100000Z-grid-aaaa", points)
    runs = load_runs(root, [], messages=False)
    found = situations(runs)
    assert [s.title for s in found] == ["100 Hz", "1000 Hz"]
    low = found[0]
    assert [e.name for e in low.by_p50] == ["uds", "udp", "tcp"]
    assert [e.name for e in low.by_p99] == ["uds", "tcp", "udp"]  # udp's wide tail
    tcp = next(e for e in low.by_p50 if e.name == "tcp")
    assert tcp.loss_pct == pytest.approx(100 * 4 / 404) and len(tcp.points) == 2
    assert found[1].by_p50[-1].name == "udp"
    knees = {line.name: line.knees for line in knee_lines(runs)}
    assert knees["udp"] == [("", "100 Hz")] and knees["uds"] == [("", "≥ 1000 Hz (every rate)")]
    html = build(root, [])
    first = html[:html.index('id="runs"')]  # the first screen, before the runs' metadata
    assert first.index('id="ranking-table"') < first.index('id="warnings"') < first.index(
        'id="knees"')
    assert "<details><summary><b>too-few-samples</b> at 6 points" in first
    assert '<span class="lost">0.99%</span>' in first
    single = tmp_path / "single"
    add_point(single, "20261122T100000Z-udp-roundtrip-0001", latencies(100))
    assert 'id="ranking-table"' not in build(single, [])  # nothing to rank
