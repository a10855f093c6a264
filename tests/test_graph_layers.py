"""The graph's layers join (graph/layers.py, graph/node_rows.py) on rows written by hand: each
edge joins its publisher's rows with its subscriber's by (topic, publishing node, seq) — two
copies numbering their messages alike stay apart — and a chain follows each message back
through its stage to the origin's timer, its layers adding up to the end-to-end age."""

from pathlib import Path
from typing import Any

import pytest

from mwperf.config import build_point
from mwperf.errors import UsageError
from mwperf.graph.layers import attach
from mwperf.graph.node_rows import COLUMNS, RowsError, read_node_rows
from mwperf.graph.parse import parse_graph

GRAPH = """
name: g
nodes:
  - {name: t1, publishers: [{topic: /a, rate: 100, payload: 64}]}
  - {name: t2, publishers: [{topic: /a, rate: 100, payload: 64}]}
  - {name: stage, subscribers: [{topic: /a, publish: /b}]}
  - {name: sink, subscribers: [{topic: /b}]}
chains:
  ab: {topics: [/a, /b]}
"""
HEAD = ",".join(COLUMNS)
# /a is id 0, /b id 1; t1 is node 0, t2 node 1, stage node 2
FILES = {
    # side,topic,source,seq,intended,write,send_first,send_last,recv_first,recv_last,take,callback,cause
    "t1": ["pub,0,0,0,1000,1100,1200,1200,,,,,,,"],
    "t2": ["pub,0,1,0,5000,5010,5020,5020,,,,,,,"],
    "stage": ["sub,0,0,0,,,,,1500,1500,1600,1650,,,",
              "sub,0,1,0,,,,,5300,5300,5400,5450,,,",
              "pub,1,2,0,1650,1900,2000,2000,,,,,0,0,0"],
    "sink": ["sub,1,2,0,,,,,2500,2500,2600,2700,,,"],
}


def specs() -> list[dict[str, Any]]:
    out = []
    for i, (name, pubs, subs) in enumerate([("t1", ["/a"], []), ("t2", ["/a"], []),
                                            ("stage", [], ["/a"]), ("sink", [], ["/b"])]):
        out.append({"name": name, "index": i,
                    "publishers": [{"topic": t, "id": 0} for t in pubs],
                    "subscriptions": [{"topic": t, "id": 0 if t == "/a" else 1} for t in subs]})
    return out


def result() -> dict[str, Any]:
    edges = [{"topic": "/a", "from": "t1", "to": "stage"}, {"topic": "/a", "from": "t2",
                                                              "to": "stage"},
             {"topic": "/b", "from": "stage", "to": "sink"}]
    return {"edges": edges, "chains": [{"name": "ab", "topics": ["/a", "/b"]}]}


def write_rows(tmp_path: Path, files: dict[str, list[str]] | None = None) -> dict[str, Path]:
    paths = {}
    for name, lines in (files or FILES).items():
        paths[name] = tmp_path / f"{name}.csv"
        paths[name].write_text("\n".join([HEAD, *lines]) + "\n")
    return paths


def reports() -> dict[str, dict[str, Any] | None]:
    seen = {"interposer": True, "why": None, "events": 3, "dropped": 0, "header_calls": 3,
            "rows": 1, "error": None}
    return {name: {"layers": seen} for name in FILES}


def by_name(section: dict[str, Any]) -> dict[str, int]:
    return {x["name"]: x["p50_ns"] for x in section["layers"]}


def test_each_edge_joins_its_own_publisher_s_messages(tmp_path: Path) -> None:
    out = result()
    attach(out, parse_graph(GRAPH, "g"), specs(), reports(), write_rows(tmp_path), None)
    a1, a2, b = out["edges"]
    assert by_name(a1["layers"]) == {"app_send": 100, "middleware_send": 100,
                                     "kernel_network": 300, "middleware_receive": 100,
                                     "executor_callback": 50}
    assert a1["layers"]["total"]["p50_ns"] == 650  # due time 1000 -> callback 1650
    assert a2["layers"]["total"]["p50_ns"] == 450 and a2["layers"]["split"] == 1
    # the stage's hop starts at its callback (1650): its work up to the write is app_send
    assert by_name(b["layers"])["app_send"] == 250
    assert out["layers"]["method"] == "ld_preload"


def test_a_chain_adds_its_hops_up_to_the_end_to_end_age(tmp_path: Path) -> None:
    out = result()
    attach(out, parse_graph(GRAPH, "g"), specs(), reports(), write_rows(tmp_path), None)
    chain = out["chains"][0]["layers"]
    assert chain["messages"] == chain["split"] == 1
    assert chain["total"]["p50_ns"] == 2700 - 1000  # t1's due time -> the sink's callback
    assert by_name(chain)["app_send"] == 100 + 250  # t1's lateness + the stage's work
    assert [t["topic"] for t in chain["per_topic"]] == ["/a", "/b"]


def test_without_the_interposer_every_section_says_why(tmp_path: Path) -> None:
    out = result()
    attach(out, parse_graph(GRAPH, "g"), specs(), reports(), write_rows(tmp_path),
           "libmwperf_layers.so is missing")
    assert out["layers"]["method"] == "none"
    assert all(e["layers"]["method"] == "none" and "missing" in e["layers"]["why_none"]
               for e in out["edges"])
    assert out["chains"][0]["layers"]["method"] == "none"


def test_a_transport_that_hides_its_system_calls_says_so_on_each_edge(tmp_path: Path) -> None:
    """No system call carried a message (iceoryx2's shared memory): the middleware and kernel
    layers are one, and each edge says why as a point over iceoryx2 does (layers_unseen.py)."""
    def unseen(line: str) -> str:  # the send and receive calls' cells emptied
        cells = line.split(",")
        cells[6:10] = ["", "", "", ""]
        return ",".join(cells)
    files = {name: [unseen(line) for line in lines] for name, lines in FILES.items()}
    out = result()
    attach(out, parse_graph(GRAPH, "g"), specs(), reports(), write_rows(tmp_path, files), None,
           transport="iceoryx2")
    for edge in out["edges"]:
        notes = {x["name"]: x["note"] for x in edge["layers"]["layers"] if not x["observable"]}
        assert set(notes) == {"middleware_send", "kernel_network", "middleware_receive"}, edge
        assert all(n.startswith("no system call carries the message: iceoryx2 moves it "
                                "through shared memory") for n in notes.values()), notes


def test_a_rows_file_of_another_layout_is_refused_by_name(tmp_path: Path) -> None:
    bad = tmp_path / "node.csv"
    bad.write_text("topic,seq,intended\n0,1,2\n")
    with pytest.raises(RowsError, match="node.csv: header"):
        read_node_rows(bad)


class Catalogue:
    def transports(self) -> list[str]:
        return ["udp", "cyclonedds"]

    def payloads(self) -> dict[str, int]:
        return {"Array1k": 1024}


def test_a_graph_point_takes_layers() -> None:
    cfg = build_point({"graph": "sierra_nevada", "transport": "udp", "layers": True}, Catalogue)
    assert cfg.layers and cfg.graph is not None


@pytest.mark.agent
def test_layers_on_real_hosts_are_refused_for_a_graph() -> None:
    with pytest.raises(UsageError, match="--layers: not yet for a graph on real hosts"):
        build_point({"graph": "sierra_nevada", "transport": "udp", "layers": True,
                     "host": "b=ssh://root@10.0.0.1"}, Catalogue)
