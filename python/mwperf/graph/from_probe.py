"""A probe document (``mwperf probe``'s probe.json: ROS 1, ROS 2, zenoh, MQTT) as a graph file
``mwperf run --graph`` runs: ``mwperf probe ... --write-graph FILE``.

Per topic that carried a message: its measured rate (probe/stats.py: (count - 1) / (last -
first arrival); one message: 1 / the window), and its sizes:
- every message the same size: that size;
- else ``{sizes: [...]}``: the 20 nearest-rank quantiles k/20, k = 1..20, of the sizes the probe
  saw (``size_quantiles`` of the document, probe/stats.py), cycled. Each entry stands for a
  twentieth of the messages, the last is the largest message (so the run checks that the
  transport carries it), and no size is invented (nearest rank: each occurred). The mean of the
  list is at most one twentieth of the size range above the observed mean. A probe keeps the
  distribution, not the order: the list is cycled smallest to largest.
- a document without quantiles (written before they were kept): the median, fixed.

Nodes: the document's ``publishers``/``subscribers`` per topic where the probe knows them (ROS 1
from the master, ROS 2 from DDS discovery, with each endpoint's QoS); zenoh and MQTT probes see
messages, not nodes (emit.py's stand-ins, said in the file).
"""

import shlex
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import click

from .. import __version__
from ..durations import format_ns
from ..errors import RunError
from ..sizes import format_bytes
from .emit import graph_text, runnable
from .model import Qos
from .outfile import check_out, write_whole
from .traffic import Endpoint, Payload, TopicTraffic, Traffic

FLAG = "--write-graph"
DURABILITIES = {"volatile": "volatile", "transient-local": "transient-local",
                "transient": "transient-local", "persistent": "transient-local"}
NODES_NOTE = {
    "ros1": "Nodes: from the ROS master's system state (getSystemState), asked before and after "
            "the window; the probe's own node is left out.",
    "ros2": "Nodes and QoS: from DDS discovery (each writer and reader, its QoS) and "
            "ros_discovery_info (node names); the probe's own participant is left out.",
    "zenoh": "Nodes: a zenoh probe sees samples, not nodes: each key has a publisher node of its "
             "own named after it (KEY_publisher), and probe_listener subscribes to every key.",
    "mqtt": "Nodes: an MQTT probe sees messages, not clients: each topic has a publisher node of "
            "its own named after it (TOPIC_publisher), and probe_listener subscribes to every "
            "topic.",
}
SIZE_NOTE = ("payload: the message sizes the probe saw (ROS 1: the serialized message; ROS 2: "
             "the CDR bytes with their 4-byte encapsulation header; zenoh, MQTT: the payload); "
             "mwperf adds its own 56-byte header to each message, as for {recording:} sizes.")


def graph_out(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
    """``--write-graph FILE``'s click callback: checked before the probe starts."""
    return None if value is None else check_out(value, FLAG)


def write_probe_graph(document: dict[str, Any], path: Path, command: str | None = None) -> str:
    """Write the graph of ``document`` to ``path`` whole; returns the line to print."""
    traffic = probe_traffic(document, path, command)
    if not runnable(traffic):
        raise RunError(f"{FLAG} {path}: no topic carried a message in "
                       f"{format_ns(document['duration_ns'])}: no graph written")
    write_whole(path, graph_text(traffic), FLAG)
    kept = sum(1 for t in traffic.topics if t.left_out is None)
    return (f"graph of {kept} topics written to {path} (mwperf run --graph {path} "
            f"--transport ...)")


def probe_traffic(document: dict[str, Any], path: Path, command: str | None = None) -> Traffic:
    """What ``document`` says of its topics, for emit.py."""
    system = str(document["system"])
    kind = system.split(" ", 1)[0]
    window = format_ns(document["duration_ns"])
    started = datetime.fromtimestamp(document["start_ns"] / 1e9, timezone.utc)
    command = command or shlex.join(["mwperf", *sys.argv[1:]])
    topics = tuple(_topic(t, document["duration_ns"], window) for t in document["topics"])
    known = any("publishers" in t for t in document["topics"])
    note = NODES_NOTE.get(kind) if known or kind in ("zenoh", "mqtt") else None
    return Traffic(
        name=path.stem,
        description=f"{system}: {len(topics)} topics probed for {window} from "
                    f"{started:%Y-%m-%d %H:%M:%S} UTC (mwperf probe --write-graph).",
        header=(f"Graph of a live system, written by mwperf {__version__} on "
                f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M:%S} UTC from",
                f"  {command}",
                f"system: {system}; window: {window} from {started:%Y-%m-%dT%H:%M:%S}Z",
                f"Run it: mwperf run --graph {shlex.quote(str(path))} --transport zenoh "
                "[--link wifi-80211n]"),
        topics=topics, listener="probe_listener",
        nodes_note=note or "Nodes: this probe document names none: each topic has a publisher "
                           "node of its own named after it (TOPIC_publisher).",
        notes=(SIZE_NOTE,))


def _topic(t: dict[str, Any], duration_ns: int, window: str) -> TopicTraffic:
    name, count = str(t["topic"]), int(t.get("count") or 0)
    plain = " (a plain DDS topic, not ROS 2)" if t.get("ros") is False else ""
    if count == 0:
        why = f"; not subscribed: {t['why_not']}" if t.get("why_not") else ""
        return TopicTraffic(name, None, Payload(), "", left_out=f"no message in {window}{why}")
    rate = t.get("rate_hz")
    if rate:
        origin = f"rate {rate:.4g} Hz measured over {window} ({count} messages)"
    else:
        rate = 1e9 / duration_ns
        origin = f"{count} message in {window}: rate = 1 / the window"
    payload, sizes = _payload(t, count)
    return TopicTraffic(name, rate, payload, f"{origin}; {sizes}{plain}",
                        _endpoints(t.get("publishers")), _endpoints(t.get("subscribers")))


def _payload(t: dict[str, Any], count: int) -> tuple[Payload, str]:
    quantiles = [int(q) for q in t.get("size_quantiles") or []]
    if quantiles and quantiles[0] == quantiles[-1]:
        return Payload(fixed=quantiles[0]), f"every message {format_bytes(quantiles[0])}"
    if quantiles:
        steps = len(quantiles) - 1
        return (Payload(sizes=tuple(quantiles[1:])),
                f"sizes: the {steps} quantiles k/{steps} (nearest rank) of {count} messages, "
                f"{format_bytes(quantiles[0])} to {format_bytes(quantiles[-1])}")
    p50, top = int(t.get("size_p50") or 0), int(t.get("size_max") or 0)
    if p50 == top:
        return Payload(fixed=p50), f"size {format_bytes(p50)} (p50 = max)"
    return (Payload(fixed=p50), f"size: the median {format_bytes(p50)} (max "
            f"{format_bytes(top)}; this probe document keeps no size quantiles)")


def _endpoints(items: list[dict[str, Any]] | None) -> tuple[Endpoint, ...] | None:
    if items is None:
        return None
    return tuple(Endpoint(node=e.get("node") or None, qos=qos(e.get("qos")),
                          participant=e.get("participant") or None) for e in items)


def qos(q: dict[str, Any] | None) -> Qos:
    """A ROS 2 endpoint's discovered QoS (spec: shared-ros2probe section 1) as the graph file
    takes it: reliability; durability (transient and persistent, which no mwperf transport
    offers, as transient-local: the nearest, a late joiner gets the history); history with
    its depth (keep-last:N)."""
    if not q:
        return Qos()
    reliability = q.get("reliability") if q.get("reliability") in ("reliable",
                                                                    "best-effort") else None
    history = None
    if q.get("history") == "keep-all":
        history = "keep-all"
    elif q.get("history") == "keep-last":
        depth = q.get("depth")
        history = f"keep-last:{depth}" if isinstance(depth, int) and depth > 0 else "keep-last"
    return Qos(reliability=reliability, history=history,
               durability=DURABILITIES.get(str(q.get("durability"))))
