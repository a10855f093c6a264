"""Reading a graph file (YAML): every error names FILE:LINE, the node and the topic.

```yaml
name: mobile-robot
nodes:
  - name: imu_driver
    host: a                      # optional: an emulated or real host of the run
    client: agent                # agent (mwperf-agent node) | rclpy (a real rclpy node, ros2)
    executor: single             # single | multi (rclpy: single | multi | events)
    copies: 1                    # N nodes name_1..name_N on the same topics
    publishers:
      - {topic: /imu, rate: 1000, payload: 256}          # or period: 1ms; payload 4KiB
      - {topic: /load, rate: max, payload: 1MiB}         # saturating: back to back
  - name: fusion
    subscribers:
      - {topic: /imu, busy_loop: 50us, publish: /odom}   # a chain stage
    servers:
      - {service: /get_map, reply_size: 4KiB, work: 200us}  # reply_size default: the request's
  - name: planner
    clients:
      - {service: /get_map, rate: 10, size: 64, in_flight: 1, timeout: 1s}  # or period: 100ms
chains:
  imu_to_odom: [/imu, /odom]      # or {topics: [...], deadline: 5ms}
late: {percent: 20, absolute: 5ms}          # iRobot's rule (these are its defaults)
phase: spread                     # or aligned: every publisher's first message at the start
too_late: {percent: 100, absolute: 50ms}
```
"""

import re
from dataclasses import replace
from typing import Any

from ..agent import option_choices
from ..errors import UsageError
from ..emulation.cpu import parse_limits
from ..scenario.source import Item, parse_document
from . import commands
from .check import check_graph
from .clients import CALLBACK_GROUPS, CLIENTS, executors, refusal
from .sizes import recorded, replayed, uniform
from .model import PHASES, Chain, Graph, Lateness, Node, Publisher, Qos, Subscriber
from .reader import Reader, period
from .services import client, server

TOP_KEYS = ("name", "description", "nodes", "chains", "late", "too_late", "phase")
NODE_KEYS = ("name", "host", "client", "executor", "group", "process", "copies", "cpu_quota",
             "cpu_pin", "publishers", "subscribers", "servers", "clients", "command", "remap")
PUB_KEYS = ("topic", "rate", "period", "payload", "qos", "replay")
SUB_KEYS = ("topic", "busy_loop", "publish", "publish_payload", "qos", "callback_group")
QOS_KEYS = ("reliability", "history", "durability")
MAX_COPIES = 1000
PROCESS_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def parse_graph(text: str, where: str, checked: bool = True) -> Graph:
    """A graph from the YAML ``text`` of the file ``where``; ``checked``: on its own
    (check_graph), else as a part of a run of several files (combine.py checks the whole)."""
    read = Reader(where)
    top = read.mapping(parse_document(text, where), "graph", TOP_KEYS)
    if "nodes" not in top:
        raise read.fail(1, "graph: no 'nodes'; a graph is a list of nodes with their "
                        "publishers and subscribers")
    nodes: list[Node] = []
    for item in read.items(top["nodes"], "nodes"):
        nodes += _nodes(read, item)
    if not nodes:
        raise read.fail(top["nodes"], "nodes: empty; give at least one node")
    chains: tuple[Chain, ...] = ()
    if "chains" in top and top["chains"].value is not None:
        if not isinstance(top["chains"].value, dict):
            raise read.fail(top["chains"], "chains: expected a mapping of chain name -> topics")
        chains = tuple(_chain(read, name, item) for name, item in top["chains"].value.items())
    lateness = _lateness(read, top.get("late"), top.get("too_late"))
    name = read.text(top.get("name"), "name", required=False) or where.rsplit("/", 1)[-1]
    description = read.text(top.get("description"), "description", required=False) or ""
    phase = read.text(top.get("phase"), "phase", required=False) or "spread"
    if phase not in PHASES:
        raise read.fail(top["phase"], f"phase '{phase}'; allowed: {', '.join(PHASES)}")
    graph = Graph(name, tuple(nodes), chains, lateness, description, where,
                  tuple(dict.fromkeys(n.host for n in nodes if n.host)), phase)
    if checked:
        check_graph(graph)
    return graph


def _nodes(read: Reader, item: Item) -> list[Node]:
    """One node entry; ``copies: N`` makes N nodes name_1..name_N."""
    fields = read.mapping(item, "node", NODE_KEYS)
    name = read.text(fields.get("name"), "node: name")
    assert name is not None
    what = f"node '{name}'"
    if "command" in fields:  # a program of the user's (commands.py)
        return [commands.parse_node(read, item, fields, name)]
    if "remap" in fields:
        raise read.fail(fields["remap"], f"{what}: remap is for a command node (command: CMD)")
    runner = read.text(fields.get("client"), f"{what}: client", required=False) or "agent"
    if runner not in CLIENTS:
        raise read.fail(fields["client"], f"{what}: client '{runner}'; allowed: "
                        f"{', '.join(CLIENTS)}")
    executor = read.text(fields.get("executor"), f"{what}: executor", required=False) or "single"
    allowed = executors(runner, option_choices("executor"))
    if executor not in allowed:
        raise read.fail(fields["executor"], f"{what}: executor '{executor}'; allowed: "
                        f"{', '.join(allowed)}" + (" (events: with client: rclpy)"
                                                   if runner == "agent" else ""))
    copies = 1
    if "copies" in fields:
        copies = int(read.number(fields["copies"], f"{what}: copies", 1, MAX_COPIES))
        if copies != fields["copies"].value:
            raise read.fail(fields["copies"], f"{what}: copies must be a whole number")
    publishers = tuple(_publisher(read, what, p)
                       for p in read.items(fields.get("publishers"), f"{what}: publishers"))
    subscribers = tuple(_subscriber(read, what, s, runner)
                        for s in read.items(fields.get("subscribers"), f"{what}: subscribers"))
    servers = tuple(server(read, what, s)
                    for s in read.items(fields.get("servers"), f"{what}: servers"))
    clients = tuple(client(read, what, c)
                    for c in read.items(fields.get("clients"), f"{what}: clients"))
    if not publishers and not subscribers and not servers and not clients:
        raise read.fail(item, f"{what}: no publishers, subscribers, servers or clients")
    base = Node(name, publishers, subscribers, servers=servers, clients=clients,
                host=read.text(fields.get("host"), f"{what}: host", required=False),
                executor=executor,
                group=read.text(fields.get("group"), f"{what}: group", required=False),
                process=_process(read, fields, what, runner),
                cpu_quota=_limit(read, fields, "cpu_quota", what),
                cpu_pin=_limit(read, fields, "cpu_pin", what), client=runner)
    refused = refusal(base)
    if refused is not None:
        raise read.fail(item, f"{what}: client: rclpy: {refused}")
    if copies == 1:
        return [base]
    return [replace(base, name=f"{name}_{i}", copy_of=name) for i in range(1, copies + 1)]


def _process(read: Reader, fields: dict[str, Item], what: str, runner: str) -> str | None:
    """A node's ``process``: the name of the OS process it shares (graph/processes.py)."""
    text = read.text(fields.get("process"), f"{what}: process", required=False)
    if text is None:
        return None
    if runner != "agent":
        raise read.fail(fields["process"], f"{what}: process: only mwperf's nodes (client: "
                        f"agent) share a process; a client: {runner} node is a process of "
                        "its own")
    if not PROCESS_NAME.fullmatch(text):
        raise read.fail(fields["process"], f"{what}: process '{text}': letters, digits, '_', "
                        "'-' and '.' only")
    for key in ("cpu_quota", "cpu_pin"):
        if key in fields:
            raise read.fail(fields[key], f"{what}: {key}: not on a node of a process "
                            f"('{text}'): its nodes share the process's CPU; limit a process "
                            "of one node")
    return text


def _limit(read: Reader, fields: dict[str, Item], key: str, what: str) -> str | None:
    """A node's ``cpu_quota`` (50%) or ``cpu_pin`` (1, 0-1), checked as the flags are."""
    text = read.text(fields.get(key), f"{what}: {key}", False)
    if text is None:
        return None
    if "=" in text or "," in text:
        raise read.fail(fields[key], f"{what}: {key}: one value for this node, e.g. "
                        f"{'50%' if key == 'cpu_quota' else '1 or 0-1'}")
    try:
        parse_limits(text if key == "cpu_quota" else None, text if key == "cpu_pin" else None,
                     None, ("node",))
    except UsageError as exc:
        detail = str(exc).split(": ", 1)[-1].split("; use")[0]
        raise read.fail(fields[key], f"{what}: {key}: {detail}; e.g. "
                        f"{'50%' if key == 'cpu_quota' else '1 or 0-1'}") from None
    return text


def _publisher(read: Reader, node: str, item: Item) -> Publisher:
    fields = read.mapping(item, f"{node}: publisher", PUB_KEYS)
    topic = read.text(fields.get("topic"), f"{node}: publisher: topic")
    assert topic is not None
    what = f"{node}, publisher of '{topic}'"
    if "replay" in fields:
        return _replay(read, item, fields, topic, what)
    period_ns = period(read, item, fields, what, saturate=True)
    if "payload" not in fields:
        raise read.fail(item, f"{what}: payload missing (bytes after mwperf's header, e.g. 256 "
                        f"or 4KiB)")
    largest, sizes = _payload(read, fields["payload"], node, topic, what)
    return Publisher(topic, period_ns, largest, _qos(read, fields.get("qos"), what), sizes)


def _replay(read: Reader, item: Item, fields: dict[str, Item], topic: str, what: str
            ) -> Publisher:
    """``replay: {recording: FILE|example, topic: NAME}``: a recording's topic as it was
    published, its messages' sizes and times (looped), e.g. as the input of a node under
    test; rate, period and payload come from it."""
    given = [k for k in ("rate", "period", "payload") if k in fields]
    if given:
        raise read.fail(fields[given[0]], f"{what}: {given[0]} with replay: the recording's "
                        "times and sizes are replayed; give one or the other")
    form = read.mapping(fields["replay"], f"{what}: replay", ("recording", "topic"))
    source = read.text(form.get("recording"), f"{what}: replay: recording")
    name = read.text(form.get("topic"), f"{what}: replay: topic")
    assert source is not None and name is not None
    sizes, offsets, period_ns = replayed(source, name, f"{what}: replay")
    return Publisher(topic, period_ns, max(sizes), _qos(read, fields.get("qos"), what), sizes,
                     offsets)


PAYLOAD_FORMS = ("uniform", "sizes", "recording", "topic")


def _payload(read: Reader, item: Item, node: str, topic: str, what: str
             ) -> tuple[int, tuple[int, ...]]:
    """(the largest message, the sizes cycled through: () when fixed), sizes.py's forms."""
    if not isinstance(item.value, dict):
        return read.size(item, f"{what}: payload"), ()
    form = read.mapping(item, f"{what}: payload", PAYLOAD_FORMS)
    kinds = [k for k in ("uniform", "sizes", "recording") if k in form]
    if len(kinds) != 1 or ("topic" in form) != ("recording" in form):
        raise read.fail(item, f"{what}: payload: give one of a size (256, 4KiB), {{uniform: "
                        "[MIN, MAX]}, {sizes: [A, B, ...]} or {recording: FILE|example, topic: "
                        "NAME}")
    if "uniform" in form:
        bounds = [read.size(b, f"{what}: payload: uniform")
                  for b in read.items(form["uniform"], f"{what}: payload: uniform")]
        if len(bounds) != 2 or bounds[0] > bounds[1]:
            raise read.fail(form["uniform"], f"{what}: payload: uniform takes [MIN, MAX] with "
                            "MIN <= MAX")
        sizes = uniform(node, topic, bounds[0], bounds[1])
    elif "sizes" in form:
        sizes = tuple(read.size(b, f"{what}: payload: sizes")
                      for b in read.items(form["sizes"], f"{what}: payload: sizes"))
        if not sizes:
            raise read.fail(form["sizes"], f"{what}: payload: sizes is empty")
    else:
        source = read.text(form["recording"], f"{what}: payload: recording")
        name = read.text(form["topic"], f"{what}: payload: topic")
        assert source is not None and name is not None
        sizes = recorded(source, name, f"{what}: payload")
    return max(sizes), sizes


def _subscriber(read: Reader, node: str, item: Item, runner: str = "agent") -> Subscriber:
    fields = read.mapping(item, f"{node}: subscriber", SUB_KEYS)
    topic = read.text(fields.get("topic"), f"{node}: subscriber: topic")
    assert topic is not None
    what = f"{node}, subscriber of '{topic}'"
    group = read.text(fields.get("callback_group"), f"{what}: callback_group", required=False)
    if group is not None and runner != "rclpy":
        raise read.fail(fields["callback_group"], f"{what}: callback_group: only in a node with "
                        "client: rclpy (rclpy's callback groups; the agent's node runs each "
                        "subscription on a thread of its own under executor: multi)")
    if group is not None and group not in CALLBACK_GROUPS:
        raise read.fail(fields["callback_group"], f"{what}: callback_group '{group}'; allowed: "
                        f"{', '.join(CALLBACK_GROUPS)}")
    publish = read.text(fields.get("publish"), f"{what}: publish", required=False)
    if "publish_payload" in fields and publish is None:
        raise read.fail(fields["publish_payload"], f"{what}: publish_payload without publish")
    return Subscriber(
        topic,
        busy_loop_ns=read.duration(fields["busy_loop"], f"{what}: busy_loop")
        if "busy_loop" in fields else 0,
        publish=publish,
        publish_bytes=read.size(fields["publish_payload"], f"{what}: publish_payload")
        if "publish_payload" in fields else None,
        qos=_qos(read, fields.get("qos"), what), callback_group=group)


def _qos(read: Reader, item: Item | None, what: str) -> Qos:
    if item is None:
        return Qos()
    fields = read.mapping(item, f"{what}: qos", QOS_KEYS)
    values: dict[str, Any] = {k: read.text(v, f"{what}: qos {k}") for k, v in fields.items()}
    for key in ("reliability", "durability"):
        if key in values and values[key] not in option_choices(key):
            raise read.fail(fields[key], f"{what}: qos {key} '{values[key]}'; allowed: "
                            f"{', '.join(option_choices(key))}")
    history = values.get("history")
    if history is not None and not (history in ("keep-last", "keep-all") or (
            history.startswith("keep-last:") and history[10:].isdigit()
            and int(history[10:]) > 0)):
        raise read.fail(fields["history"], f"{what}: qos history '{history}'; allowed: "
                        "keep-last, keep-last:N (N >= 1), keep-all")
    return Qos(**values)


def _chain(read: Reader, name: str, item: Item) -> Chain:
    what = f"chain '{name}'"
    deadline = None
    topics_item = item
    if isinstance(item.value, dict):
        fields = read.mapping(item, what, ("topics", "deadline"))
        if "topics" not in fields:
            raise read.fail(item, f"{what}: topics missing")
        topics_item = fields["topics"]
        if "deadline" in fields:
            deadline = read.duration(fields["deadline"], f"{what}: deadline")
    topics = [read.text(t, f"{what}: topic") for t in read.items(topics_item, what)]
    if len(topics) < 2:
        raise read.fail(topics_item, f"{what}: a chain is at least two topics, from the first "
                        "publication to the last reception")
    return Chain(name, tuple(t for t in topics if t), deadline)


def _lateness(read: Reader, late: Item | None, too_late: Item | None) -> Lateness:
    default = Lateness()
    out: dict[str, Any] = {}
    for item, key, prefix in ((late, "late", "late"), (too_late, "too_late", "too_late")):
        if item is None:
            continue
        fields = read.mapping(item, key, ("percent", "absolute"))
        if "percent" in fields:
            out[f"{prefix}_percent"] = read.number(fields["percent"], f"{key}: percent", 0, 10000)
        if "absolute" in fields:
            out[f"{prefix}_ns"] = read.duration(fields["absolute"], f"{key}: absolute")
    return replace(default, **out)
