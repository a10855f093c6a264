"""mwperf probe --ros1 against a real ROS 1 system started here: Debian's rosmaster and rospy
publishers at known rates (tests/ros1_publishers.py: /stamped at 100 Hz with a header, /paused at
50 Hz with one 500 ms pause). The probe must measure the rate within +-1 %, show the pause as one
gap of ~500 ms, stamp ages only where there is a header, and publish nothing itself.
"""

import json
import shutil
import socket
import subprocess
import sys
import threading
import time
import xmlrpc.client
from pathlib import Path

import pytest

PUBLISHERS = Path(__file__).with_name("ros1_publishers.py")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mwperf(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "mwperf", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def master() -> str:
    if shutil.which("rosmaster") is None:
        pytest.fail("rosmaster missing: run scripts/system-deps.sh (python3-rosmaster)")
    port = free_port()
    proc = subprocess.Popen(["rosmaster", "--core", "-p", str(port)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    uri = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                xmlrpc.client.ServerProxy(uri).getSystemState("/test")
                break
            except OSError:
                time.sleep(0.1)
        yield uri
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("graph") / "robot.yaml"


@pytest.fixture(scope="module")
def probed(master: str, graph_file: Path) -> tuple[dict, list]:
    """One 4 s probe of the publishers; the master's view of the graph taken half way."""
    pubs = subprocess.Popen(["/usr/bin/python3", str(PUBLISHERS), master, "4"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(100):  # the probe lists published topics: wait until they are advertised
            state = xmlrpc.client.ServerProxy(master).getSystemState("/test")[2][0]
            if {"/stamped", "/paused"} <= {t for t, _ in state}:
                break
            time.sleep(0.1)
        probe = mwperf("probe", "--no-save", "--ros1", master, "/stamped", "/paused", "--duration", "4s",
                       "--json", "--write-graph", str(graph_file))
        # the master's view every 0.1 s while the probe runs (one look at a fixed 2 s was,
        # beside two busy loops, before the probe had registered anything)
        graph: list = []
        done = threading.Event()

        def watch() -> None:
            while not done.is_set():
                graph.append(xmlrpc.client.ServerProxy(master).getSystemState("/test")[2])
                done.wait(0.1)
        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            out, err = probe.communicate(timeout=30)
        finally:
            done.set()
            watcher.join()
        assert probe.returncode == 0, err
        return json.loads(out), graph
    finally:
        pubs.kill()
        pubs.wait()


def test_rate_within_one_percent_and_age_only_with_a_header(probed: tuple[dict, list]) -> None:
    doc, _ = probed
    topics = {t["topic"]: t for t in doc["topics"]}
    stamped, paused = topics["/stamped"], topics["/paused"]
    assert stamped["msgtype"] == "geometry_msgs/PointStamped"
    assert stamped["rate_hz"] == pytest.approx(100, rel=0.01)
    assert stamped["gap_max_ns"] < 200e6 and stamped["count"] >= 300
    assert 0 <= stamped["age_p50_ns"] < 50e6  # same machine: arrival - header.stamp, small
    assert paused["age_p50_ns"] is None  # std_msgs/String has no header
    assert 0 < doc["probe_cpu_percent"] < 50 and "clock" in doc["clock_caveat"]


def test_a_500_ms_pause_is_one_gap_of_500_ms(probed: tuple[dict, list]) -> None:
    paused = {t["topic"]: t for t in probed[0]["topics"]}["/paused"]
    # exactly one long gap (a loaded machine may add short ones over 3x the median)
    assert [g for _, g in paused["longest_gaps"] if g > 300e6] == [paused["gap_max_ns"]]
    assert paused["gaps"] >= 1
    # a 500 ms pause of a 50 Hz stream: last message before it to first after = 500 + 20 ms
    assert 490e6 <= paused["gap_max_ns"] <= 570e6
    assert paused["gap_p50_ns"] == pytest.approx(20e6, rel=0.1)
    assert paused["longest_gaps"][0][1] == paused["gap_max_ns"]


def test_the_probe_subscribes_and_publishes_nothing(probed: tuple[dict, list]) -> None:
    """In every view of the master taken while the probe ran it published nothing, and at its
    fullest it subscribed to exactly the two topics it was given."""
    seen: set[str] = set()
    for publishers, subscribers, _ in probed[1]:
        assert not any(n.startswith("/mwperf_probe") for _, nodes in publishers for n in nodes)
        subscribed = {t for t, nodes in subscribers
                      if any(n.startswith("/mwperf_probe") for n in nodes)}
        seen = max(seen, subscribed, key=len)
    assert seen == {"/stamped", "/paused"}


def test_nodes_come_from_the_master_and_the_graph_file_loads(probed: tuple[dict, list],
                                                              graph_file: Path) -> None:
    from mwperf.graph.parse import parse_graph

    topics = {t["topic"]: t for t in probed[0]["topics"]}
    for name in ("/stamped", "/paused"):
        assert topics[name]["publishers"] == [{"node": "/mwperf_test_publishers"}]
        assert topics[name]["subscribers"] == []  # the probe's own node is left out
    graph = parse_graph(graph_file.read_text(), str(graph_file))
    assert [n.name for n in graph.nodes] == ["mwperf_test_publishers", "probe_listener"]
    periods = {p.topic: p.period_ns for p in graph.node("mwperf_test_publishers").publishers}
    assert periods["/stamped"] == pytest.approx(10e6, rel=0.01)
    # the measured mean rate, its 500 ms pause included
    assert periods["/paused"] == pytest.approx(1e9 / topics["/paused"]["rate_hz"], rel=1e-5)
    assert {(e.topic, e.publisher, e.subscriber) for e in graph.edges()} == {
        ("/stamped", "mwperf_test_publishers", "probe_listener"),
        ("/paused", "mwperf_test_publishers", "probe_listener")}
    text = graph_file.read_text()
    assert f"# system: ros1 {probed[0]['system'].split(' ', 1)[1]}" in text
    assert "getSystemState" in text and "measured over" in text


def test_master_not_answering_is_exit_1_naming_it() -> None:
    uri = f"http://127.0.0.1:{free_port()}"
    out, err = mwperf("probe", "--no-save", "--ros1", uri, "--duration", "1s").communicate(timeout=30)
    assert out == "" and f"--ros1 {uri}: the ROS master" in err and "does not answer" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("args, words, code", [
    (["/not_there"], "topic '/not_there' is not published", 2),
    (["--duration", "0"], "--duration: must be > 0", 2),
    (["--duration", "-2s"], "--duration", 2),
    (["--gap-factor", "1"], "--gap-factor: must be > 1", 2),
])
def test_bad_input_is_one_line(master: str, args: list[str], words: str, code: int) -> None:
    proc = mwperf("probe", "--no-save", "--ros1", master, "--duration", "1s", *args)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == code and words in err and out == "", err


def test_bad_uri_is_usage() -> None:
    proc = mwperf("probe", "--no-save", "--ros1", "robot:11311")
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 2 and "--ros1: expected the master's URI" in err
