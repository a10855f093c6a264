"""What reads throughput results (--mode throughput, the shared result format of issue 26):
the catalogue's throughput columns and their migration, compare's `throughput=-5%` budget and
the matching of throughput points by their settings, the report's Throughput section (table,
log-log chart, saturation points) and the sweep's one line per throughput point. All on
synthetic results (tests/report_support.py: throughput_result)."""

import json
import re
from pathlib import Path

import duckdb
import pytest
from report_support import (add_throughput_sweep, latencies, result, throughput_result,
                            write_point)
from test_store_support import catalogue_rows

from mwperf.compare import compare, render
from mwperf.compare.budget import parse_budget, resolve
from mwperf.errors import UsageError
from mwperf.report import build
from mwperf.scenario.digest import digest, throughput_line
from mwperf.store import ingest_point, schema
from mwperf.store.catalogue import connect
from mwperf.result.load import as_stream, parse_result

SIZES = (64, 1024, 65536, 1048576, 4194304)


def add(root: Path, run_id: str, **options: object) -> Path:
    folder = write_point(root / run_id, throughput_result(run_id, **options))  # type: ignore[arg-type]
    ingest_point(folder)
    return folder


# --- the catalogue -----------------------------------------------------------------------------

def test_a_throughput_point_fills_the_throughput_columns(tmp_path: Path) -> None:
    root = tmp_path / "r"
    add(root, "20261126T100000Z-tcp-throughput-0001", transport="tcp", payload_bytes=65536,
        msgs_per_s=20_000, delivery="reliable", subscribers=4, loss_pct=0.0, blocked_s=0.5)
    plain = "20261126T100100Z-udp-roundtrip-0002"
    ingest_point(write_point(root / plain, result(plain, latencies(100))))
    rows = catalogue_rows(root, "SELECT point_id, mode, subscribers, delivery, offered_per_s, "
                                "msgs_per_s, payload_bytes_per_s, sent_per_s, loss_pct, "
                                "blocked_s, in_send_s, sending_s, refused, checked_every, "
                                "pub_cpu_per_msg_us, sub_cpu_per_mb_ms, wire_bytes_per_s "
                                "FROM points ORDER BY point_id")
    tp, rt = rows
    assert tp[1:5] == ("throughput", 4, "reliable", None)
    assert tp[5] == pytest.approx(20_000) and tp[6] == pytest.approx(20_000 * 65536)
    assert tp[7] == pytest.approx(5_000)  # the publisher's accepted rate (one stream)
    assert tp[8:14] == (0.0, 0.5, 1.2, 2.0, 0, 1)
    assert tp[14] == pytest.approx(1e6 / 40_000 * 4) and tp[15] > 0 and tp[16] is None
    assert rt[1:5] == ("roundtrip", 1, None, None)  # every point has its subscribers
    assert rt[6] == pytest.approx(100 * 1024) and rt[7] is None and rt[9] is None


def test_a_throughput_points_loss_is_the_publishers_count(tmp_path: Path) -> None:
    root = tmp_path / "r"
    add(root, "20261126T100000Z-udp-throughput-0001", loss_pct=12.5)
    assert catalogue_rows(root, "SELECT loss_pct FROM points") == [(12.5,)]


def test_a_version_9_catalogue_gains_the_throughput_columns(tmp_path: Path) -> None:
    root = tmp_path / "r"
    plain = "20261126T100100Z-udp-oneway-0002"
    doc = result(plain, latencies(100))
    doc["config"].update(mode="oneway", subscribers=3)
    ingest_point(write_point(root / plain, doc))
    with duckdb.connect(str(root / "catalogue.duckdb")) as con:
        for column, _ in schema.THROUGHPUT_COLUMNS:
            con.execute(f"ALTER TABLE points DROP COLUMN {column}")
        con.execute("UPDATE schema_version SET version = 9")
    with connect(root, views=False) as con:
        assert schema.version_of(con) == schema.SCHEMA_VERSION >= 10
    rows = catalogue_rows(root, "SELECT subscribers, payload_bytes_per_s, delivery, blocked_s "
                                "FROM points")
    assert rows == [(3, pytest.approx(100 * 1024), None, None)]


# --- compare -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "relative", "absolute"), [
    ("-5%", 0.05, None), ("5%", 0.05, None), ("- 5 %", 0.05, None), ("-1000", None, 1000.0)])
def test_a_throughput_budget_is_a_fall(text: str, relative: float | None,
                                       absolute: float | None) -> None:
    budget = parse_budget("throughput", text, "--budget")
    assert (budget.relative, budget.absolute) == (relative, absolute)
    if relative:
        assert not budget.exceeded(100_000, 95_001) and budget.exceeded(100_000, 94_000)
        assert not budget.exceeded(100_000, 200_000)  # more is never over budget


@pytest.mark.parametrize(("metric", "text", "said"), [
    ("throughput", "+5%", "throughput gets worse by falling: write -5%"),
    ("throughput", "-5pp", "percentage points (pp) apply to loss"),
    ("throughput", "-fast", "allowed: -N% (how far below BASE, e.g. -5%)"),
    ("p99", "-10%", "budgets say how much worse (higher) NEW may be: write +10%"),
])
def test_a_budget_in_the_wrong_direction_is_a_usage_error(metric: str, text: str,
                                                          said: str) -> None:
    with pytest.raises(UsageError) as error:
        parse_budget(metric, text, "--budget")
    assert said in str(error.value) and str(error.value).startswith("--budget: ")


def sweep(root: Path, name: str, scale: float = 1.0, **extra: object) -> Path:
    """udp best-effort and tcp reliable at 1 KiB and 64 KiB, one subscriber and four."""
    points = []
    for transport, delivery in (("udp", "best-effort"), ("tcp", "reliable")):
        for subscribers in (1, 4):
            for size in (1024, 65536):
                rate = 200_000 * scale / (1 + size / 4096) * subscribers
                points.append(dict(point_id=f"{name}-{transport}-{subscribers}-{size}",
                                   transport=transport, delivery=delivery,
                                   subscribers=subscribers, payload_bytes=size,
                                   msgs_per_s=rate, **extra))
    return add_throughput_sweep(root, name, points)


def test_compare_holds_delivered_msgs_per_s_to_the_throughput_budget(tmp_path: Path) -> None:
    root = tmp_path / "r"
    sweep(root, "20261126T100000Z-base")
    sweep(root, "20261126T110000Z-slower", scale=0.9)  # 10 % fewer messages at every point
    sweep(root, "20261126T120000Z-same", scale=0.97)
    budgets = resolve(("throughput=-5%",), None)
    slower = compare(root, "20261126T100000Z-base", "20261126T110000Z-slower", budgets)
    rows = [r for r in slower.rows if r.metric == "throughput"]
    assert len(rows) == 8  # each point its own: matched by transport, size, delivery, subscribers
    assert {r.verdict for r in rows} == {"regression"} and slower.exit_code == 1
    assert all(r.delta_pct == pytest.approx(-10, abs=0.01) for r in rows)
    assert {r.config for r in rows} >= {"udp throughput max 1024 (1 KiB) best-effort 4 "
                                        "subscribers", "tcp throughput max 65536 (64 KiB)"}
    same = compare(root, "20261126T100000Z-base", "20261126T120000Z-same", budgets)
    assert {r.verdict for r in same.rows if r.metric == "throughput"} == {"ok"}
    faster = compare(root, "20261126T110000Z-slower", "20261126T100000Z-base", budgets)
    assert {r.verdict for r in faster.rows if r.metric == "throughput"} <= {"ok", "better"}
    text = render(slower)
    assert re.search(r"\n\S.*? throughput\s+1\.6e\+05 msgs/s\s+1\.44e\+05 msgs/s\s+"
                     r"-1\.6e\+04 msgs/s \(-10\.0 %\)\s+-5%\s+REGRESSION", text), text
    data = json.loads(render(slower, "json"))
    assert {r["budget"] for r in data["rows"] if r["metric"] == "throughput"} == {"-5%"}


def test_throughput_is_tested_over_the_seconds_it_delivered(tmp_path: Path) -> None:
    """Eight whole seconds a side (the ninth, partial, is left out): a fall of 10 % in every
    second is a regression; one bad second of eight pulls the rate 9 % down, over the budget,
    but the test over the seconds calls it noise."""
    root = tmp_path / "r"
    steady = [100_000, 101_000, 99_000, 100_500, 99_500, 100_200, 99_800, 100_000, 50_000]
    fallen = [v * 0.9 for v in steady]
    one_bad = [100_000, 101_000, 99_000, 100_500, 20_000, 100_200, 99_800, 100_000, 50_000]
    for run_id, seconds in (("20261126T100000Z-a", steady), ("20261126T110000Z-b", fallen),
                            ("20261126T120000Z-c", one_bad)):
        add(root, run_id, per_second=[int(v) for v in seconds], seconds=len(seconds))
    budgets = resolve(("throughput=-5%",), None)
    fell = compare(root, "20261126T100000Z-a", "20261126T110000Z-b", budgets)
    row = next(r for r in fell.rows if r.metric == "throughput")
    assert row.verdict == "regression" and "8 vs 8 whole seconds" in row.method
    dip = compare(root, "20261126T100000Z-a", "20261126T120000Z-c", budgets)
    row = next(r for r in dip.rows if r.metric == "throughput")
    assert row.verdict == "noise" and row.p_value is not None and row.p_value > 0.05


def test_only_throughput_points_have_a_throughput_row(tmp_path: Path) -> None:
    root = tmp_path / "r"
    for run_id in ("20261126T100000Z-rt-a", "20261126T110000Z-rt-b"):
        ingest_point(write_point(root / run_id, result(run_id, latencies(500))))
    done = compare(root, "20261126T100000Z-rt-a", "20261126T110000Z-rt-b",
                   resolve(("throughput=-5%",), None))
    assert "throughput" not in {r.metric for r in done.rows}


def test_a_different_subscriber_count_or_delivery_is_not_the_same_point(tmp_path: Path) -> None:
    root = tmp_path / "r"
    add(root, "20261126T100000Z-a", subscribers=1)
    add(root, "20261126T110000Z-b", subscribers=4)
    add(root, "20261126T120000Z-c", delivery="reliable")
    add(root, "20261126T130000Z-d", offered_per_s=50_000.0)
    for other in ("20261126T110000Z-b", "20261126T120000Z-c", "20261126T130000Z-d"):
        with pytest.raises(UsageError, match="subscribers"):
            compare(root, "20261126T100000Z-a", other, resolve((), None))


# --- the report --------------------------------------------------------------------------------

def curve(transport: str, best: float, knee: int) -> list[float]:
    """Bytes/s per size of SIZES: growing with the size up to ``knee``, flat (best) after."""
    return [best * min(1.0, size / knee) for size in SIZES]


def report_sweep(root: Path) -> Path:
    points = []
    for transport, delivery, best, knee in (("udp", "best-effort", 2e9, 65536),
                                            ("tcp", "reliable", 4e9, 1048576)):
        for size, bps in zip(SIZES, curve(transport, best, knee)):
            points.append(dict(point_id=f"p-{transport}-{size}", transport=transport,
                               delivery=delivery, payload_bytes=size, msgs_per_s=bps / size,
                               blocked_s=0.25 if delivery == "reliable" else 0.0))
    return add_throughput_sweep(root, "20261126T100000Z-throughput", points)


def test_the_report_has_a_throughput_section_with_the_saturation_points(tmp_path: Path) -> None:
    root = tmp_path / "r"
    report_sweep(root)
    page = build(root, ["latest"])
    assert '<h2 id="throughput">Throughput: what each middleware carries</h2>' in page
    chart = re.search(r'<svg class="chart" data-chart="throughput".*?</svg>', page).group(0)
    assert chart.count('class="trace"') == 2  # one line per transport + delivery
    assert chart.count('class="datum"') == 2 * len(SIZES) + 2  # every size, and two ◆
    assert 'data-tip="udp best-effort saturates at 64 KiB: 2 GB/s (best 2 GB/s)"' in chart
    assert 'data-tip="tcp reliable saturates at 1 MiB: 4 GB/s (best 4 GB/s)"' in chart
    assert ">4 MiB</text>" in chart and ">1 GB/s</text>" in chart  # log axes, decades
    table = re.search(r'<table class="throughput">.*?</table>', page).group(0)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in
             re.findall(r"<tr>(.*?)</tr>", table)[1:]]
    assert len(cells) == 10
    udp64k = next(c for c in cells if c[1] == "udp" and c[2] == "64 KiB")
    assert udp64k[3:8] == ["best-effort", "1", "max", "30,517", "2000"]
    assert udp64k[12].startswith("\u25c6 saturates here")
    tcp = [c for c in cells if c[1] == "tcp"]
    assert [c[12].startswith("\u25c6") for c in tcp] == [False, False, False, True, False]
    assert {c[9] for c in tcp} == {"12.5"}  # 0.25 s of 2 s sending held back


def test_many_lines_split_the_chart_by_delivery_and_subscribers(tmp_path: Path) -> None:
    root = tmp_path / "r"
    points = [dict(point_id=f"p-{t}-{d}-{n}-{size}", transport=t, delivery=d, subscribers=n,
                   payload_bytes=size, msgs_per_s=1e5)
              for t in ("udp", "tcp", "uds") for d in ("reliable", "best-effort")
              for n in (1, 4) for size in (64, 1024)]
    add_throughput_sweep(root, "20261126T100000Z-many", points)
    page = build(root, ["latest"])
    names = re.findall(r'data-chart="(throughput[^"]*)"', page)
    assert names == ["throughput-reliable-1", "throughput-reliable-4",
                     "throughput-best-effort-1", "throughput-best-effort-4"]


def test_markdown_and_json_reports_carry_the_throughput_table(tmp_path: Path) -> None:
    root = tmp_path / "r"
    report_sweep(root)
    text = build(root, ["latest"], "markdown")
    assert "| # | transport | payload | delivery | subscribers | offered | msgs/s | MB/s |" in text
    assert "- udp best-effort: 64 KiB (2 GB/s; best 2 GB/s)" in text
    assert "- tcp reliable: 1 MiB (4 GB/s; best 4 GB/s)" in text
    rows = json.loads(build(root, ["latest"], "json"))["throughput"]
    assert len(rows) == 10 and sum(r["saturation"] for r in rows) == 2
    assert {r["payload_bytes"] for r in rows if r["saturation"]} == {65536, 1048576}


def test_a_report_without_throughput_points_has_no_throughput_section(tmp_path: Path) -> None:
    root = tmp_path / "r"
    run_id = "20261126T100000Z-udp-roundtrip-0001"
    ingest_point(write_point(root / run_id, result(run_id, latencies(100))))
    assert 'id="throughput"' not in build(root, ["latest"])
    assert "saturat" not in build(root, ["latest"], "markdown").lower()


# --- the sweep's line --------------------------------------------------------------------------

def test_a_throughput_point_leaves_one_line_in_the_sweep(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    from mwperf.roles import ROLES
    if "throughput" not in ROLES:  # the mode's roles are the one-way ones (the lead's part)
        monkeypatch.setitem(ROLES, "throughput", ROLES["oneway"])
    doc = throughput_result("p", transport="zenoh", payload_bytes=1048576, msgs_per_s=1500,
                            subscribers=4, loss_pct=0.25, blocked_s=0.5,
                            offered_per_s=2000.0)
    line = throughput_line(doc)
    assert line == ("delivered 1.5k msgs/s, 1573 MB/s (\u00d74 subscribers) of 2k msgs/s "
                    "offered, loss 0.25%, sender blocked 25.0% of its sending time")
    assert digest(as_stream(parse_result(doc, "p")), "points/p").throughput == line
    assert throughput_line(result("q", latencies(10))) is None
    assert digest(as_stream(parse_result(result("q", latencies(10)), "q")),
                  None).throughput is None
