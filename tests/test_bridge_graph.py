"""A bridge in a graph without running one (graph/bridge_sides.py, docs/bridges.md "On graphs"):
which half each node meets, the addresses each side's nodes get, what a bridged graph cannot be
(usage errors before anything starts), and the section's rates over the crossing edges. End to
end through real mosquitto brokers: test_bridges_graph_e2e.py."""

from pathlib import Path
from typing import Any

import pytest

from bridged_graph import TWO_SIDES
from mwperf.bridges.run import crossing_section
from mwperf.config import build_point
from mwperf.errors import UsageError
from mwperf.graph.bridge_sides import crossing, sided, sides
from mwperf.graph.parse import parse_graph
from mwperf.graph.plan import addresses
from mwperf.show.details import bridge as bridge_line

class Catalogue:
    def transports(self) -> list[str]:
        return ["udp", "mqtt", "cyclonedds"]

    def payloads(self) -> dict[str, int]:
        return {"Array1k": 1024}


def build(tmp_path: Path, text: str, **options: Any) -> Any:
    (tmp_path / "g.yaml").write_text(text)
    return build_point({"graph": str(tmp_path / "g.yaml"), "transport": "mqtt", **options},
                       Catalogue)


def test_nodes_on_b_meet_bridge_b_and_every_other_node_bridge_a() -> None:
    graph = parse_graph(TWO_SIDES, "g.yaml")
    assert sides(graph) == {"robot": "a", "base": "b", "local": "a"}
    assert sorted(crossing(graph)) == [("/cmd", "base", "robot"), ("/state", "robot", "base")]


def test_each_side_subscribes_and_publishes_at_its_own_broker(tmp_path: Path) -> None:
    graph = parse_graph(TWO_SIDES, "g.yaml")
    where = sided(lambda at: addresses(graph, "mqtt", at, tmp_path, 0xABC),
                  "127.0.0.1:1001", "127.0.0.1:2002", sides(graph))
    assert where.listen[("base", "/state")].startswith("127.0.0.1:2002/")
    assert where.listen[("local", "/state")].startswith("127.0.0.1:1001/")
    assert where.listen[("robot", "/cmd")].startswith("127.0.0.1:1001/")
    # one topic, one name on both brokers (the bridge carries it by name)
    assert where.listen[("base", "/state")].split("/", 1)[1] == \
        where.listen[("local", "/state")].split("/", 1)[1]
    assert [a.split("/")[0] for a in where.outlet("robot", "/state")] == ["127.0.0.1:1001"]
    assert [a.split("/")[0] for a in where.outlet("base", "/cmd")] == ["127.0.0.1:2002"]


def test_a_bridged_graph_point_is_built_and_direct_takes_any_graph(tmp_path: Path) -> None:
    point = build(tmp_path, TWO_SIDES, bridge="mqtt-bridge")
    assert point.bridge == "mqtt-bridge" and point.graph.graph.name == "two-sides"
    assert build_point({"graph": "sierra_nevada", "transport": "udp", "bridge": "direct"},
                       Catalogue).bridge == "direct"


@pytest.mark.parametrize(("text", "options", "message"), [
    (TWO_SIDES, {"bridge": "zenoh-ros2dds", "transport": "cyclonedds"},
     "--graph two-sides --bridge zenoh-ros2dds: not yet on graphs"),
    (TWO_SIDES.replace("host: b", "host: cloud"), {"bridge": "mqtt-bridge"},
     "--graph two-sides --bridge mqtt-bridge: node 'base' is on host 'cloud'; a bridged "
     "graph's nodes are on a, ga, b, gb"),
    (TWO_SIDES.replace("host: b", "host: a"), {"bridge": "mqtt-bridge"},
     "--graph two-sides --bridge mqtt-bridge: no topic crosses the bridge"),
    (TWO_SIDES, {"bridge": "mqtt-bridge", "transport": "udp"},
     "--bridge mqtt-bridge --transport udp: mqtt-bridge does not carry udp"),
    (TWO_SIDES + "  - name: caller\n    clients: [{service: /svc, rate: 10, size: 64}]\n"
     "  - name: answerer\n    host: b\n    servers: [{service: /svc}]\n",
     {"bridge": "mqtt-bridge"}, "--graph two-sides --bridge mqtt-bridge: not with services yet"),
])
def test_what_a_bridged_graph_cannot_be_is_a_usage_error(tmp_path: Path, text: str,
                                                          options: dict[str, Any],
                                                          message: str) -> None:
    with pytest.raises(UsageError) as error:
        build(tmp_path, text, **options)
    assert str(error.value).startswith(message), str(error.value)
    assert error.value.exit_code == 2


def edge(topic: str, src: str, dst: str, offered: float | None, achieved: float) -> dict[str, Any]:
    return {"topic": topic, "from": src, "to": dst, "offered_per_s": offered,
            "achieved_per_s": achieved}


def test_the_section_sums_the_crossing_edges_only() -> None:
    graph = parse_graph(TWO_SIDES, "g.yaml")
    edges = [edge("/state", "robot", "base", 100.0, 90.0), edge("/cmd", "base", "robot", 50.0,
                                                                 50.0),
             edge("/state", "robot", "local", 100.0, 10.0)]  # on one side: not the bridge's
    found = crossing_section(graph, edges)
    assert found["offered_msgs_per_s"] == 150.0 and found["achieved_msgs_per_s"] == 140.0
    assert found["delivered_ratio"] == round(140 / 150, 4)
    assert [(e["topic"], e["to"]) for e in found["crossing"]] == [("/state", "base"),
                                                                  ("/cmd", "robot")]
    line = bridge_line({"bridge": {"name": "mqtt-bridge", "path": "p", **found}})
    assert "delivered 140 of 150 msg/s offered (93.3 %) over the 2 edges crossing it " \
        "(/state robot -> base, /cmd base -> robot)" in line
    # a saturating crossing edge has no offered rate: nothing to hold the bridge to
    edges[1]["offered_per_s"] = None
    unknown = crossing_section(graph, edges)
    assert unknown["offered_msgs_per_s"] is None and unknown["delivered_ratio"] is None
