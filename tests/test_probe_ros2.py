"""The ROS 2 probe without DDS: names (probe/ros2_names.py), the agent's log (ros2_log.py) read
from a canned log (tests/fixtures/probe_ros2/agent-log.txt: a talker, a lidar whose /scan a
reliable listener cannot get, a /map the listener asks transient-local of, a service, a plain
DDS topic, a type the agent could not subscribe to), the document (ros2_document.py), its text
(render_ros2.py), and the catalogue and report (store/probes.py, report/probes.py)."""

import json
from pathlib import Path

import duckdb
import pytest

from mwperf.errors import UsageError
from mwperf.probe.render_ros2 import render_ros2
from mwperf.probe.ros2_document import Ros2ProbeResult, Ros2Request, build
from mwperf.probe.ros2_log import parse, read_log
from mwperf.probe.ros2_names import dds_topic_of, node_name, ros_topic, ros_type, service_of
from mwperf.report import build as build_report
from mwperf.store import schema
from mwperf.store.catalogue import connect
from mwperf.store.probes import probe_rows, save_probe

LOG = Path(__file__).parent / "fixtures" / "probe_ros2" / "agent-log.txt"
DISCOVERED = 1_795_000_003_000_000_000
LIDAR, LISTENER = "01000000000000000000000000000203", "02000000000000000000000000000204"


def result(topics: list[str] | None = None, reliable: bool = False) -> Ros2ProbeResult:
    return build(read_log(LOG), Ros2Request(0, "lo", topics or [], reliable, 3_000_000_000, 3.0),
                 0.05, 20 << 20, 0)


def topics_of(doc: dict) -> dict[str, dict]:
    return {t["topic"]: t for t in doc["topics"]}


# names

def test_ros_names_on_dds() -> None:
    assert ros_topic("rt/robot/scan") == "/robot/scan" and ros_topic("DDSPerfRDataKS") is None
    assert service_of("rq/add_two_intsRequest") == ("/add_two_ints", "request")
    assert service_of("rr/ns/add_two_intsReply") == ("/ns/add_two_ints", "reply")
    assert service_of("rt/chatter") is None
    assert ros_type("std_msgs::msg::dds_::String_") == "std_msgs/msg/String"
    assert ros_type("example_interfaces::srv::dds_::AddTwoInts_Request_") == (
        "example_interfaces/srv/AddTwoInts")
    assert ros_type("KeyedSeq") == "KeyedSeq"
    assert node_name("/", "talker") == "/talker" and node_name("/ns/", "a") == "/ns/a"


def test_user_topics_become_dds_names() -> None:
    assert dds_topic_of("/chatter") == "rt/chatter"
    assert dds_topic_of("rt/chatter") == "rt/chatter"
    assert dds_topic_of("DDSPerfRDataKS") == "DDSPerfRDataKS"
    for bad in ("/", "/a//b", "/a/", ""):
        with pytest.raises(UsageError, match="TOPICS: "):
            dds_topic_of(bad)


# the log

def test_the_window_starts_at_discovered_and_ends_at_end() -> None:
    log = read_log(LOG)
    assert log.discovered_ns == DISCOVERED and log.end_ns == DISCOVERED + 2_000_000_000
    assert log.early == 3, "the arrivals before 'discovered' are left out"
    assert all(t >= DISCOVERED for s in log.subscriptions.values() for t in s.arrivals)
    assert log.domain == 0 and log.interface == "lo"
    assert log.lost_by_index == {1: 3} and log.lost == 3
    assert log.node_of[LIDAR] == "/sensors/lidar" and log.node_of[LISTENER] == "/listener"


def test_the_log_tolerates_what_it_does_not_know() -> None:
    log = parse(['READY probe-ros2 domain=5 interface=eth0\n', '{"event":"future","x":1}\n',
                 '{"event":"discovered","t":10}\n', '{broken json\n', '11 0 8 -1\n',
                 '12 0 8\n', '{"event":"subscribed","t":1,"index":0,"topic":"rt/a","type":"T",'
                 '"header":false}\n', '13 0 9 -1\n',
                 '{"event":"end","t":20,"taken":2,"lost":1,"lost_by_index":[1]}\n'])
    assert log.domain == 5 and log.interface == "eth0"
    assert sorted(log.subscriptions[0].arrivals) == [11, 13], "kept: subscribed after its first"
    assert log.lost_by_index == {0: 1}


def test_an_endpoint_that_leaves_keeps_its_description() -> None:
    w = ('{"event":"writer","t":1,"guid":"aa","participant":"p","topic":"rt/a","type":"T",'
         '"qos":{"reliability":"reliable"},"alive":true}\n')
    log = parse([w, '{"event":"writer","t":2,"guid":"aa","alive":false}\n'])
    assert log.writers["aa"].topic == "rt/a" and not log.writers["aa"].alive


def test_nodes_are_replaced_by_the_participants_next_info() -> None:
    info = ('{"event":"nodes","t":1,"participant":"p","nodes":[{"namespace":"/","name":"%s",'
            '"readers":["r1"],"writers":[]}]}\n')
    log = parse([info % "a", info % "b"])
    assert log.nodes == {"p": ["/b"]} and log.node_of == {"r1": "/b"}


# the document

def test_topics_with_publishers_subscribers_and_qos() -> None:
    doc = result().to_dict()
    topics = topics_of(doc)
    assert list(topics) == ["/chatter", "/cmd_vel", "/map", "/scan", "/weird", "DDSPerfRDataKS"]
    chatter = topics["/chatter"]
    assert chatter["dds_topic"] == "rt/chatter" and chatter["ros"] is True
    assert chatter["msgtype"] == "std_msgs/msg/String" and chatter["count"] == 20
    assert chatter["rate_hz"] == pytest.approx(10.0) and chatter["bandwidth_bps"] == 240.0
    assert [p["node"] for p in chatter["publishers"]] == ["/talker", None]
    assert [p["alive"] for p in chatter["publishers"]] == [True, False]
    assert chatter["subscribers"][0]["node"] == "/listener"
    assert chatter["subscribers"][0]["qos"]["reliability"] == "reliable"
    scan = topics["/scan"]
    assert scan["lost"] == 3 and scan["age_p50_ns"] == 5_000_000 and scan["gaps"] == 1
    assert topics["DDSPerfRDataKS"]["ros"] is False
    assert topics["/cmd_vel"]["subscribed"] is False
    assert topics["/cmd_vel"]["why_not"] == "no publisher (only subscribers)"
    assert "no type information" in topics["/weird"]["why_not"]
    assert doc["system"] == "ros2 domain 0 (interface lo)"
    assert doc["start_ns"] == DISCOVERED and doc["duration_ns"] == 2_000_000_000
    assert doc["probe_max_rss_bytes"] == 20 << 20


def test_the_ros2_section() -> None:
    ros2 = result().to_dict()["ros2"]
    assert ros2["domain"] == 0 and ros2["interface"] == "lo" and ros2["reliable"] is False
    assert [p["nodes"] for p in ros2["participants"]][:2] == [["/talker", "/sensors/lidar"],
                                                              ["/listener"]]
    assert ros2["services"] == [{"name": "/add_two_ints",
                                 "type": "example_interfaces/srv/AddTwoInts",
                                 "servers": ["/add_two_ints_server"],
                                 "clients": ["/add_two_ints_client"]}]
    found = {i["topic"]: i for i in ros2["incompatibilities"]}
    assert set(found) == {"/scan", "/map"}
    assert found["/scan"]["writer"] == {"node": "/sensors/lidar", "endpoint": LIDAR}
    assert found["/scan"]["reader"] == {"node": "/listener", "endpoint": LISTENER}
    assert found["/scan"]["text"] == (
        "no data flows from /sensors/lidar to /listener on /scan: reliability: the reader asks "
        "for reliable, the writer offers best-effort")
    assert found["/map"]["reasons"] == [
        "durability: the reader asks for transient-local, the writer offers volatile",
        "deadline: the reader asks for 100 ms, the writer offers none (infinite)"]


def test_named_topics_only() -> None:
    doc = result(["rt/scan", "DDSPerfRDataKS"]).to_dict()
    assert [t["topic"] for t in doc["topics"]] == ["/scan", "DDSPerfRDataKS"]
    assert [i["topic"] for i in doc["ros2"]["incompatibilities"]] == ["/scan"]


def test_a_log_without_discovered_is_a_run_error() -> None:
    from mwperf.errors import RunError
    with pytest.raises(RunError, match="'discovered'"):
        build(parse(["READY probe-ros2 domain=0 interface=lo\n"]),
              Ros2Request(0, None, [], False, 1, 3.0), 0.0, None, 0)


# the text

def test_the_text_puts_incompatibilities_first() -> None:
    text = render_ros2(result())
    lines = text.splitlines()
    assert lines[0].startswith("ros2 domain 0 (interface lo): probed 2.00 s, 6 topics")
    assert lines[2].startswith("QoS incompatibilities: 2 writer/reader pairs will not match")
    assert lines[3].startswith("  no data flows from /sensors/lidar to /listener on /map: ")
    assert "DDSPerfRDataKS [dds]" in text and "[dds]: a plain DDS topic" in text
    assert "  pub /talker  reliable/volatile/keep-last:10" in lines
    assert "  sub /listener  reliable/transient-local/keep-last:1, deadline 100 ms" in lines
    assert "  not subscribed: no publisher (only subscribers)" in lines
    assert "  3 samples lost to the probe (DDS sample-lost status)" in lines
    assert ("service /add_two_ints (example_interfaces/srv/AddTwoInts): servers "
            "/add_two_ints_server; clients /add_two_ints_client") in lines
    assert "Note: age = receive time - header.stamp" in text
    assert "best-effort and volatile" in text
    row = next(line for line in lines if line.startswith("/chatter "))
    assert "240 B/s" in row


def test_the_text_of_a_reliable_probe_says_what_it_did() -> None:
    assert "Note: --reliable: the probe's readers were reliable" in render_ros2(result(reliable=True))


def test_no_incompatibility_no_section() -> None:
    text = render_ros2(result(["rt/chatter"]))
    assert "QoS incompatibilities" not in text and text.splitlines()[2].startswith("5 participants")


# catalogue and report

def test_catalogue_rows_of_a_ros2_probe() -> None:
    doc = result().to_dict()
    rows = {r["topic"]: r for r in probe_rows(doc, "p1", "p1")}
    chatter = rows["/chatter"]
    assert chatter["publishers"] == 1 and chatter["publisher_nodes"] == "/talker"
    assert chatter["subscriber_nodes"] == "/listener"
    assert chatter["publisher_qos"] == "reliable/volatile/keep-last:10"
    assert chatter["bandwidth_bps"] == 240.0 and chatter["probe_max_rss_bytes"] == 20 << 20
    assert chatter["incompatibilities"] is None and chatter["dds_topic"] == "rt/chatter"
    assert rows["/scan"]["incompatibilities"].startswith("no data flows from /sensors/lidar")
    assert rows["/scan"]["lost"] == 3
    assert rows["/cmd_vel"]["subscribed"] is False and rows["/cmd_vel"]["publishers"] == 0
    assert rows["DDSPerfRDataKS"]["ros"] is False


def test_saved_queried_shown_and_reported(tmp_path: Path) -> None:
    r = result()
    folder = save_probe(tmp_path, r.to_dict(), render_ros2(r))
    assert "-probe-ros2-" in folder.name
    assert json.loads((folder / "probe.json").read_text())["ros2"]["domain"] == 0
    with connect(tmp_path, read_only=True, views=False) as con:
        found = con.execute("SELECT topic, publishers, incompatibilities IS NOT NULL FROM probes "
                            "ORDER BY topic").fetchall()
    assert ("/scan", 1, True) in found and ("/chatter", 1, False) in found
    page = build_report(tmp_path, [folder.name], "html")
    assert "no data flows from /sensors/lidar to /listener on /scan" in page
    assert "publishers and subscribers per topic" in page and "/add_two_ints" not in page
    text = build_report(tmp_path, [folder.name], "markdown")
    assert "QoS incompatibilities (no data flows):" in text and "| /talker |" in text


def test_a_version_11_catalogue_gains_the_ros2_probe_columns(tmp_path: Path) -> None:
    older = {"system": "zenoh tcp/robot:7447", "start_ns": 1_795_000_000_000_000_000,
             "duration_ns": 2_000_000_000, "probe_cpu_s": 0.02, "gap_factor": 3.0,
             "topics": [{"topic": "robot/scan", "msgtype": "zenoh", "count": 80}]}
    save_probe(tmp_path, older, "t\n")
    with duckdb.connect(str(tmp_path / "catalogue.duckdb")) as con:
        for column, _ in schema.PROBE_ROS2_COLUMNS:
            con.execute(f"ALTER TABLE probes DROP COLUMN {column}")
        con.execute("UPDATE schema_version SET version = 11")
    with connect(tmp_path, views=False) as con:
        assert schema.version_of(con) == schema.SCHEMA_VERSION >= 12
        rows = con.execute("SELECT topic, publishers, bandwidth_bps FROM probes").fetchall()
    assert rows == [("robot/scan", None, None)]
    save_probe(tmp_path, result().to_dict(), "t\n")
    with connect(tmp_path, read_only=True, views=False) as con:
        assert con.execute("SELECT count(*) FROM probes WHERE publishers > 0").fetchone() == (5,)


def test_a_participant_that_left_takes_its_endpoints_out_of_the_incompatibilities() -> None:
    lines = LOG.read_text().splitlines(keepends=True)
    gone = '{"event":"participant","t":1,"guid":"010000000000000000000000000001c1","alive":false}\n'
    log = parse(lines[:-1] + [gone, lines[-1]])
    doc = build(log, Ros2Request(0, "lo", [], False, 1, 3.0), 0.0, None, 0).to_dict()
    assert doc["ros2"]["incompatibilities"] == []
    assert topics_of(doc)["/scan"]["publishers"][0]["alive"] is False
