"""A Foxglove WebSocket server built on foxglove-sdk (the protocol foxglove_bridge speaks), as
the daemon of mwperf's ``foxglove`` transport and as the ``--bridge foxglove`` bridge.

Standalone on purpose (no mwperf imports): the transport's Rust conformance suite starts it
with ``python3 path/to/foxglove_server.py`` as a test daemon, like mosquitto.

Two modes, both with the ClientPublish and ConnectionGraph capabilities (the graph is never
published: a client's ``subscribeConnectionGraph`` gets the SDK's initial update, which mwperf's
client uses as a barrier, "everything I sent before has been handled"; publishing the graph
from Python while the SDK runs a callback deadlocks foxglove-sdk 0.30):

- ``relay`` (the ``foxglove`` transport's daemon): what one client publishes on its client
  channel (``advertise``, then binary message data) is logged on a server channel of the same
  topic, to every client subscribed to it. A server channel lives while a client advertises
  its topic (so a client can make a channel exist by advertising it, and see another client's
  presence in the channels advertised to it).
- ``dds`` (``--dds-domain N``, the bridge): as foxglove_bridge does for ROS 2, with the topics
  named by the clients. A client's advertised channel ``/<topic>`` gets a DDS writer on
  ``rt/<topic>`` (ROS 2 naming) and a server channel ``/<topic>``; a DDS reader on
  ``rt/<topic>`` is created when a client first subscribes to that channel (lazily, as
  foxglove_bridge subscribes to a ROS topic), and what it takes is logged on the channel. The
  channel carries the sample's ``data`` field (the mwperf message): the bridge deserialises
  the CDR sample and serialises the reply (python cyclonedds), where foxglove_bridge forwards
  serialised CDR. (foxglove_bridge also advertises every topic of the ROS graph; reading DDS
  discovery here, python cyclonedds 11's built-in publication reader crashed the process.)

With ``--tls-cert``/``--tls-key`` it serves wss (the SDK's rustls server; it asks clients for
no certificate). It prints ``ready <host>:<port>`` once listening, and stops on SIGTERM/SIGINT.
"""

import argparse
import signal
import sys
import threading
from importlib import metadata
from pathlib import Path

import foxglove
from foxglove.websocket import Capability, ServerListener

ENCODING = "mwperf"
"""the channels' message encoding: the raw mwperf message (header + payload)"""
SCHEMA = "mwperf_msgs/msg/Bytes"
DDS_TYPE = "mwperf_msgs::msg::dds_::Bytes_"


class Relay(ServerListener):
    """Client channels routed to server channels of the same topic.

    Lock discipline: ``lock`` guards the tables below and is never held while calling into
    foxglove-sdk (creating or closing a channel, logging). The SDK calls these callbacks with its
    own locks held (closing a channel calls ``on_unsubscribe`` on the closing thread, holding
    the context's lock): a callback waiting for ``lock`` while its holder waited for the SDK
    deadlocked the server when a client was killed (its channels closed on disconnect)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.making = threading.Lock()
        """held while a topic's server channel is looked for and made: one channel per topic.
        Two clients advertising one topic at once (a subscriber making its input's channel
        exist, the publisher of it) each made one, and the loser's was closed: the SDK had
        advertised it meanwhile, and a client that subscribed to it lost its subscription
        when it went (a graph edge received nothing). Never taken inside ``lock``, and no SDK
        callback waits for it (the SDK calls back into ``lock`` only)."""
        self.server = None
        self.channels: dict[str, foxglove.Channel] = {}
        """server channel per topic"""
        self.advertisers: dict[str, set[tuple[int, int]]] = {}
        """per topic: (client id, client channel id) of every client publishing it"""
        self.routes: dict[tuple[int, int], foxglove.Channel] = {}
        self.subscribers: dict[str, int] = {}
        """per topic: how many client subscriptions"""
        self.names: dict[int, str] = {}
        """server channel id -> topic"""

    # -- client publishing -------------------------------------------------------------------
    def on_client_advertise(self, client, channel) -> None:
        self.add_advertiser(channel.topic, (client.id, channel.id))
        self.client_advertised(channel.topic)

    def add_advertiser(self, topic: str, key: tuple[int, int]) -> foxglove.Channel:
        """Route ``key`` to ``topic``'s server channel (made if there is none); returns it."""
        while True:
            route = self.server_channel(topic)
            with self.lock:  # the channel may have gone meanwhile (its last advertiser left)
                if self.channels.get(topic) is route:
                    self.advertisers.setdefault(topic, set()).add(key)
                    self.routes[key] = route
                    return route

    def on_client_unadvertise(self, client, client_channel_id: int) -> None:
        key = (client.id, client_channel_id)
        gone: list[str] = []
        with self.lock:
            self.routes.pop(key, None)
            for topic, keys in list(self.advertisers.items()):
                keys.discard(key)
                if not keys:
                    del self.advertisers[topic]
                    gone.append(topic)
        for topic in gone:
            self.client_gone(topic)

    def on_message_data(self, client, client_channel_id: int, data: bytes) -> None:
        route = self.routes.get((client.id, client_channel_id))
        if route is not None:
            self.deliver(route, data)

    # -- subscriptions -----------------------------------------------------------------------
    def on_subscribe(self, client, channel) -> None:
        with self.lock:
            count = self.subscribers.get(channel.topic, 0)
            self.subscribers[channel.topic] = count + 1
        if count == 0:
            self.subscribed(channel.topic)

    def on_unsubscribe(self, client, channel) -> None:
        with self.lock:
            count = self.subscribers.get(channel.topic, 0) - 1
            if count <= 0:
                self.subscribers.pop(channel.topic, None)
            else:
                self.subscribers[channel.topic] = count
        if count <= 0:
            self.unsubscribed(channel.topic)

    # -- what the modes differ in ------------------------------------------------------------
    def server_channel(self, topic: str) -> foxglove.Channel:
        """``topic``'s server channel, made (outside ``lock``, under ``making``) when there is
        none: never two for one topic."""
        with self.making:
            with self.lock:
                found = self.channels.get(topic)
            if found is not None:
                return found
            made = foxglove.Channel(topic, message_encoding=ENCODING,
                                    schema=foxglove.Schema(name=SCHEMA, encoding="", data=b""))
            with self.lock:
                self.channels[topic] = made
                self.names[made.id()] = topic
            return made

    def deliver(self, channel: foxglove.Channel, data: bytes) -> None:
        channel.log(data)

    def client_advertised(self, topic: str) -> None:
        pass

    def client_gone(self, topic: str) -> None:
        """No client publishes ``topic`` any more: its server channel goes (clients see it
        unadvertised; a new publisher gets a new one)."""
        with self.lock:
            if topic in self.advertisers:  # a new publisher came meanwhile: it keeps it
                return
            found = self.channels.pop(topic, None)
            if found is not None:
                self.names.pop(found.id(), None)
        if found is not None:
            found.close()

    def subscribed(self, topic: str) -> None:
        pass

    def unsubscribed(self, topic: str) -> None:
        pass


class DdsBridge(Relay):
    """Relay whose other side is DDS (Cyclone DDS through its Python binding)."""

    def __init__(self, domain: int, reliable: bool, depth: int) -> None:
        super().__init__()
        from dataclasses import dataclass

        from cyclonedds.core import Listener, Policy, Qos
        from cyclonedds.domain import DomainParticipant
        from cyclonedds.idl import IdlStruct
        from cyclonedds.idl import types as t

        @dataclass
        class Bytes_(IdlStruct, typename=DDS_TYPE):
            data: bytes  # serialised as sequence<octet>, from and to bytes
            time: t.int64
            id: t.uint64

        @dataclass
        class Described_(IdlStruct, typename=DDS_TYPE):
            data: t.sequence[t.byte]  # IDL octet (TK_BYTE, which Cyclone DDS 0.10 knows)
            time: t.int64
            id: t.uint64

        # python cyclonedds cannot describe a ``bytes`` field in XTypes (the type information
        # discovery matches on), and would make a list of ints of a sequence<octet> one (~20 ms
        # per 512 KiB each way): the fast struct gets the description of the described one,
        # identical on the wire.
        Described_.__idl__.fill_type_data()
        Bytes_.__idl__.populate()
        Bytes_.__idl__._xt_data = Described_.__idl__._xt_data
        Bytes_.__idl__._xt_bytedata = Described_.__idl__._xt_bytedata
        self.Bytes_ = Bytes_
        self.Listener = Listener
        self.participant = DomainParticipant(domain)
        history = Policy.History.KeepLast(depth) if depth > 0 else Policy.History.KeepAll
        # XCDR1 (plain CDR), what Cyclone DDS 0.10 and ROS 2's RMWs write for such a type
        self.qos = Qos(Policy.Reliability.Reliable(max_blocking_time=1_000_000_000) if reliable
                       else Policy.Reliability.BestEffort, history,
                       Policy.DataRepresentation(use_cdrv0_representation=True))
        self.readers: dict[str, object] = {}
        self.writers: dict[tuple[int, int], object] = {}
        self.dds_topics: dict[str, object] = {}

    def topic(self, name: str):
        from cyclonedds.topic import Topic
        found = self.dds_topics.get(name)
        if found is None:
            found = Topic(self.participant, name, self.Bytes_, qos=self.qos)
            self.dds_topics[name] = found
        return found

    def on_client_advertise(self, client, channel) -> None:
        from cyclonedds.pub import DataWriter
        writer = DataWriter(self.participant, self.topic("rt" + channel.topic), qos=self.qos)
        with self.lock:
            self.writers[(client.id, channel.id)] = writer
        # a client can subscribe before DDS publishes: the server channel exists at once
        self.add_advertiser(channel.topic, (client.id, channel.id))

    def on_client_unadvertise(self, client, client_channel_id: int) -> None:
        with self.lock:
            writer = self.writers.pop((client.id, client_channel_id), None)
            for topic, keys in list(self.advertisers.items()):
                keys.discard((client.id, client_channel_id))
                if not keys:
                    del self.advertisers[topic]
        if writer is not None:
            del writer

    def on_message_data(self, client, client_channel_id: int, data: bytes) -> None:
        writer = self.writers.get((client.id, client_channel_id))
        if writer is not None:
            writer.write(self.Bytes_(data=data, time=0, id=0))

    def subscribed(self, topic: str) -> None:
        if topic in self.readers or topic not in self.channels:
            return
        from cyclonedds.sub import DataReader
        channel = self.channels[topic]

        def forward(reader) -> None:
            for sample in reader.take(N=256):
                channel.log(sample.data)

        self.readers[topic] = DataReader(self.participant, self.topic("rt" + topic),
                                         qos=self.qos, listener=self.Listener(on_data_available=forward))

    def unsubscribed(self, topic: str) -> None:
        self.readers.pop(topic, None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a free port (printed when ready)")
    parser.add_argument("--dds-domain", type=int, default=None,
                        help="bridge mode: the DDS domain to bridge (default: relay mode)")
    parser.add_argument("--reliability", choices=("reliable", "best-effort"), default="reliable")
    parser.add_argument("--depth", type=int, default=1000, help="DDS keep-last depth, 0 = keep-all")
    parser.add_argument("--tls-cert", type=Path, default=None,
                        help="serve wss: this certificate (PEM; with --tls-key)")
    parser.add_argument("--tls-key", type=Path, default=None, help="its private key (PEM)")
    parser.add_argument("--version", action="store_true")
    args = parser.parse_args(argv)
    if (args.tls_cert is None) != (args.tls_key is None):
        parser.error("--tls-cert and --tls-key go together")
    version = metadata.version("foxglove-sdk")
    if args.version:
        print(f"foxglove-sdk {version}")
        return 0
    handler = (Relay() if args.dds_domain is None
               else DdsBridge(args.dds_domain, args.reliability == "reliable", args.depth))
    foxglove.set_log_level("WARN")
    server = foxglove.start_server(
        name=f"mwperf {'relay' if args.dds_domain is None else 'dds bridge'}",
        host=args.host, port=args.port, server_listener=handler,
        capabilities=[Capability.ClientPublish, Capability.ConnectionGraph],
        supported_encodings=[ENCODING],
        **({} if args.tls_cert is None else {"tls_cert": args.tls_cert.read_bytes(),
                                              "tls_key": args.tls_key.read_bytes()}))
    handler.server = server
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    print(f"ready {args.host}:{server.port}", flush=True)
    done.wait()
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
