"""The foxglove relay's channel table (python/mwperf/bridges/foxglove_server.py) without a
server: two clients advertising one topic at the same moment (a graph's subscriber making its
input's channel exist, and the topic's publisher) get one server channel between them. Two
were made before, the loser's closed after the SDK had advertised it: a subscriber that had
taken it lost its subscription, and a stress run's graph edge received 0 of 400 messages."""

import sys
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("foxglove")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python" / "mwperf" / "bridges"))
import foxglove_server  # noqa: E402  (standalone: the daemon's own module)


class SlowChannel:
    """A server channel whose making takes a while (the SDK advertises it to every client)."""

    made: list["SlowChannel"] = []

    def __init__(self, topic: str, **_: Any) -> None:
        threading.Event().wait(0.05)
        self.topic, self.closed = topic, False
        SlowChannel.made.append(self)

    def id(self) -> int:
        return id(self)

    def close(self) -> None:
        self.closed = True


def test_two_clients_advertising_one_topic_at_once_share_one_channel(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(foxglove_server.foxglove, "Channel", SlowChannel)
    SlowChannel.made = []
    relay = foxglove_server.Relay()
    start = threading.Barrier(2)
    routes: dict[int, Any] = {}

    def advertise(client: int) -> None:
        start.wait()
        routes[client] = relay.add_advertiser("/clean", (client, 1))

    threads = [threading.Thread(target=advertise, args=(c,)) for c in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(SlowChannel.made) == 1 and not SlowChannel.made[0].closed, SlowChannel.made
    assert routes[1] is routes[2] is relay.channels["/clean"]
    assert relay.advertisers["/clean"] == {(1, 1), (2, 1)}
