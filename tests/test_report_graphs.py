"""Graph runs in `mwperf report` (report/graphs.py), from the catalogue only: per graph run the
graph drawn (self-contained SVG), the chains by hop, the edges worst first and the interference
with --baseline; the runs named by id, prefix, 'latest' or path (a graph folder, its
graph-result.json, a sweep folder with graph points); the edges in Markdown, CSV and JSON."""

import csv
import io
import json
import re
from pathlib import Path

import duckdb
import pytest
from graph_support import FIXTURE_ID, graph_result, graph_sweep, save_graph
from test_store_support import catalogue_rows

from mwperf.durations import format_ns
from mwperf.graph.builtin import load_graph
from mwperf.graph.drawing import COMPACT, EdgeMark, NodeMark, draw
from mwperf.graph.scale import scale
from mwperf.report import build
from mwperf.store import schema
from mwperf.store.catalogue import connect
from mwperf.store.graph_ingest import ingest_graph

SWEEP = "20261126T070000Z-graphs-ab12"
GOLDENS = Path(__file__).resolve().parent / "vectors" / "results"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A graph run alone (the fixture, 06:21) and, later, a sweep of two graph points. Built
    once per module (per worker): the tests only read it."""
    root = tmp_path_factory.mktemp("graphs") / "results"
    ingest_graph(save_graph(root / FIXTURE_ID, graph_result()))
    sweep = graph_sweep(root, SWEEP, ["g1", "g2"])
    for point in ("g1", "g2"):
        ingest_graph(sweep / "points" / point)
    return root


def section_of(page: str) -> str:
    start = page.index('<h2 id="graphs">')
    end = page.find("<h2 ", start + 1)
    return page[start:end if end > 0 else None]


def test_a_graph_run_is_drawn_with_its_chains_edges_and_interference(results: Path) -> None:
    page = build(results, [FIXTURE_ID])
    assert "Every graph run completed (1 graph run)" in page
    assert 'id="summary"' not in page  # no stream points: no empty summary table
    graphs = section_of(page)
    [svg] = re.findall(r'<svg class="graph" data-chart="graph-[^"]+".*?</svg>', graphs, re.S)
    result = graph_result()
    assert svg.count("<rect") == len(result["nodes"]) == 11
    assert svg.count("<path") == len(result["edges"]) == 8
    assert "http" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert 'data-tip="/imu: imu_driver -&gt; state_estimator; p50 55.9 µs, p99 252 µs' in svg
    assert 'stroke="#f9a825"' in svg  # /imu: p99 25 % of its 1 ms period
    chains = re.search(r'<svg class="chart" data-chart="graph-chains-[^"]+".*?</svg>', graphs,
                       re.S)
    assert chains and chains.group(0).count('class="datum"') == 7 + 2  # 7 non-zero parts, p50/p99
    table = re.search(r'<table class="graph-edges".*?</table>', graphs, re.S)
    assert table
    topics = re.findall(r"<tr><td>([^<]+)</td>", table.group(0))
    assert topics[0] == "/imu" and len(topics) == 8  # worst first: p99 / period
    interference = re.search(r'<table class="graph-interference".*?</table>', graphs, re.S)
    assert interference and "chain scan_to_wheels" in interference.group(0)
    assert "12.8 ms" in interference.group(0) and "-6.46 ms" in interference.group(0)


def test_latest_after_a_sweep_of_graph_points_shows_them(results: Path) -> None:
    page = build(results, ["latest"])
    graphs = section_of(page)
    assert graphs.count('<div class="graph-run"') == 2
    assert 'data-graph="g1"' in graphs and 'data-graph="g2"' in graphs
    assert "point 1 of graphs" in graphs
    attention = page[page.index('id="attention"'):page.index('id="runs"')]
    assert "1 point did not complete" in attention and "node &#x27;planning&#x27;" in attention
    assert build(results, [SWEEP[:20]]) .count('<div class="graph-run"') == 2  # a prefix


@pytest.mark.parametrize("which", ["folder", "file", "sweep", "results"])
def test_paths_name_graph_runs(results: Path, tmp_path: Path, which: str) -> None:
    given = {"folder": results / FIXTURE_ID, "file": results / FIXTURE_ID / "graph-result.json",
             "sweep": results / SWEEP, "results": results}[which]
    page = build(tmp_path / "elsewhere", [str(given)])
    expected = 1 if which in ("folder", "file") else 2  # a results folder: its latest run
    assert section_of(page).count('<div class="graph-run"') == expected


def test_markdown_csv_and_json_carry_the_graph_edges(results: Path) -> None:
    text = build(results, [FIXTURE_ID], "markdown")
    assert "| mobile-robot | cyclonedds | complete | 11 | 8 | 25.2% | 0 |" in text
    edges = [line for line in text.splitlines() if line.startswith(f"| {FIXTURE_ID} | /")]
    assert len(edges) == 8 and "| /imu | imu_driver | state_estimator |" in edges[0]
    assert "| scan_to_wheels | /scan -> /obstacles -> /path -> /wheel_cmd |" in text
    tables = build(results, [FIXTURE_ID], "csv").split("\n\n")
    assert len(tables) == 2  # the points' summary (none here), then the edges
    rows = list(csv.DictReader(io.StringIO(tables[1])))
    assert [r["topic"] for r in rows][0] == "/imu" and len(rows) == 8
    assert rows[0]["latency_p99_ns"] == "252031" and rows[0]["from_node"] == "imu_driver"
    document = json.loads(build(results, ["latest", FIXTURE_ID], "json"))
    assert [g["graph_id"] for g in document["graph_runs"]] == ["g1", "g2", FIXTURE_ID]
    assert len(document["graph_edges"]) == 24
    assert "result" not in document["graph_runs"][0]


def test_a_report_of_stream_points_has_no_graphs_section(tmp_path: Path) -> None:
    from report_support import add_point, latencies
    add_point(tmp_path, "20261122T100000Z-udp-roundtrip-0001", latencies(100))
    page = build(tmp_path, ["latest"])
    assert 'id="graphs"' not in page and 'id="summary"' in page
    assert build(tmp_path, ["latest"], "csv").count("\n\n") == 0


def test_a_hundred_node_graph_stays_compact_and_whole() -> None:
    graph = scale(load_graph("mont_blanc"), 5, 1.0)
    nodes = [NodeMark(n.name, "complete") for n in graph.nodes]
    edges = [EdgeMark(e.topic, e.publisher, e.subscriber, graph.period_ns(e.topic), None, None,
                      None, None) for e in graph.edges()]
    svg = draw(nodes, edges)
    assert len(nodes) == 100 and svg.count("<rect") == 100 and svg.count("<path") == len(edges)
    size = re.search(r'width="(\d+)" height="(\d+)"', svg)
    assert size  # 35 nodes in the tallest of 4 columns
    assert (int(size[1]), int(size[2])) == (2 * COMPACT.margin + 3 * COMPACT.column_w
                                            + COMPACT.node_w, 2 * COMPACT.margin + 35 * COMPACT.row_h)
    assert 'font-size="9"' in svg  # the compact layout
    assert all(f">{n.name}<" in svg or f"<title>{n.name}" in svg for n in nodes)


def test_a_graphs_call_edges_are_drawn_dashed_client_to_server() -> None:
    """graph-chain-service (a golden graph result): its call edge is a dashed path from the
    client node to the server node, read out as calls of the service; the topics' edges stay
    solid. The same from the catalogue's graph_calls row (the report's drawing)."""
    from mwperf.graph.drawing import marks
    from mwperf.report.graph_data import GraphRun
    result = json.loads((Path(__file__).parent / "vectors" / "results"
                         / "graph-chain-service.json").read_text())
    nodes, edges = marks(result)
    calls = [e for e in edges if e.call]
    assert [(c.topic, c.source, c.target) for c in calls] == [
        (c["service"], c["client"], c["server"]) for c in result["calls"]]
    svg = draw(nodes, edges)
    assert svg.count("<path") == len(result["edges"]) + len(calls)
    assert svg.count('stroke-dasharray="6 4"') == len(calls) == 1
    assert f"<title>calls of {calls[0].topic}: {calls[0].source} -&gt; {calls[0].target}" in svg
    row = {"service": "/get_map", "client": "planner_client", "server": "map_server",
           "period_ns": 20_000_000, "answered": 100, "timeouts": 2, "errors": 0,
           "latency_p50_ns": 20_000, "latency_p99_ns": 30_000}
    (drawn,) = GraphRun({"graph_id": "g"}, calls=[row]).marks()[1]
    assert (drawn.call, drawn.lost, drawn.target, drawn.p99_ns) == (True, 2, "map_server", 30_000)


def test_a_graph_runs_layers_are_catalogued_and_drawn_per_chain_and_edge(tmp_path: Path) -> None:
    """The golden graph run measured with --layers (tests/vectors/results/): its edges' and
    chain's sections land in the catalogue's layers columns as the result has them, and the
    report draws a bar per chain and edge whose segments add up to its mean latency."""
    golden = json.loads((GOLDENS / "graph-chain-service.json").read_text())
    root = tmp_path / "results"
    ingest_graph(save_graph(root / golden["run_id"], golden))
    stored = catalogue_rows(root, "SELECT layers FROM graph_edges ORDER BY edge")
    assert [json.loads(r[0]) for r in stored] == [e["layers"] for e in golden["edges"]]
    [(chain,)] = catalogue_rows(root, "SELECT layers FROM graph_chains")
    assert json.loads(chain) == golden["chains"][0]["layers"]
    page = build(root, ["latest"])
    block = page[page.index('id="graph-layers"'):]
    chart = block[:block.index("</svg>")]
    assert 'data-chart="graph-layers-0"' in chart
    for edge in golden["edges"]:
        assert f"{edge['topic']} {edge['from']} \u2192 {edge['to']}" in chart
    assert "chain raw_to_cmd" in chart
    first = golden["edges"][0]["layers"]
    assert sum(layer["share"] for layer in first["layers"]) == pytest.approx(1.0)
    assert format_ns(first["total"]["mean_ns"]) in chart  # each bar ends with its mean


def test_a_catalogue_of_version_14_gains_the_graph_layers_columns(tmp_path: Path) -> None:
    golden = json.loads((GOLDENS / "graph-chain-service.json").read_text())
    root = tmp_path / "results"
    ingest_graph(save_graph(root / golden["run_id"], golden))
    with duckdb.connect(str(root / "catalogue.duckdb")) as con:
        for table in ("graph_edges", "graph_chains"):
            con.execute(f"ALTER TABLE {table} DROP COLUMN layers")
        con.execute("UPDATE schema_version SET version = 14")
    with connect(root, views=False) as con:  # migrated on opening
        assert schema.version_of(con) == schema.SCHEMA_VERSION
    stored = catalogue_rows(root, "SELECT layers FROM graph_edges ORDER BY edge")
    assert [json.loads(r[0]) for r in stored] == [e["layers"] for e in golden["edges"]]
