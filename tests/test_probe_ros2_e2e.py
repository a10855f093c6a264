"""mwperf probe --ros2 against real DDS peers that mwperf did not write (tests/ros2peers/): python
``cyclonedds`` ROS 2 publishers with their nodes on ros_discovery_info and known header stamps,
Cyclone's own ddsperf, a Fast DDS C++ publisher (benchmarks/fastdds_ref/rospub.cpp) and two
zenoh-plugin-ros2dds bridges routing a robot's topic into the probe's domain. Everything on
loopback (the agents' Cyclone loopback configuration; the probe's --interface lo) in DDS domains
of this test process's own.

Checked (issue 28): rates within 1 % for 1 MB at 30 Hz and 100 B at 1 kHz at the same time,
against each publisher's own send times over the probe's window; a 500 ms pause is one ~500 ms
gap; ages of a Header-first type ~7 ms (stamps 7 ms before the send); node names from
ros_discovery_info (Humble's 24-byte and Jazzy's 16-byte GIDs); ddsperf's topic listed as plain
DDS; the Fast DDS writer and its QoS; the bridged topic with its ROS 2 name, type and the
bridge's node; a best-effort writer with a reliable reader reported as "no data flows"; the probe
creates no writer (seen from a second participant); bad input is one line, exit 1 or 2, nothing
saved.

The probe tests skip (with the reason) while the agent has no ``probe-ros2``; the peer self-checks
(test_peers_*) run without it: they check the fixtures against Cyclone DDS itself.
"""

import json
import subprocess
import time
from pathlib import Path

import pytest

from conftest import REAL_AGENT
from ros2peers import peers
from ros2peers.peers import BASE_NODE, BridgePair, Peer, PythonPeer

pytestmark = pytest.mark.agent  # the loopback configuration is the agent's (and so is the probe)

STAMP_OFFSET_MS = 7.0
PROBE_S = 5
SYSTEM_PROBE_S = 7
"""the probe of the many-peers system: its window holds the pauser's pause (see system())"""
"""the probe's window; its discovery time (3 s by default) comes first"""


@pytest.fixture(scope="module")
def probe_ros2() -> None:
    """Skip while `mwperf-agent probe-ros2` does not exist (the lead's part of issue 28)."""
    why = peers.probe_ros2_missing(REAL_AGENT)
    if why:
        pytest.skip(why)


def topics_of(doc: dict) -> dict[str, dict]:
    return {t["topic"]: t for t in doc["topics"]}


def nodes_of(endpoints: list[dict]) -> set:
    return {e.get("node") for e in endpoints}


def run_probe(dom: int, *args: str, duration: str = f"{PROBE_S}s") -> dict:
    done = peers.probe(dom, *args, "--no-save", duration=duration)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# ------------------------------------------------------------------ rates (1 MB @ 30 Hz + 100 B @ 1 kHz)

@pytest.fixture(scope="module")
def rates(probe_ros2: None, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    """One probe of two publishers at once: rt/camera/image_raw/compressed (1 MB, 30 Hz,
    reliable) and rt/fast (100 B, 1 kHz, best-effort). Returns (probe document, {dds topic:
    (peer summary, send times)})."""
    dom = peers.domain(0)
    folder = tmp_path_factory.mktemp("rates")
    big = PythonPeer(dom, "--topic", "rt/camera/image_raw/compressed", "--type", "compressed",
                     "--size", "1000000", "--rate", "30", "--reliability", "reliable",
                     "--node", "/camera/driver", sends=folder / "big")
    fast = PythonPeer(dom, "--topic", "rt/fast", "--type", "string", "--size", "100", "--rate",
                      "1000", "--node", "/fast_talker", sends=folder / "fast")
    try:
        doc = run_probe(dom)
    finally:
        truth = {"rt/camera/image_raw/compressed": (big.summary(), big),
                 "rt/fast": (fast.summary(), fast)}
    return doc, {k: (summary, peer.sends()) for k, (summary, peer) in truth.items()}


def test_rates_within_one_percent_of_what_was_sent(rates: tuple[dict, dict]) -> None:
    doc, truth = rates
    topics = topics_of(doc)
    start, end = doc["start_ns"], doc["start_ns"] + doc["duration_ns"]
    for dds, ros, size, hz in (("rt/camera/image_raw/compressed", "/camera/image_raw/compressed",
                                1_000_000, 30), ("rt/fast", "/fast", 100, 1000)):
        topic = topics[ros]
        count, rate = peers.window_truth(truth[dds][1], start, end)
        assert rate == pytest.approx(hz, rel=0.01), f"{dds}: the publisher missed its schedule"
        assert topic["rate_hz"] == pytest.approx(rate, rel=0.01), (dds, topic["count"], count)
        assert topic["count"] == pytest.approx(count, rel=0.01)
        assert topic["size_p50"] == topic["size_max"] == size  # with the 4-byte CDR header
        assert topic["bandwidth_bps"] == pytest.approx(size * rate, rel=0.02)
        assert topic["dds_topic"] == dds and topic["ros"] is True and topic["lost"] == 0
    assert topics["/camera/image_raw/compressed"]["msgtype"] == "sensor_msgs/msg/CompressedImage"
    assert topics["/fast"]["msgtype"] == "std_msgs/msg/String"
    assert topics["/fast"]["age_p50_ns"] is None  # no header
    assert doc["probe_max_rss_bytes"] > 0 and doc["probe_cpu_s"] > 0


# ------------------------------------------------------------------ one system of many peers

@pytest.fixture(scope="module")
def system(probe_ros2: None, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A domain with: /sensors/imu_driver publishing rt/imu (std_msgs/Header, 100 Hz, stamps
    7 ms old), /pauser publishing rt/paused (50 Hz, paused 500 ms 5 s after its start, started just
    before the probe: inside the probe's window, which starts after its 3 s discovery), the Fast
    DDS publisher of rt/fastdds/chatter (reliable, transient-local, keep-last 7, deadline 200 ms,
    no node), /talker's best-effort rt/chatter with /listener's reliable reader (no data flows),
    and a checker watching the domain while the probe runs."""
    dom = peers.domain(1)
    started: list[Peer] = []
    try:
        imu = PythonPeer(dom, "--topic", "rt/imu", "--type", "header", "--rate", "100",
                         "--stamp-offset-ms", str(STAMP_OFFSET_MS), "--node",
                         "/sensors/imu_driver", "--depth", "5")
        started.append(imu)
        talker = PythonPeer(dom, "--topic", "rt/chatter", "--type", "string", "--rate", "10",
                            "--reliability", "best-effort", "--node", "/talker")
        started.append(talker)
        listener = PythonPeer(dom, "--role", "sub", "--topic", "rt/chatter", "--type", "string",
                              "--reliability", "reliable", "--node", "/listener")
        started.append(listener)
        fastdds = peers.fastdds_pub(dom, "rt/fastdds/chatter", 50, reliability="reliable",
                                    durability="transient-local", depth=7, deadline_ms=200)
        started.append(fastdds)
        time.sleep(1.0)  # every peer discovered by every other before the checker starts
        watcher = peers.checker(dom, 3 + SYSTEM_PROBE_S + 2)
        started.append(watcher)
        # a 500 ms pause every 2.5 s from 2 s after its first message: however long the probe
        # takes to start, whole pauses fall inside its window (3 s of discovery, then 7 s)
        paused = PythonPeer(dom, "--topic", "rt/paused", "--type", "string", "--size", "64",
                            "--rate", "50", "--pause-at", "2", "--pause-ms", "500",
                            "--pause-every", "2.5", "--node",
                            "/pauser", sends=tmp_path_factory.mktemp("pauser") / "sends")
        started.append(paused)
        doc = run_probe(dom, duration=f"{SYSTEM_PROBE_S}s")
        seen = watcher.json_line("self", 30)
        found = {"doc": doc, "seen": seen, "imu": imu.ready, "paused": paused.ready,
                 "talker": talker.ready, "listener": listener.ready,
                 "fastdds": {"participant": fastdds.participant, "writer": fastdds.writer},
                 "received_by_listener": listener.summary()["received"]}
        paused.summary()  # stopped: its send times written
        return {**found, "paused_sends": paused.sends()}
    finally:
        for peer in reversed(started):
            peer.stop()


def test_header_ages_are_the_stamp_offset(system: dict) -> None:
    imu = topics_of(system["doc"])["/imu"]
    assert imu["msgtype"] == "std_msgs/msg/Header" and imu["ros"] is True
    assert imu["rate_hz"] == pytest.approx(100, rel=0.02)
    # stamp = send time - 7 ms: age = 7 ms + the loopback latency (well under 3 ms)
    assert STAMP_OFFSET_MS * 1e6 <= imu["age_p50_ns"] < (STAMP_OFFSET_MS + 3) * 1e6
    assert imu["age_max_ns"] < 100e6 and "clock" in system["doc"]["clock_caveat"]


def test_nodes_come_from_ros_discovery_info(system: dict) -> None:
    doc = system["doc"]
    topics = topics_of(doc)
    imu = system["imu"]
    [pub] = topics["/imu"]["publishers"]
    assert pub == {**pub, "node": "/sensors/imu_driver", "participant": imu["participant"],
                   "endpoint": imu["endpoint"]}
    assert pub["qos"]["reliability"] == "best-effort" and pub["qos"]["depth"] == 5
    assert nodes_of(topics["/paused"]["publishers"]) == {"/pauser"}
    assert nodes_of(topics["/chatter"]["publishers"]) == {"/talker"}
    assert nodes_of(topics["/chatter"]["subscribers"]) == {"/listener"}
    participants = {p["guid"]: p["nodes"] for p in doc["ros2"]["participants"]}
    assert participants[imu["participant"]] == ["/sensors/imu_driver"]
    assert participants[system["listener"]["participant"]] == ["/listener"]
    assert doc["ros2"]["domain"] == peers.domain(1) and doc["ros2"]["interface"] == "lo"
    assert doc["system"] == f"ros2 domain {peers.domain(1)} (interface lo)"


def test_a_500_ms_pause_is_one_gap(system: dict) -> None:
    doc = system["doc"]
    paused = topics_of(doc)["/paused"]
    # the publisher's own gaps inside the probe's window (50 Hz paused 500 ms: last message
    # before a pause to the first after = 500 + 20 ms): each pause is one gap, as is any stall
    # of the publisher's over 300 ms a loaded machine may cause
    start, end = doc["start_ns"], doc["start_ns"] + doc["duration_ns"]
    inside = [t for t in system["paused_sends"] if start <= t < end]
    own = sorted((b - a for a, b in zip(inside, inside[1:])), reverse=True)
    assert own[0] >= 500e6, "no pause inside the probe's window"
    long = [g for g in own if g > 300e6]
    # the probe lists its three longest
    assert len([g for _, g in paused["longest_gaps"] if g > 300e6]) == min(len(long), 3), (
        paused["longest_gaps"], long)
    assert long[0] - 10e6 <= paused["gap_max_ns"] <= long[0] + 50e6 and paused["gaps"] >= 1
    assert paused["gap_p50_ns"] == pytest.approx(own[len(own) // 2], rel=0.1)


@pytest.fixture(scope="module")
def ddsperf_doc(probe_ros2: None) -> dict:
    """ddsperf pub alone in a domain with the probe. (Not in `system`: ddsperf 0.10.2's type
    discovery stops at the python cyclonedds 11 peers' type objects, "ddsi_xt_type_init_impl
    with invalid type object", and then nobody discovers it: a ddsperf/Cyclone matter.)"""
    dom = peers.domain(9)
    ddsperf = peers.ddsperf_pub(dom)
    try:
        time.sleep(0.5)
        return run_probe(dom, duration="3s")
    finally:
        ddsperf.stop()


def test_ddsperf_is_listed_as_plain_dds(ddsperf_doc: dict) -> None:
    data = topics_of(ddsperf_doc)["DDSPerfRDataKS"]
    assert data["ros"] is False and data["dds_topic"] == "DDSPerfRDataKS"
    assert data["msgtype"] == "KeyedSeq"
    assert data["rate_hz"] == pytest.approx(100, rel=0.05)
    assert nodes_of(data["publishers"]) == {None}


def test_fastdds_writer_is_seen_with_its_qos(system: dict) -> None:
    topic = topics_of(system["doc"])["/fastdds/chatter"]
    assert topic["msgtype"] == "std_msgs/msg/Header"
    [pub] = topic["publishers"]
    assert pub["participant"] == system["fastdds"]["participant"]
    assert pub["endpoint"] == system["fastdds"]["writer"]
    assert pub["node"] is None  # no rmw: nothing on ros_discovery_info
    qos = pub["qos"]
    # what Fast DDS puts in its discovery data (history/depth is not there: only Cyclone
    # sends it, as its own extension, so the probe cannot know the depth 7 of this writer)
    assert (qos["reliability"], qos["durability"]) == ("reliable", "transient-local")
    assert qos["deadline_ns"] == 200_000_000
    assert topic["rate_hz"] == pytest.approx(50, rel=0.02)
    assert 0 <= topic["age_p50_ns"] < 5e6  # stamped at the send


def test_best_effort_writer_reliable_reader_is_incompatible(system: dict) -> None:
    assert system["received_by_listener"] == 0  # the peers agree: nothing flowed
    [found] = [i for i in system["doc"]["ros2"]["incompatibilities"] if i["topic"] == "/chatter"]
    assert found["writer"]["node"] == "/talker" and found["reader"]["node"] == "/listener"
    assert found["writer"]["endpoint"] == system["talker"]["endpoint"]
    assert found["reader"]["endpoint"] == system["listener"]["endpoint"]
    assert "no data flows" in found["text"] and "/talker" in found["text"]
    assert any("reliab" in r for r in found["reasons"])


def test_the_probe_creates_no_writer(system: dict) -> None:
    """From the checker: the probe's participant (the one no peer owns) has readers, best-effort
    and volatile, on the topics it subscribed (+ ros_discovery_info: reliable, transient-local),
    and not one writer."""
    seen = system["seen"]
    peers_own = {system[k]["participant"] for k in ("imu", "paused", "talker", "listener",
                                                    "fastdds")}
    ddsperf = {w["participant"] for w in seen["writers"] if w["topic"].startswith("DDSPerf")}
    others = set(seen["participants"]) - peers_own - ddsperf
    assert len(others) == 1, f"the probe's participant, alone: {others}"
    [probe] = others
    assert [w for w in seen["writers"] if w["participant"] == probe] == []
    readers = [r for r in seen["readers"] if r["participant"] == probe]
    by_topic = {r["topic"]: r for r in readers}
    assert {"rt/imu", "rt/paused", "rt/fastdds/chatter"} <= set(by_topic)
    for topic, reader in by_topic.items():
        expected = (("reliable", "transient-local") if topic == "ros_discovery_info"
                    else ("best-effort", "volatile"))
        assert (reader["reliability"], reader["durability"]) == expected, topic
    assert probe not in seen["nodes"]  # and it announces no node
    # nor does the probe list itself
    assert probe not in {p["guid"] for p in system["doc"]["ros2"]["participants"]}


# ------------------------------------------------------------------ zenoh-plugin-ros2dds

@pytest.fixture(scope="module")
def bridged(probe_ros2: None, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A robot's /robot/imu_driver publishing rt/robot/imu (Header, 100 Hz, best-effort) in
    domain R; zenoh-plugin-ros2dds bridges R -> zenoh -> the probe's domain P, where a ROS 2
    node /base/listener subscribes (Jazzy GIDs, as the base bridge reads them): the topic in P
    is written by the base bridge's node."""
    robot, base = peers.domain(2), peers.domain(3)
    pair = BridgePair(robot, base, tmp_path_factory.mktemp("bridges"))
    started: list[Peer] = []
    try:
        started.append(PythonPeer(robot, "--topic", "rt/robot/imu", "--type", "header", "--rate",
                                  "100", "--node", "/robot/imu_driver"))
        listener = PythonPeer(base, "--role", "sub", "--topic", "rt/robot/imu", "--type",
                              "header", "--node", "/base/listener", "--gid", "16")
        started.append(listener)
        time.sleep(2.0)  # the routes made and announced over zenoh
        doc = run_probe(base)
        return {"doc": doc, "listener": listener.ready, "received": listener.summary()["received"]}
    finally:
        for peer in reversed(started):
            peer.stop()
        pair.stop()


def test_bridged_topic_has_ros_names_and_the_bridges_node(bridged: dict) -> None:
    assert bridged["received"] > 0, "the bridges carried nothing: the fixture is broken"
    doc = bridged["doc"]
    topic = topics_of(doc)["/robot/imu"]
    assert topic["dds_topic"] == "rt/robot/imu" and topic["ros"] is True
    assert topic["msgtype"] == "std_msgs/msg/Header"
    assert nodes_of(topic["publishers"]) == {f"/{BASE_NODE}"}
    assert nodes_of(topic["subscribers"]) == {"/base/listener"}
    assert topic["rate_hz"] == pytest.approx(100, rel=0.05)
    assert STAMP_OFFSET_MS * 1e6 <= topic["age_p50_ns"] < 50e6  # 7 ms + two bridges
    [bridge] = [p for p in doc["ros2"]["participants"] if f"/{BASE_NODE}" in p["nodes"]]
    assert bridge["guid"] == topic["publishers"][0]["participant"]


# ------------------------------------------------------------------ bad input

def saved_nothing(folder: Path) -> bool:
    return not folder.exists() or not any(folder.iterdir())


def test_an_empty_domain_is_exit_1_naming_domain_and_interface(probe_ros2: None,
                                                               tmp_path: Path) -> None:
    dom = peers.domain(4)
    done = peers.probe(dom, "--results", str(tmp_path / "results"), duration="1s")
    assert done.returncode == 1, done.stderr
    assert f"domain {dom}" in done.stderr and "lo" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and done.stdout == ""
    assert saved_nothing(tmp_path / "results")


@pytest.mark.parametrize(("args", "code", "words"), [
    (["/not_there"], 2, "/not_there"),
    (["--domain", "233"], 2, "233"),
    (["--interface", "nosuch0"], 2, "nosuch0"),
])
def test_bad_input_is_one_line_and_saves_nothing(probe_ros2: None, tmp_path: Path,
                                                 args: list[str], code: int, words: str) -> None:
    """With a publisher in the domain, so only the bad input can be what fails. The later
    --domain/--interface win over peers.probe's own (click: the last one given)."""
    dom = peers.domain(5)
    pub = PythonPeer(dom, "--topic", "rt/present", "--type", "string", "--rate", "20")
    try:
        done = peers.probe(dom, "--results", str(tmp_path / "results"), *args, duration="1s")
    finally:
        pub.stop()
    assert done.returncode == code, done.stderr
    assert words in done.stderr and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
    assert saved_nothing(tmp_path / "results")


def test_a_burst_of_announcements_loses_no_node(probe_ros2: None) -> None:
    """300 ros_discovery_info announcements back to back (a launch makes one for every entity of
    every node) arrive between two of the probe's polls (20 ms): every participant's nodes are
    kept. The topic is keyless: a keep-last 100 reader kept only the last 100 of them (seen)."""
    dom = peers.domain(5)
    burst = peers.announcer(dom, 300)
    try:
        done = subprocess.run([str(REAL_AGENT), "probe-ros2", "--domain", str(dom), "--interface",
                               "lo", "--discovery-time", "2s", "--duration", "1s"],
                              capture_output=True, text=True, timeout=60, check=False)
        sent = burst.json_line("sent", 5)
    finally:
        burst.stop()
    assert done.returncode == 0, done.stderr
    events = [json.loads(ln) for ln in done.stdout.splitlines() if ln.startswith("{")]
    nodes = {e["participant"]: [f"{n['namespace']}/{n['name']}" for n in e["nodes"]]
             for e in events if e.get("event") == "nodes"}
    assert len(sent["gids"]) == 300
    assert [nodes.get(gid) for gid in sent["gids"]] == [[f"/burst/n{i}"] for i in range(300)]


# ------------------------------------------------------------------ the peers themselves (no probe needed)

def test_peers_are_real_ros2_participants(tmp_path: Path) -> None:
    """The fixtures checked against Cyclone DDS itself (a second participant): every peer's
    writer with its type and QoS, the nodes on ros_discovery_info in both GID layouts, the
    Fast DDS peer discovered over loopback, and a Cyclone reader getting the stamps 7 ms old."""
    dom = peers.domain(6)
    started: list[Peer] = []
    try:
        imu = PythonPeer(dom, "--topic", "rt/imu", "--type", "header", "--rate", "100",
                         "--node", "/sensors/imu_driver", sends=tmp_path / "imu")
        started.append(imu)
        jazzy = PythonPeer(dom, "--role", "sub", "--topic", "rt/imu", "--type", "header",
                           "--node", "/ns/jazzy_listener", "--gid", "16")
        started.append(jazzy)
        fastdds = peers.fastdds_pub(dom, "rt/fastdds/chatter", 50, durability="transient-local",
                                    depth=7)
        started.append(fastdds)
        time.sleep(1.0)
        seen = peers.checker(dom, 3.0).json_line("self", 20)
        got = jazzy.summary()
        sent = imu.summary()["sent"]
    finally:
        for peer in reversed(started):
            peer.stop()
    writers = {(w["participant"], w["topic"]): w for w in seen["writers"]}
    assert writers[(imu.ready["participant"], "rt/imu")]["type"] == "std_msgs::msg::dds_::Header_"
    assert writers[(imu.ready["participant"], "rt/imu")]["guid"] == imu.ready["endpoint"]
    assert writers[(fastdds.participant, "rt/fastdds/chatter")]["durability"] == "transient-local"
    assert writers[(fastdds.participant, "rt/fastdds/chatter")]["guid"] == fastdds.writer
    assert seen["nodes"][imu.ready["participant"]] == ["/sensors/imu_driver"]  # 24-byte GIDs
    assert seen["nodes"][jazzy.ready["participant"]] == ["/ns/jazzy_listener"]  # 16-byte
    assert got["received"] >= 0.5 * sent > 0  # it subscribed after the imu began
    # stamps 7 ms before the send: a Cyclone reader's age is 7 ms + the loopback latency
    assert STAMP_OFFSET_MS * 1e6 <= got["age_p50_ns"] < (STAMP_OFFSET_MS + 3) * 1e6


def test_peers_bridges_route_a_robot_topic_into_the_probes_domain(tmp_path: Path) -> None:
    """The BridgePair fixture without the probe: the base bridge writes rt/robot/imu into the
    probe's domain as its node /zenoh_bridge_base (announced with Jazzy's 16-byte GIDs), and a
    ROS 2 node there gets the robot's samples, stamps and all."""
    robot, base = peers.domain(7), peers.domain(8)
    pair = BridgePair(robot, base, tmp_path)
    started: list[Peer] = []
    try:
        started.append(PythonPeer(robot, "--topic", "rt/robot/imu", "--type", "header",
                                  "--rate", "100", "--node", "/robot/imu_driver"))
        listener = PythonPeer(base, "--role", "sub", "--topic", "rt/robot/imu", "--type",
                              "header", "--node", "/base/listener", "--gid", "16")
        started.append(listener)
        time.sleep(1.0)
        seen = peers.checker(base, 4.0).json_line("self", 20)
        got = listener.summary()
    finally:
        for peer in reversed(started):
            peer.stop()
        pair.stop()
    [writer] = [w for w in seen["writers"] if w["topic"] == "rt/robot/imu"]
    assert writer["type"] == "std_msgs::msg::dds_::Header_"
    assert seen["nodes"][writer["participant"]] == [f"/{BASE_NODE}"]
    assert seen["nodes"][listener.ready["participant"]] == ["/base/listener"]  # both announced
    assert got["received"] > 100
    assert STAMP_OFFSET_MS * 1e6 <= got["age_p50_ns"] < 50e6
