"""A graph node that is a program of the user's (``command:``): a ROS 2 node under test, a launch
of several, any executable, wired into the graph by its topics.

```yaml
  - name: my_filter
    command: python3 my_node.py --ros-args -r input:={in} -r output:={out}
    subscribers:
      - {topic: /image, publish: /filtered}   # its input and the output it makes of it
  - name: fusion
    command: ./fusion_node                    # several inputs: remap each by name
    remap: {imu: /imu, odom: /odom, fused: /fused}
    subscribers: [{topic: /imu, publish: /fused}, {topic: /odom}]   # /odom: dropped (below)
```
On ros2, and on the raw DDS transports with ``--opt ros2-type`` (a real ROS 2 type under ROS 2's
names), the program gets ``{in}`` / ``{out}`` (the ROS 2 name of its one input / output topic),
``{type}`` (the message type, ``pkg/msg/Type``) and, for each ``remap`` entry, ``--ros-args -r
NAME:=TOPIC`` appended (ROS 2 remapping; a node reads every ``--ros-args`` block).

It must carry mwperf's message through: an output message is the input's data, copied (an echo,
a relay, a filter that passes its input's data on). mwperf matches each message coming out to
the one that went in by the identity it put in it (topic, publishing node, sequence number), so
the edge out of the node measures input -> output: from mwperf's send on the input to mwperf's
receipt on the output, through the program. A node that drops a message: counted lost on the
output's edge. A node that aggregates (one output per several inputs, carrying one of them):
the inputs it did not carry are lost. A node that publishes a message of its own (not a copy):
counted ``foreign``/``malformed`` by the subscription, never as a latency; an output with none
of mwperf's messages is named in the result (partial). Each input's publisher must be one node
(its numbering is the identity); an input with no ``publish`` is one the node only consumes
(its messages end there, not measured).
"""

from typing import Any

from .. import pong_command
from ..errors import UsageError
from ..scenario.source import Item
from .model import Graph, Node, Subscriber
from .reader import Reader

KEYS = ("name", "command", "remap", "subscribers")
SUB_KEYS = ("topic", "publish")
TRANSPORTS = ("ros2", "cyclonedds", "fastdds", "rustdds")
"""where a program's topics can be named for it (ROS 2 names and remapping): the ros2
transport, and the raw DDS transports carrying a real ROS 2 type (``--opt ros2-type``)"""
RAW_DDS_TYPE = "ros2-type"


def is_command(node: Node) -> bool:
    return bool(node.command)


def parse_node(read: Reader, item: Item, fields: dict[str, Item], name: str) -> Node:
    """A ``command:`` node entry (its other keys refused by name)."""
    what = f"node '{name}'"
    for key in fields:
        if key not in KEYS:
            raise read.fail(item.key_line(key), f"{what}: '{key}' is not for a command node "
                            f"(the program does its own work and publishing); a command node "
                            f"takes {', '.join(KEYS)}")
    text = read.text(fields["command"], f"{what}: command")
    try:
        words = pong_command.parse(str(text), f"{what}: command")
    except UsageError as exc:
        raise read.fail(fields["command"], str(exc)) from None
    subscribers = []
    for entry in read.items(fields.get("subscribers"), f"{what}: subscribers"):
        sub = read.mapping(entry, f"{what}: subscriber", SUB_KEYS)
        topic = read.text(sub.get("topic"), f"{what}: subscriber: topic")
        assert topic is not None
        publish = read.text(sub.get("publish"), f"{what}, subscriber of '{topic}': publish",
                            required=False)
        subscribers.append(Subscriber(topic, publish=publish))
    if not subscribers:
        raise read.fail(item, f"{what}: a command node needs its inputs as subscribers "
                        "({topic: IN, publish: OUT}: OUT is what it makes of IN)")
    remap: list[tuple[str, str]] = []
    if "remap" in fields:
        if not isinstance(fields["remap"].value, dict):
            raise read.fail(fields["remap"], f"{what}: remap: expected a mapping of the "
                            "program's own topic name -> a topic of the graph")
        for own, target in fields["remap"].value.items():
            topic = read.text(target, f"{what}: remap {own}")
            assert topic is not None
            remap.append((str(own), topic))
    node = Node(name, subscribers=tuple(subscribers), command=words, remap=tuple(remap))
    try:
        check_node(node)
    except UsageError as exc:
        raise read.fail(item, str(exc)) from None
    return node


def inputs(node: Node) -> list[str]:
    return [s.topic for s in node.subscribers]


def outputs(node: Node) -> list[str]:
    return list(dict.fromkeys(s.publish for s in node.subscribers if s.publish))


def check_node(node: Node) -> None:
    """The node on its own: {in}/{out} name one topic each, remap names its own topics."""
    what = f"node '{node.name}': command"
    used = pong_command.fields(node.command)
    for field, topics in (("in", inputs(node)), ("out", outputs(node))):
        if field in used and len(topics) != 1:
            raise UsageError(f"{what}: '{{{field}}}' stands for one topic and the node has "
                             f"{len(topics)} {'inputs' if field == 'in' else 'outputs'}"
                             f"{' (' + ', '.join(topics) + ')' if topics else ''}; name each "
                             "with remap: {its_name: /topic}")
    mine = set(inputs(node)) | set(outputs(node))
    for own, topic in node.remap:
        if topic not in mine:
            raise UsageError(f"node '{node.name}': remap {own}: '{topic}' is none of its "
                             f"topics ({', '.join(sorted(mine))})")


def check_graph(graph: Graph) -> None:
    """In its graph: each input published by one node, each output received somewhere."""
    where = f"graph '{graph.name}'"
    for node in graph.nodes:
        if not is_command(node):
            continue
        for topic in inputs(node):
            publishers = graph.publishers_of(topic)
            if len(publishers) != 1:
                raise UsageError(f"{where}: command node '{node.name}': its input '{topic}' is "
                                 f"published by {len(publishers)} nodes "
                                 f"({', '.join(publishers)}); a command node's input needs one "
                                 "publisher (its numbering is how an output is matched to it)")
        for topic in outputs(node):
            if not any(s.topic == topic for n in graph.nodes for s in n.subscribers):
                raise UsageError(f"{where}: command node '{node.name}': nobody subscribes to "
                                 f"its output '{topic}', so nothing of it is measured; add a "
                                 f"node with subscribers: [{{topic: {topic}}}]")


def supported(graph: Graph, transport: str, flags: dict[str, bool],
              ros2_type: str | None = None) -> None:
    """A UsageError (exit 2) naming the node when the transport cannot name topics for it
    (``ros2_type``: the raw DDS transports' ``--opt ros2-type``), or a flag of ``flags`` (flag
    -> given) that a command node does not take yet is given."""
    node = next((n for n in graph.nodes if is_command(n)), None)
    if node is None:
        return
    if transport not in TRANSPORTS:
        raise UsageError(f"--graph {graph.name}: command node '{node.name}' runs only with "
                         f"--transport {', '.join(TRANSPORTS)} (its topics are ROS 2 names, "
                         f"remapped), not {transport}")
    if transport != "ros2" and not ros2_type:
        raise UsageError(f"--graph {graph.name} --transport {transport}: command node "
                         f"'{node.name}' reads real ROS 2 messages; add --opt "
                         f"{RAW_DDS_TYPE}=<pkg/msg/Type> (e.g. std_msgs/msg/UInt8MultiArray)")
    given = [flag for flag, on in flags.items() if on]
    if given or node.copy_of is not None:
        raise UsageError(f"--graph {graph.name}: {(given or ['--copies'])[0]} is not yet "
                         f"possible with a command node ('{node.name}': a program of the "
                         "user's, started here as it is)")


def carried(graph: Graph, topic: str, ids: dict[str, int]) -> list[dict[str, Any]]:
    """What arrives on a subscription of ``topic`` carried through command nodes: each input
    topic (followed upstream through command nodes to where mwperf published it) and the
    command node that published it on ``topic`` (spec.rs ``Carried``)."""
    index = {n.name: i for i, n in enumerate(graph.nodes)}
    out = []
    for name in graph.publishers_of(topic):
        node = graph.node(name)
        if not is_command(node):
            continue
        for origin in _origins(graph, node, topic, set()):
            out.append({"topic": origin, "id": ids[origin], "via": index[name]})
    return out


def _origins(graph: Graph, node: Node, output: str, seen: set[str]) -> list[str]:
    """The topics mwperf's own nodes publish whose messages ``node`` puts on ``output``."""
    found = []
    for sub in node.subscribers:
        if sub.publish != output or sub.topic in seen:
            continue
        seen.add(sub.topic)
        upstream = graph.node(graph.publishers_of(sub.topic)[0])
        found += (_origins(graph, upstream, sub.topic, seen) if is_command(upstream)
                  else [sub.topic])
    return found


def awaited(graph: Graph, names: dict[str, str]) -> list[dict[str, Any]]:
    """Each topic a command node reads, with the subscriptions the whole graph has on it, for an
    agent node to wait for in the middleware's graph before READY (spec.rs ``GraphAwait``;
    ``names``: graph topic -> its name on the transport). An input fed by mwperf is awaited by
    that publisher's matched count already; one fed by another program is not. Each topic a
    program publishes is hoped for too (``required`` false: until the discovery timeout, then
    the run goes on): one may create its publisher only when it has something to publish, but
    most create it at start, and a publisher discovered late loses the run's first messages
    (a Fast DDS program's output seen ~2.8 s after the go instant on a loaded machine)."""
    out = []
    for topic in graph.topics():
        writers = [n.name for n in graph.nodes if is_command(n) and topic in outputs(n)]
        if not writers or topic not in names:
            continue
        out.append({"topic": names[topic], "subscribers": 0, "required": False,
                    "publishers": _writers(graph, topic),
                    "about": f"'{topic}' of the graph: "
                             + ", ".join(f"command node '{n}' publishes it" for n in writers)})
    for topic in graph.topics():
        readers = [n.name for n in graph.nodes if is_command(n)
                   and any(s.topic == topic for s in n.subscribers)]
        if not readers or topic not in names:
            continue
        out.append({"topic": names[topic], "publishers": 0,
                    "subscribers": sum(1 for n in graph.nodes for s in n.subscribers
                                       if s.topic == topic),
                    "about": f"'{topic}' of the graph: "
                             + ", ".join(f"command node '{n}' reads it" for n in readers)})
    return out


def _writers(graph: Graph, topic: str) -> int:
    """How many nodes publish ``topic``: the programs and mwperf's own."""
    return sum(1 for n in graph.nodes
               if topic in (outputs(n) if is_command(n) else
                            [*[p.topic for p in n.publishers],
                             *[s.publish for s in n.subscribers if s.publish]]))


def await_writers(graph: Graph, specs: list[dict[str, Any]]) -> None:
    """Each subscription in ``specs`` (mwperf's nodes) of a topic a program publishes waits,
    before its node's READY, to be matched to every writer of it (spec.rs
    ``await_publishers``): the one watcher's graph showing the program's writer did not mean
    another node's reader had matched it (a loaded machine's monitor got none of what a
    program echoed before it exited)."""
    written = {t for n in graph.nodes if is_command(n) for t in outputs(n)}
    for spec in specs:
        for sub in spec.get("subscriptions", []):
            if sub["topic"] in written:
                sub["await_publishers"] = _writers(graph, sub["topic"])


def ros_name(address: str) -> str:
    """A ros2 topic address (``[<domain>/]<base>``) as the ROS 2 name mwperf's endpoints use
    (crates/mwperf-transports/src/middleware/dds_address.rs: ``/mwperf/<base>/ping``)."""
    return f"/mwperf/{address.rpartition('/')[2]}/ping"


def argv(node: Node, names: dict[str, str], message_type: str) -> list[str]:
    """The node's command line: fields replaced, its remaps appended (``names``: graph topic
    -> its name on the transport)."""
    ins, outs = inputs(node), outputs(node)
    line = pong_command.argv(node.command, names[ins[0]] if len(ins) == 1 else "",
                             names[outs[0]] if len(outs) == 1 else "", message_type)
    if node.remap:
        line.append("--ros-args")
        for own, topic in node.remap:
            line += ["-r", f"{own}:={names[topic]}"]
    return line
