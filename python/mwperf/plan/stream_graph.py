"""The single-stream command line as the graph it measures (docs/architecture.md §2.2; issue 38
step 13 of docs/one-path-plan.md): a round trip, one way to N subscribers, throughput, service
calls, several topics and a replay are each a small graph of nodes named after today's roles, so
``--restart pong@1s``, ``--place``, ``--cpu-quota``, the report's labels and the catalogue keep
meaning what they mean. Pure: a point in, a ``Graph`` out; nothing is started.

The names are the ones ``result/upgrade.py`` gives an upgraded v2 result (one owner each:
``upgrade.SENDER``/``RECEIVER``, ``ONE_TOPIC``, ``SERVICE``; ``subscribers.names``;
``topicnames.topic_names``), so a run measured on this graph and an old result of the same
point name their nodes, topics, chains and call edges alike.

What stays a run setting, not a graph fact: duration, warm-up, count, the link and its emulation,
CPU limits, the parts (layers, wire bytes, restarts ...), the transport and its ``--opt``s.
"""

from pathlib import Path

from ..config import PointConfig
from ..emulation.topology import two_hosts
from ..graph.model import Chain, Client, Graph, Node, Publisher, Qos, Server, Subscriber
from ..pong_command import parse as command_words
from ..result.upgrade import ONE_TOPIC, RECEIVER, SENDER, SERVICE
from ..roles import ONE_WAY
from ..subscribers import names as subscriber_names
from ..topicnames import topic_names

NAME = "stream"
"""the graph's name (its source says which kind: ``stream:<kind>``)"""


def stream_graph(point: PointConfig) -> Graph:
    """The graph ``point`` (a stream point: no ``--graph``) measures."""
    if point.graph is not None:
        raise ValueError("a --graph point is its graph already (graph/point.py)")
    build = {"roundtrip": _round_trip, "service": _service}.get(point.mode, _one_way)
    nodes, chains = build(point)
    hosts: dict[str, None] = {}
    for node in nodes:
        if node.host is not None:
            hosts.setdefault(node.host)
    return Graph(NAME, tuple(nodes), tuple(chains), source=f"stream:{point.mode}",
                 hosts=tuple(hosts), phase="aligned",
                 description=f"--mode {point.mode} of the command line")


def _period_ns(point: PointConfig) -> int:
    """The sender's period: 1/rate (the agent's rounding), 0 at rate 0."""
    return max(1, round(1e9 / point.rate)) if point.rate > 0 else 0


def _qos(point: PointConfig) -> Qos:
    """The QoS flags the user gave (the agents are given only those; the rest is the
    transport's default, as a graph file's absent ``qos`` is)."""
    given = set(point.qos_given)
    history = None
    if given & {"history", "depth"}:
        history = point.history if point.history != "keep-last" else f"keep-last:{point.depth}"
    return Qos(reliability=point.reliability if "reliability" in given else None,
               history=history,
               durability=point.durability if "durability" in given else None)


def _host(point: PointConfig, role: str) -> str | None:
    """Where ``role`` runs: its emulated host (``--link`` alone: hosts a and b), its real host
    (--host), else None (here)."""
    if point.topology is not None or point.link is not None:
        return (point.topology or two_hosts()).host_of(role)
    if point.remote is not None:
        return point.remote.host_of(role)
    return None


def _topics(point: PointConfig) -> list[str] | None:
    """The names of several topics (``--topics N``, a replay's recorded topics); None for one."""
    return topic_names(point.topics, point.replay) if point.topics > 1 else None


def _trace(point: PointConfig, index: int) -> str | None:
    """A replay's trace of topic ``index`` (bags/trace.py writes topic-<i>.trace)."""
    if point.replay_trace is None:
        return None
    return str(Path(point.replay_trace) / f"topic-{index}.trace")


def _publisher(point: PointConfig, topic: str, index: int) -> Publisher:
    period = _period_ns(point)
    saturating = point.mode == "throughput"
    return Publisher(topic, 0 if saturating else period, point.payload_bytes, _qos(point),
                     closed_loop=point.mode == "roundtrip" and period == 0,
                     trace=_trace(point, index))


def _round_trip(point: PointConfig) -> tuple[list[Node], list[Chain]]:
    """ping: a timer publisher of each topic's ping (closed loop at rate 0) and a subscription
    of its pong; pong: a subscription of ping that echoes on pong (``--pong relay``: the
    transport's foreign echo; ``--pong-cmd``: the user's program)."""
    names = _topics(point)
    pairs = ([("ping", "pong", ONE_TOPIC["roundtrip"])] if names is None
             else [(f"{n}:ping", f"{n}:pong", n) for n in names])
    qos = _qos(point)
    sender, receiver = SENDER["roundtrip"], RECEIVER["roundtrip"]
    ping = Node(sender,
                publishers=tuple(_publisher(point, out, i) for i, (out, _, _) in enumerate(pairs)),
                subscribers=tuple(Subscriber(back, qos=qos) for _, back, _ in pairs),
                host=_host(point, sender))
    pong = Node(receiver,
                subscribers=tuple(Subscriber(out, busy_loop_ns=point.busy_loop_ns, publish=back,
                                             qos=qos) for out, back, _ in pairs),
                host=_host(point, receiver), executor=point.executor,
                client="relay" if point.pong == "relay" else "agent",
                command=command_words(point.pong_cmd) if point.pong_cmd else ())
    chains = [Chain(name, (out, back)) for out, back, name in pairs]
    return [ping, pong], chains


def _one_way(point: PointConfig) -> tuple[list[Node], list[Chain]]:
    """pub: a timer publisher of each topic (throughput: ``rate: max``); sub, or sub.0 ...
    sub.N-1 (``--subscribers N``): subscriptions of every topic."""
    assert point.mode in ONE_WAY, point.mode
    names = _topics(point) or [ONE_TOPIC[point.mode]]
    sender, receiver = SENDER[point.mode], RECEIVER[point.mode]
    pub = Node(sender, publishers=tuple(_publisher(point, t, i) for i, t in enumerate(names)),
               host=_host(point, sender))
    subs = [Node(name,
                 subscribers=tuple(Subscriber(t, busy_loop_ns=point.busy_loop_ns,
                                              qos=_qos(point)) for t in names),
                 host=_host(point, receiver), executor=point.executor)
            for name in subscriber_names(point.subscribers)]
    return [pub, *subs], []


def _service(point: PointConfig) -> tuple[list[Node], list[Chain]]:
    """server: serves ``s`` (``--server-work``, ``--reply-payload``); client: calls it, one
    caller per ``--clients``, each with ``--in-flight`` calls outstanding."""
    calls = point.service
    assert calls is not None, "a service point has its calls' options"
    sender, receiver = SENDER["service"], RECEIVER["service"]
    server = Node(receiver,
                  servers=(Server(SERVICE, calls.reply_payload_bytes
                                  if calls.reply_payload is not None else None,
                                  calls.server_work_ns),),
                  host=_host(point, receiver), executor=point.executor)
    caller = Client(SERVICE, _period_ns(point), point.payload_bytes, calls.in_flight,
                    calls.call_timeout_ns)
    client = Node(sender, clients=(caller,) * calls.clients, host=_host(point, sender))
    return [server, client], []
