"""Services in graphs without running anything: servers and clients read from a graph file and
an iRobot topology, each bad input refused naming the file, node and field, their addresses and
node specs, the call edges catalogued (graph_calls, schema 9 and its migration) and reported."""

import json
from pathlib import Path

import duckdb
import pytest
from graph_support import save_graph
from test_store_support import catalogue_rows

from mwperf.errors import UsageError
from mwperf.graph.irobot import parse_irobot
from mwperf.graph.parse import parse_graph
from mwperf.graph.plan import addresses, node_specs
from mwperf.graph.services import check_transport
from mwperf.show.graph import render
from mwperf.store import schema
from mwperf.store.catalogue import connect
from mwperf.store.graph_ingest import ingest_graph

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "graph" / "services-udp.json"
GRAPH = """\
name: svc
nodes:
  - name: srv
    servers:
      - {service: /add, reply_size: 100, work: 200us}
  - name: c1
    clients:
      - {service: /add, rate: 100, size: 64}
  - name: c2
    clients:
      - {service: /add, period: 20ms, size: 32, in_flight: 2, timeout: 500ms}
"""


def test_servers_and_clients_are_read_with_their_defaults() -> None:
    graph = parse_graph(GRAPH, "svc.yaml")
    srv, c1, c2 = graph.nodes
    assert (srv.servers[0].reply_bytes, srv.servers[0].work_ns) == (100, 200_000)
    assert (c1.clients[0].period_ns, c1.clients[0].request_bytes, c1.clients[0].in_flight,
            c1.clients[0].timeout_ns) == (10_000_000, 64, 1, 1_000_000_000)
    assert (c2.clients[0].period_ns, c2.clients[0].in_flight, c2.clients[0].timeout_ns) == \
        (20_000_000, 2, 500_000_000)
    assert [(e.client, e.server) for e in graph.call_edges()] == [("c1", "srv"), ("c2", "srv")]
    plain = parse_graph(GRAPH.replace(", reply_size: 100, work: 200us", ""), "svc.yaml")
    assert (plain.nodes[0].servers[0].reply_bytes, plain.nodes[0].servers[0].work_ns) == (None, 0)


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("{service: /add, rate: 100, size: 64}", "{service: /add, size: 64}",
     "svc.yaml:8: node 'c1', client of '/add': give one of rate (Hz) or period"),
    ("{service: /add, rate: 100, size: 64}", "{service: /add, rate: 100}",
     "svc.yaml:8: node 'c1', client of '/add': size missing"),
    ("in_flight: 2", "in_flight: 0", "node 'c2', client of '/add': in_flight: '0' is not a "
     "number from 1 to 1024"),
    ("in_flight: 2", "in_flight: 1.5", "node 'c2', client of '/add': in_flight must be a whole"),
    ("timeout: 500ms", "timeout: soon", "node 'c2', client of '/add': timeout: 'soon' is not a "
     "duration"),
    ("work: 200us", "work: lots", "node 'srv', server of '/add': work: 'lots' is not a duration"),
    ("reply_size: 100", "reply_size: big", "node 'srv', server of '/add': reply_size: 'big' is "
     "not a size"),
    ("reply_size: 100", "reply: 100", "svc.yaml:5: node 'srv': server: unknown key 'reply'; "
     "allowed: service, reply_size, work"),
    ("rate: 100, size: 64", "rate: 100, size: 64, colour: red", "node 'c1': client: unknown key "
     "'colour'"),
    ("{service: /add, rate: 100, size: 64}", "{service: /sub, rate: 100, size: 64}",
     "graph 'svc' (svc.yaml): node 'c1' calls service '/sub', which no node serves "
     "(servers: /add)"),
    ("  - name: c1\n", "  - name: c1\n    servers: [{service: /add}]\n",
     "service '/add' is served by nodes 'srv' and 'c1'; one server per service"),
    ("  - name: c2\n", "  - name: c2\n    servers: [{service: /other}]\n", None),
    ("  - name: srv\n", "  - name: srv\n    copies: 2\n", "service '/add' is served by nodes "
     "'srv_1' and 'srv_2'"),
    ("{service: /add, rate: 100, size: 64}", "{service: /add, rate: 100, size: 64}\n"
     "      - {service: /add, rate: 10, size: 8}", "node 'c1' calls '/add' twice"),
])
def test_a_bad_service_is_refused_naming_file_node_and_field(old: str, new: str,
                                                             expected: str | None) -> None:
    assert old in GRAPH
    text = GRAPH.replace(old, new, 1)
    if expected is None:
        parse_graph(text, "svc.yaml")
        return
    with pytest.raises(UsageError) as caught:
        parse_graph(text, "svc.yaml")
    assert expected in str(caught.value)


def test_a_node_calling_its_own_service_is_refused() -> None:
    text = GRAPH.replace("      - {service: /add, reply_size: 100, work: 200us}\n",
                         "      - {service: /add, reply_size: 100, work: 200us}\n    clients: "
                         "[{service: /add, rate: 1, size: 1}]\n")
    with pytest.raises(UsageError, match="node 'srv' calls service '/add', which it serves"):
        parse_graph(text, "svc.yaml")


def test_a_transport_without_services_is_refused_naming_those_with() -> None:
    graph = parse_graph(GRAPH, "svc.yaml")
    with pytest.raises(UsageError) as caught:
        check_transport(graph, "foxglove", {"supported": False, "how": "no server side"},
                        ["udp", "zenoh"], None)
    assert str(caught.value) == ("--graph svc --transport foxglove: node 'srv' has services, and "
                                 "foxglove has none (no server side); transports with "
                                 "services: udp, zenoh")
    with pytest.raises(UsageError, match="node 'c1' calls '/add' with a reply_size of 100 B; "
                                         "--transport udp carries at most 90 B"):
        check_transport(graph, "udp", {"supported": True}, ["udp"], 90)
    check_transport(graph, "udp", {"supported": True}, ["udp"], 100)


def test_a_service_gets_its_servers_address_and_every_node_its_spec(tmp_path: Path) -> None:
    graph = parse_graph(GRAPH, "svc.yaml")
    assert addresses(graph, "cyclonedds", "0/mwperf", tmp_path, 0x123456).services == \
        {"/add": "0/g123456s0"}
    assert addresses(graph, "uds", None, tmp_path, 1).services == {"/add": str(tmp_path / "v0.srv")}
    zenoh = addresses(graph, "zenoh", None, tmp_path, 0x123456).services["/add"]
    assert zenoh.startswith("tcp/127.0.0.1:") and zenoh.endswith("#g123456s0")
    where = addresses(graph, "udp", None, tmp_path, 1)
    specs = node_specs(graph, where, 1, 2, 3)
    assert specs[0]["servers"] == [{"service": "/add", "id": 0, "address": where.services["/add"],
                                    "reply_bytes": 100, "work_ns": 200_000}]
    [client] = specs[2]["clients"]
    assert {k: client[k] for k in ("address", "period_ns", "request_bytes", "reply_bytes",
                                   "in_flight", "timeout_ns")} == \
        {"address": where.services["/add"], "period_ns": 20_000_000, "request_bytes": 32,
         "reply_bytes": 100, "in_flight": 2, "timeout_ns": 500_000_000}
    assert 0 <= client["phase_ns"] < 20_000_000
    assert "clients" not in specs[0] and "servers" not in specs[1]


def test_an_irobot_topology_with_clients_and_servers_is_imported() -> None:
    # iRobot's own test_architecture.json (performance_test_factory/test/files)
    topology = {"nodes": [
        {"node_name": "node_0", "publishers": [
            {"topic_name": "topic_0", "msg_type": "stamped10b", "period_ms": 10}]},
        {"node_name": "node_1", "subscribers": [{"topic_name": "topic_0",
                                                 "msg_type": "stamped10b"}],
         "servers": [{"service_name": "service_1", "srv_type": "stamped10b"}]},
        {"node_name": "node_2", "clients": [
            {"service_name": "service_1", "srv_type": "stamped10b", "period_ms": 10}]},
        {"node_name": "node_3", "clients": [
            {"service_name": "service_1", "srv_type": "stamped1kb", "freq_hz": 50}]}]}
    graph = parse_irobot(json.dumps(topology), "arch.json", "arch")
    assert graph.nodes[1].servers[0].service == "service_1"
    assert graph.nodes[1].servers[0].reply_bytes is None  # the request's size
    c2, c3 = graph.nodes[2].clients[0], graph.nodes[3].clients[0]
    assert (c2.period_ns, c2.request_bytes, c2.in_flight, c2.timeout_ns) == \
        (10_000_000, 10, 1, 1_000_000_000)
    assert (c3.period_ns, c3.request_bytes) == (20_000_000, 1024)
    assert [(e.client, e.server) for e in graph.call_edges()] == [("node_2", "node_1"),
                                                                  ("node_3", "node_1")]
    unserved = {"nodes": [topology["nodes"][2]]}
    with pytest.raises(UsageError, match="node 'node_2' calls service 'service_1', which no "
                                         "node serves"):
        parse_irobot(json.dumps(unserved), "arch.json", "arch")


def test_call_edges_are_printed_catalogued_and_migrated(tmp_path: Path) -> None:
    result = json.loads(FIXTURE.read_text())
    text = render(result)
    assert "1 services, 2 call edges" in text
    assert "/add c1 -> srv" in text and "100/100" in text
    graph_id = result["run_id"]
    ingest_graph(save_graph(tmp_path / graph_id, result))
    rows = catalogue_rows(tmp_path, "SELECT client, server, sent, answered, server_requests, "
                          "latency_p99_ns, server_time_p50_ns FROM graph_calls ORDER BY call")
    assert rows == [(c["client"], c["server"], c["sent"], c["answered"], c["server_requests"],
                     c["latency"]["p99_ns"], c["server_time"]["p50_ns"])
                    for c in result["calls"]]
    # a version 8 catalogue gains graph_calls, filled from its graph runs' results
    with duckdb.connect(str(tmp_path / "catalogue.duckdb")) as con:
        con.execute("DROP TABLE graph_calls")
        con.execute("UPDATE schema_version SET version = 8")
    with connect(tmp_path, views=False) as con:
        assert schema.version_of(con) == schema.SCHEMA_VERSION >= 9
    assert catalogue_rows(tmp_path, "SELECT count(*) FROM graph_calls") == [(2,)]
