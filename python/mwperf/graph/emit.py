"""The graph file (YAML, parse.py's format) of what was seen of a system (traffic.py), with a
comment beside every figure saying where it came from.

- Nodes: each known publishing or subscribing node, named as the system names it without the
  leading ``/`` (``/ns/talker`` -> ``ns/talker``; other characters than letters, digits, ``_``,
  ``/``, ``.`` and ``-`` become ``_``); an unnamed DDS participant is ``participant_K``; a topic
  whose publisher is unknown gets a node of its own named after the topic (``imu_publisher``).
- A topic with several publishing nodes: each publishes at the measured rate divided by their
  number (a probe counts the topic's messages, not each publisher's; parse.py wants one period
  per topic).
- A topic without a known subscriber: the listener node (``probe_listener``, ``recorder``)
  subscribes to it, since the graph run measures a topic only where a node receives it, with
  the reliability and durability its (first) publisher offers, as the probe's reader matched.
- A subscription whose QoS no data flows to (a reliable reader of a best-effort writer, a
  transient-local reader of a volatile one) is left out with a comment: in the system it
  receives nothing, and in a run it would never match.
- Chains are not written: what a node publishes because it received is not visible from outside.
"""

import json
import re
import textwrap
from dataclasses import dataclass, field

from .model import Qos
from .reader import MAX_RATE_HZ
from .traffic import Endpoint, Payload, TopicTraffic, Traffic

PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_/.~-]*")
YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "max"}
UNSAFE = re.compile(r"[^A-Za-z0-9_/.-]")


def scalar(text: str) -> str:
    """``text`` as a YAML scalar: plain when it reads back as that string, else quoted."""
    if PLAIN.fullmatch(text) and text.lower() not in YAML_WORDS:
        return text
    return json.dumps(text)


def rate_text(rate_hz: float) -> str:
    """``rate: R`` (6 significant digits), or ``period: Ts`` under 1 Hz (no exponent)."""
    rate_hz = min(rate_hz, MAX_RATE_HZ)
    if rate_hz >= 1:
        return f"rate: {rate_hz:.6g}"
    return f"period: {format(1 / rate_hz, '.6f').rstrip('0').rstrip('.')}s"


def payload_text(payload: Payload, topic: str) -> str:
    if payload.recording is not None:
        return f"{{recording: {scalar(payload.recording)}, topic: {scalar(topic)}}}"
    if payload.sizes:
        return f"{{sizes: [{', '.join(str(s) for s in payload.sizes)}]}}"
    return str(payload.fixed or 0)


def qos_text(qos: Qos) -> str:
    """``, qos: {...}`` for the fields set, else ''."""
    fields = [f"{k}: {scalar(v)}" for k, v in (("reliability", qos.reliability),
                                                 ("durability", qos.durability),
                                                 ("history", qos.history)) if v]
    return f", qos: {{{', '.join(fields)}}}" if fields else ""


@dataclass
class _Node:
    name: str
    note: str
    publishers: list[tuple[str, str]] = field(default_factory=list)
    """(comment, entry)"""
    subscribers: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    """subscriptions left out, and why"""


class _Names:
    """Graph node names: unique, also after '/' -> '_' (check.py refuses two such)."""

    def __init__(self) -> None:
        self.given: dict[tuple[str, str], str] = {}
        self.keys: set[str] = set()

    def of(self, kind: str, original: str, base: str) -> str:
        if (kind, original) in self.given:
            return self.given[(kind, original)]
        base = UNSAFE.sub("_", base.strip("/")) or "node"
        name, k = base, 1
        while name.replace("/", "_") in self.keys:
            k += 1
            name = f"{base}_{k}"
        self.keys.add(name.replace("/", "_"))
        self.given[(kind, original)] = name
        return name


class _Builder:
    def __init__(self, traffic: Traffic) -> None:
        self.traffic = traffic
        self.names = _Names()
        self.nodes: dict[str, _Node] = {}
        self.participants: dict[str, str] = {}
        self.listener_topics: list[str] = []

    def node(self, endpoint: Endpoint) -> _Node | None:
        """The graph node of ``endpoint``; None when neither its node nor participant is known."""
        if endpoint.node:
            name = self.names.of("node", endpoint.node, endpoint.node)
            note = f"node {endpoint.node}"
        elif endpoint.participant:
            if endpoint.participant not in self.participants:
                self.participants[endpoint.participant] = self.names.of(
                    "participant", endpoint.participant,
                    f"participant_{len(self.participants) + 1}")
            name = self.participants[endpoint.participant]
            note = (f"DDS participant {endpoint.participant} (no ROS node name: not a ROS 2 node, "
                    "or its ros_discovery_info was not seen)")
        else:
            return None
        return self.nodes.setdefault(name, _Node(name, note))

    def add(self, t: TopicTraffic) -> None:
        assert t.rate_hz is not None
        publishers: dict[str, tuple[_Node, Qos]] = {}
        for e in t.publishers or ():
            n = self.node(e)
            if n is not None:
                publishers.setdefault(n.name, (n, e.qos))
        comment = f"{t.topic}: {t.origin}"
        if not publishers:  # no node known: a stand-in named after the topic
            name = self.names.of("topic", t.topic, f"{t.topic}_publisher")
            n = self.nodes.setdefault(name, _Node(name, f"stands for {t.topic}'s publisher (its "
                                                        "node is not known)"))
            publishers[name] = (n, (t.publishers or (Endpoint(None),))[0].qos)
        if len(publishers) > 1:
            comment += (f"; {len(publishers)} publishing nodes, each at 1/{len(publishers)} of "
                        "the topic's rate")
        rate = rate_text(t.rate_hz / len(publishers))
        for n, qos in publishers.values():
            n.publishers.append((comment, f"{{topic: {scalar(t.topic)}, {rate}, payload: "
                                          f"{payload_text(t.payload, t.topic)}{qos_text(qos)}}}"))
        offered = [qos for _, qos in publishers.values()]
        subscribed = False
        for e in t.subscribers or ():
            n = self.node(e)
            if n is None or any(s.startswith(f"{{topic: {scalar(t.topic)}") for s in n.subscribers):
                continue
            why = next((w for q in offered for w in [incompatible(q, e.qos)] if w), None)
            if why:  # no data flows to it in the system; in a run it would never match
                n.left_out.append(f"{t.topic}: left out, no data flows to it: {why}")
                continue
            n.subscribers.append(f"{{topic: {scalar(t.topic)}{qos_text(e.qos)}}}")
            subscribed = True
        if not subscribed:  # as the probe's reader: what every writer of the topic offers
            first = offered[0]
            self.listener_topics.append(
                f"{{topic: {scalar(t.topic)}"
                f"{qos_text(Qos(first.reliability, None, first.durability))}}}")


def incompatible(offered: Qos, requested: Qos) -> str | None:
    """Why a subscription with ``requested`` QoS gets nothing from a publisher that offers
    ``offered`` (DDS's request-offered rule for the fields a graph file has), else None."""
    if requested.reliability == "reliable" and offered.reliability == "best-effort":
        return "reliability: the reader asks for reliable, the writer offers best-effort"
    if requested.durability == "transient-local" and offered.durability == "volatile":
        return "durability: the reader asks for transient-local, the writer offers volatile"
    return None


def runnable(traffic: Traffic) -> bool:
    """Whether any topic has a rate: a graph needs at least one node."""
    return any(t.left_out is None and t.rate_hz for t in traffic.topics)


def graph_text(traffic: Traffic) -> str:
    """The graph file's text; it loads with parse.parse_graph. At least one topic must have a
    rate (``runnable``)."""
    build = _Builder(traffic)
    kept = [t for t in traffic.topics if t.left_out is None and t.rate_hz]
    for t in kept:
        build.add(t)
    lines = [f"# {line}" if line else "#" for line in traffic.header]
    lines += ["#", *(f"# {line}" for n in (traffic.nodes_note, *traffic.notes)
                     for line in textwrap.wrap(n, 94))]
    left = [t for t in traffic.topics if t not in kept]
    if left:
        lines.append("# Left out (no rate to give):")
        lines += [f"#   {t.topic}: {t.left_out or 'no rate'}" for t in left]
    lines += [f"name: {scalar(traffic.name)}", "description: >-"]
    lines += [f"  {line}" for line in textwrap.wrap(traffic.description, 94)]
    lines.append("nodes:")
    for n in build.nodes.values():
        if not n.publishers and not n.subscribers:  # a node has at least one
            lines += [f"  # {c}" for why in n.left_out
                      for c in textwrap.wrap(f"{n.note}: {why}", 94)]
            continue
        lines.append(f"  - name: {scalar(n.name)}  # {n.note}")
        if n.publishers:
            lines.append("    publishers:")
            for comment, entry in n.publishers:
                lines += [f"      # {c}" for c in textwrap.wrap(comment, 92)]
                lines.append(f"      - {entry}")
        if n.subscribers:
            lines.append("    subscribers:")
            lines += [f"      - {entry}" for entry in n.subscribers]
        lines += [f"    # {c}" for why in n.left_out for c in textwrap.wrap(why, 94)]
    if build.listener_topics:
        name = build.names.of("listener", traffic.listener, traffic.listener)
        lines.append(f"  # {name}: no subscriber of these topics is known; the graph run "
                     "measures a topic")
        lines.append("  # where a node receives it, so this node subscribes to them (as the "
                     "probe or recorder did)")
        lines.append(f"  - name: {scalar(name)}")
        lines.append("    executor: multi  # one thread per subscription: no topic waits for "
                     "another's callback")
        lines.append("    subscribers:")
        lines += [f"      - {entry}" for entry in build.listener_topics]
    return "\n".join(lines) + "\n"
