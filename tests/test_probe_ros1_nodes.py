"""The ROS 1 probe's nodes (probe/ros1_nodes.py): the master's getSystemState over XML-RPC, read
from a fake master (an XML-RPC server in the test) that answers as rosmaster does."""

import socket
import threading
from collections.abc import Iterator
from xmlrpc.server import SimpleXMLRPCServer

import pytest

from mwperf.probe.ros1_nodes import endpoints, merged, system_state

PROBE = "/mwperf_probe_1234_1700000000000"


class FakeMaster:
    def __init__(self) -> None:
        self.publishers = [["/scan", ["/lidar"]], ["/rosout", ["/lidar", "/slam"]]]
        self.subscribers = [["/scan", ["/slam", PROBE]], ["/rosout", ["/rosout"]]]
        self.callers: list[str] = []

    def getSystemState(self, caller_id: str) -> list:  # noqa: N802 (the master's API name)
        self.callers.append(caller_id)
        return [1, "current system state", [self.publishers, self.subscribers, []]]


@pytest.fixture
def master() -> Iterator[tuple[str, FakeMaster]]:
    server = SimpleXMLRPCServer(("127.0.0.1", 0), logRequests=False, allow_none=True)
    fake = FakeMaster()
    server.register_function(lambda caller: fake.getSystemState(caller), "getSystemState")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", fake
    finally:
        server.shutdown()
        server.server_close()


def test_system_state_reads_each_topics_nodes(master: tuple[str, FakeMaster]) -> None:
    uri, fake = master
    state = system_state(uri)
    assert state == {"/scan": ({"/lidar"}, {"/slam", PROBE}),
                     "/rosout": ({"/lidar", "/slam"}, {"/rosout"})}
    assert fake.callers == ["/mwperf_probe_state"]


def test_before_and_after_are_merged_and_the_probe_is_left_out(
        master: tuple[str, FakeMaster]) -> None:
    uri, fake = master
    before = system_state(uri)
    fake.publishers = [["/scan", ["/lidar"]], ["/odom", ["/base"]]]  # /base came, during it
    fake.subscribers = [["/scan", ["/slam", PROBE, "/rviz"]]]
    state = merged([before, system_state(uri)], PROBE)
    assert endpoints(state, "/scan", 0) == [{"node": "/lidar"}]
    assert endpoints(state, "/scan", 1) == [{"node": "/rviz"}, {"node": "/slam"}]
    assert endpoints(state, "/odom", 0) == [{"node": "/base"}]
    assert endpoints(state, "/odom", 1) == []
    assert endpoints(state, "/nobody", 0) == []


def test_a_master_that_does_not_answer_leaves_nodes_unknown() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    state = system_state(f"http://127.0.0.1:{port}")
    assert state is None
    assert merged([state, None], PROBE) is None
    assert endpoints(None, "/scan", 0) is None


def test_an_error_or_a_malformed_answer_is_no_state(master: tuple[str, FakeMaster],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    uri, fake = master
    monkeypatch.setattr(fake, "publishers", "not a table")
    assert system_state(uri) is None
    monkeypatch.setattr(fake, "publishers", [])
    assert system_state(uri) == {"/scan": (set(), {"/slam", PROBE}), "/rosout": (set(), {"/rosout"})}
    monkeypatch.setattr(fake, "getSystemState", lambda caller: [-1, "error", []])
    assert system_state(uri) is None
