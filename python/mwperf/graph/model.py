"""A graph: nodes that publish and subscribe to topics, chains of topics, and how late is late.

The unit a graph run measures (issue 24). Built from a graph file (parse.py), an iRobot
ros2-performance topology (irobot.py) or a built-in (builtin.py); checked by check.py. Every
value here is already validated: durations in ns, sizes in bytes, ``copies`` expanded.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

PHASES = ("spread", "aligned")


@dataclass(frozen=True)
class Qos:
    """A publisher's or subscriber's QoS; None = the point's (the transport's default)."""

    reliability: str | None = None
    history: str | None = None
    """``keep-last``, ``keep-last:N`` or ``keep-all``"""
    durability: str | None = None


@dataclass(frozen=True)
class Publisher:
    """A timer-driven publisher: one message every ``period_ns``, on an absolute schedule;
    ``period_ns`` 0 (``rate: max``): saturating, back to back as fast as the middleware
    accepts (a reliable QoS's flow control holds it back)."""

    topic: str
    period_ns: int
    payload_bytes: int
    """the message's bytes after mwperf's own header (iRobot's ``data`` bytes); with
    ``payload_sizes`` the largest of them"""
    qos: Qos = Qos()
    payload_sizes: tuple[int, ...] = ()
    """message k's payload is entry k mod len (graph/sizes.py); () = always payload_bytes"""
    offsets_ns: tuple[int, ...] = ()
    """a replayed recording's times (``replay:``): message k due at offsets[k mod n] + (k div
    n) x (the last offset + period_ns) after the start; () = every period_ns"""
    closed_loop: bool = False
    """the next message when the previous one's reply is back, one in flight (a round trip at
    ``--rate 0``; ``period_ns`` is then 0 and the publisher is not saturating)"""
    trace: str | None = None
    """a stream ``--replay``'s per-topic trace file (bags/trace.py: times and sizes) the
    sender streams; None = the period and ``payload_sizes``/``offsets_ns``"""

    @property
    def saturating(self) -> bool:
        return self.period_ns == 0 and not self.closed_loop


@dataclass(frozen=True)
class Subscriber:
    """A subscription; with ``publish`` a chain stage that, after its callback's work,
    publishes downstream on that topic carrying the received message's origin stamp."""

    topic: str
    busy_loop_ns: int = 0
    """the callback's work per message (a busy loop)"""
    publish: str | None = None
    publish_bytes: int | None = None
    """the downstream message's payload (None: the received message's size)"""
    qos: Qos = Qos()
    callback_group: str | None = None
    """an rclpy node's (clients.py): ``exclusive`` (a mutually exclusive group of its own) or
    ``reentrant``; None: exclusive (the agent's node has no groups)"""


@dataclass(frozen=True)
class Server:
    """A service the node answers: each call's ``work_ns`` (a CPU spin), then a reply of
    ``reply_bytes`` (None: the request's size)."""

    service: str
    reply_bytes: int | None = None
    work_ns: int = 0


@dataclass(frozen=True)
class Client:
    """A service the node calls on an absolute schedule (one call slot every ``period_ns``),
    at most ``in_flight`` calls outstanding, each given up after ``timeout_ns``."""

    service: str
    period_ns: int
    request_bytes: int
    in_flight: int = 1
    timeout_ns: int = 1_000_000_000


@dataclass(frozen=True)
class Node:
    """One node: one middleware session, its publishers and subscribers, on one host."""

    name: str
    publishers: tuple[Publisher, ...] = ()
    subscribers: tuple[Subscriber, ...] = ()
    host: str | None = None
    """the host it runs on (None: this machine, or the run's default placement)"""
    executor: str = "single"
    group: str | None = None
    """the executor group it shares (iRobot's executor_id); None: its own"""
    process: str | None = None
    """the OS process it shares with the other nodes of that name (graph file ``process:``,
    graph/processes.py): one agent, one middleware session; None: a process of its own"""
    cpu_quota: str | None = None
    cpu_pin: str | None = None
    copy_of: str | None = None
    """the node it was copied from (``copies: N``), else None"""
    servers: tuple[Server, ...] = ()
    clients: tuple[Client, ...] = ()
    client: str = "agent"
    """who runs the node (clients.py): ``agent`` (mwperf-agent node) or ``rclpy`` (a real rclpy
    node, python/mwperf/ros2/graph_node.py); a stream's ``--pong relay`` (plan/stream_graph.py):
    ``relay``, the transport's own foreign echo, started as a daemon"""
    command: tuple[str, ...] = ()
    """a program of the user's run as this node (graph/commands.py): its words, ``{in}``,
    ``{out}`` and ``{type}`` not yet replaced; () = an mwperf agent"""
    remap: tuple[tuple[str, str], ...] = ()
    """a command node's (its own topic name, the graph topic) pairs, passed to it as
    ``--ros-args -r NAME:=TOPIC`` with the topic's name on the transport"""


@dataclass(frozen=True)
class Chain:
    """A named path of topics: end-to-end latency from the first topic's publication to the
    last topic's reception, and each hop's share."""

    name: str
    topics: tuple[str, ...]
    deadline_ns: int | None = None


@dataclass(frozen=True)
class Lateness:
    """iRobot's rule: a message is late when its latency exceeds min(percent of its topic's
    period, absolute), too late likewise with the second pair (defaults as iRobot's)."""

    late_percent: float = 20.0
    late_ns: int = 5_000_000
    too_late_percent: float = 100.0
    too_late_ns: int = 50_000_000

    def late_limit_ns(self, period_ns: int | None) -> int:
        """``period_ns`` None or 0 (a saturating topic has no period): the absolute limit."""
        if not period_ns:
            return self.late_ns
        return min(round(period_ns * self.late_percent / 100), self.late_ns)

    def too_late_limit_ns(self, period_ns: int | None) -> int:
        if not period_ns:
            return self.too_late_ns
        return min(round(period_ns * self.too_late_percent / 100), self.too_late_ns)


@dataclass(frozen=True)
class Edge:
    """A publisher's topic as one subscriber node receives it."""

    topic: str
    publisher: str
    subscriber: str


@dataclass(frozen=True)
class CallEdge:
    """A client node's calls of a service, answered by its server node."""

    service: str
    client: str
    server: str | None


@dataclass(frozen=True)
class Graph:
    name: str
    nodes: tuple[Node, ...]
    chains: tuple[Chain, ...] = ()
    lateness: Lateness = Lateness()
    description: str = ""
    source: str = ""
    """where it was read from (a file, ``builtin:NAME``)"""
    hosts: tuple[str, ...] = field(default=())
    """the hosts its nodes name (in order of first use)"""
    phase: str = "spread"
    """``spread``: each publisher's first message at its own offset within its period;
    ``aligned``: every publisher's at the start (the worst case: all fire together)"""

    def node(self, name: str) -> Node:
        return next(n for n in self.nodes if n.name == name)

    def publishers_of(self, topic: str) -> list[str]:
        """The nodes that publish ``topic``: by timer, or as a chain stage."""
        return [n.name for n in self.nodes
                if any(p.topic == topic for p in n.publishers)
                or any(s.publish == topic for s in n.subscribers)]

    def topics(self) -> list[str]:
        """Every topic, in order of first mention."""
        seen: dict[str, None] = {}
        for n in self.nodes:
            for p in n.publishers:
                seen.setdefault(p.topic)
            for s in n.subscribers:
                seen.setdefault(s.topic)
                if s.publish:
                    seen.setdefault(s.publish)
        return list(seen)

    def edges(self) -> list[Edge]:
        """Every (publisher node, topic, subscriber node), in node order."""
        out = []
        for n in self.nodes:
            for s in n.subscribers:
                out += [Edge(s.topic, p, n.name) for p in self.publishers_of(s.topic)]
        return out

    def services(self) -> list[str]:
        """Every service, in order of first mention (served or called)."""
        seen: dict[str, None] = {}
        for n in self.nodes:
            for s in n.servers:
                seen.setdefault(s.service)
            for c in n.clients:
                seen.setdefault(c.service)
        return list(seen)

    def server_of(self, service: str) -> str | None:
        """The node that serves ``service`` (check.py: at most one)."""
        return next((n.name for n in self.nodes if any(s.service == service
                                                       for s in n.servers)), None)

    def call_edges(self) -> list[CallEdge]:
        """Every (client node, service), in node order."""
        return [CallEdge(c.service, n.name, self.server_of(c.service))
                for n in self.nodes for c in n.clients]

    def unpaced(self) -> list[str]:
        """The publishers whose messages have no due time every period, as 'node topic':
        saturating (``rate: max``), closed loop or replaying a recording."""
        return [f"{n.name} {p.topic}" for n in self.nodes for p in n.publishers
                if p.period_ns == 0 or p.offsets_ns]

    def longest_period_ns(self) -> int:
        """The longest period among the paced publishers and the clients (0: none): the time
        the slowest of them takes for one message or call."""
        return max([p.period_ns for n in self.nodes for p in n.publishers]
                   + [c.period_ns for n in self.nodes for c in n.clients], default=0)

    def period_ns(self, topic: str) -> int | None:
        """A topic's period: its timer publisher's, or for a stage's output its input's; None
        for a saturating topic (``rate: max``) and what stages make of it."""
        return _follow(self, topic, set(), lambda p: p.period_ns or None, lambda s: None)

    def saturating(self, topic: str) -> bool:
        """``topic`` comes from a saturating publisher (``rate: max``), directly or through
        chain stages."""
        return bool(_follow(self, topic, set(), lambda p: int(p.saturating), lambda s: None))

    def payload_bytes(self, topic: str) -> int | None:
        """A topic's message size: its publisher's, or for a stage's output what it says (or
        its input's)."""
        return _follow(self, topic, set(), lambda p: p.payload_bytes, lambda s: s.publish_bytes)


def _follow(graph: Graph, topic: str, seen: set[str], timer: Callable[[Publisher], int | None],
            stage: Callable[[Subscriber], int | None]) -> int | None:
    """A figure of ``topic``: its timer publisher's (``timer``), or for a stage's output what
    the stage says (``stage``), else its input's, followed upstream."""
    if topic in seen:
        return None
    seen.add(topic)
    for n in graph.nodes:
        for p in n.publishers:
            if p.topic == topic:
                return timer(p)
    for n in graph.nodes:
        for s in n.subscribers:
            if s.publish == topic:
                own = stage(s)
                return own if own is not None else _follow(graph, s.topic, seen, timer, stage)
    return None
