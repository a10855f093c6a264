"""``--restart NODE@T`` on a graph point (graph/restarts.py): which nodes may be restarted and
what is refused before anything starts (exit 2 naming the flag and what is allowed); and the
per-edge figures worked out from an edge's samples and the publishers' progress files."""

import struct
from pathlib import Path
from typing import Any

import pytest

from mwperf.config import build_point
from mwperf.errors import UsageError
from mwperf.graph.restarts import Restarter, restartable
from mwperf.graph.parse import parse_graph

GRAPH = """name: chain
nodes:
  - name: src
    publishers: [{topic: /a, rate: 100, payload: 64}]
  - name: mid
    subscribers: [{topic: /a, publish: /b}]
  - name: sink
    subscribers: [{topic: /b}]
  - name: flood
    publishers: [{topic: /f, rate: max, payload: 64}]
  - name: drain
    subscribers: [{topic: /f}]
"""


class Catalogue:
    def transports(self) -> list[str]:
        return ["udp", "cyclonedds", "mqtt"]

    def payloads(self) -> dict[str, int]:
        return {"Array1k": 1024}


def build(tmp_path: Path, **options: Any) -> Any:
    (tmp_path / "g.yaml").write_text(GRAPH)
    return build_point({"graph": str(tmp_path / "g.yaml"), "transport": "udp",
                        "duration": "3s", **options}, Catalogue)


def test_a_restart_implies_the_edges_samples(tmp_path: Path) -> None:
    cfg = build(tmp_path, restart=("mid@1s", "src@2s"))
    assert cfg.restarts == (("mid", 1_000_000_000), ("src", 2_000_000_000))
    assert cfg.samples  # each edge's cost comes from its raw samples
    assert restartable(cfg.graph.graph) == ["src", "mid", "sink", "drain"]


@pytest.mark.parametrize("restart, extra, expected", [
    ("nobody@1s", {}, "--restart nobody@1s: no node or daemon 'nobody' in this graph run; "
                      "restartable nodes of graph chain: src, mid, sink, drain"),
    ("mosquitto@1s", {}, "--restart mosquitto@1s: no node or daemon 'mosquitto' in this graph "
                         "run; restartable nodes of graph chain: src, mid, sink, drain"),
    ("flood@1s", {}, "--restart flood@1s: node 'flood' publishes '/f' back to back or as a "
                     "round trip (only paced publishers resume their schedule)"),
    ("mid@3s", {}, "--restart mid@3s: at or beyond the end of the measured phase (3 s)"),
    ("mid@1s", {"layers": True}, "--restart: not with --layers on a graph"),
    ("mid@1s", {"profile": True}, "--restart: not with --profile on a graph"),
    ("mid", {}, "--restart mid: expected TARGET@TIME"),
])
def test_what_cannot_be_restarted_is_refused_before_anything_starts(
        tmp_path: Path, restart: str, extra: dict[str, Any], expected: str) -> None:
    with pytest.raises(UsageError) as caught:
        build(tmp_path, restart=(restart,), **extra)
    assert str(caught.value).startswith(expected), caught.value


def test_a_graph_runs_daemons_are_restartable(tmp_path: Path) -> None:
    assert build(tmp_path, transport="cyclonedds", restart=("mid@1s",)).restarts
    cfg = build(tmp_path, transport="mqtt", restart=("mosquitto@1s",))
    assert cfg.restarts == (("mosquitto", 1_000_000_000),)
    with pytest.raises(UsageError, match="restartable nodes of graph chain: src, mid, sink, "
                                         "drain, mosquitto"):
        build(tmp_path, transport="mqtt", restart=("zenohd@1s",))


def test_two_restarts_at_one_time_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="two restarts at the same time"):
        build(tmp_path, restart=("mid@1s", "src@1s"))


def _samples(path: Path, rows: list[tuple[int, int, int]]) -> None:
    path.write_text("seq,sent_ns,x,y,recv_ns\n"
                    + "".join(f"{s},{t},0,0,{r}\n" for s, t, r in rows))


def test_a_publishers_restart_counts_what_no_process_sent_apart_from_what_was_lost(
        tmp_path: Path) -> None:
    """src (10 ms period) killed at t=1000 after sending #0..#4 (its progress file); restarted,
    it resumed at #8: #5..#7 were never sent; #4 was sent and never arrived (lost)."""
    graph = parse_graph(GRAPH, "g.yaml")
    restarter = Restarter(graph, (("src", 1),), tmp_path)
    specs = [{"name": "src", "publishers": [{"topic": "/a"}], "subscriptions": []}]
    restarter.prepare(specs, lambda n: f"node.{n}")
    base = Path(specs[0]["progress"])
    (base.parent / f"{base.name}.p0.killed-1").write_bytes(struct.pack("<QQQ", 3, 5, 0))
    samples = tmp_path / "samples"
    samples.mkdir()
    _samples(samples / "mid.a.from0.csv",
             [(0, 100, 110), (1, 200, 210), (2, 300, 310), (3, 400, 410),
              (8, 1300, 1310), (9, 1400, 1410)])
    restarter.events.append({"target": "src", "at_ns": 1, "killed_ns": 1000,
                             "started_ns": 1001, "ready_ns": 1200, "notes": []})
    reports = {"src": {"publishers": [{"topic": "/a", "sent": 2, "warmup_sent": 0,
                                       "resumed_at_seq": 8}]}}
    result = {"edges": [{"topic": "/a", "from": "src", "to": "mid", "sent": 7,
                         "samples_file": "samples/mid.a.from0.csv"}], "chains": []}
    restarter.section(result, specs, reports, samples)
    [entry] = result["restarts"]
    assert entry["edges"] == [{"topic": "/a", "from": "src", "to": "mid",
                               "first_message_after_ns": 1310, "rediscovery_ns": 310,
                               "sent_in_gap": 1, "never_sent": 3, "lost": 1,
                               "recovered": True}]
