"""A recording (ROS 1 .bag, .mcap, rosbag2 folder) as a graph file ``mwperf run --graph`` runs:
``mwperf bag graph RECORDING [--out FILE]``.

One streaming pass (sizes and log times only, as ``mwperf bag info``). Per topic:
- rate: (count - 1) / (last - first log time), what ``mwperf bag info`` prints (a topic with one
  message: 1 / the recording's length);
- sizes: every message the same size: that size; else ``{recording: FILE, topic: T}``, the
  recording's own sizes in their recorded order (graph/sizes.py reads them when the graph is
  loaded: exact, order kept, up to its first 100,000 messages), so the file refers to the
  recording by its absolute path (``example`` stays ``example``);
- publishers: a ROS 1 bag's connections carry the publishing node (``callerid``): one
  publisher node per callerid; a rosbag2 recording carries each topic's offered QoS but no node
  names; otherwise a stand-in node per topic (emit.py). A recording knows no subscribers: the
  ``recorder`` node subscribes to every topic, as the recorder did.
"""

import shlex
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .. import __version__
from ..bags.info import summarise
from ..bags.recording import check_topics, detect_format, messages, open_reader, topics_of
from ..durations import format_ns
from ..errors import UsageError
from ..sizes import format_bytes
from .emit import graph_text, runnable
from .model import Qos
from .sizes import MAX_SEQUENCE
from .traffic import Endpoint, Payload, TopicTraffic, Traffic

SIZE_NOTE = ("payload: the recorded message sizes (ROS 1: the serialized message; ROS 2: the "
             "CDR bytes with their 4-byte encapsulation header); mwperf adds its own 56-byte "
             "header to each message, as for every {recording:} payload.")


def recording_graph(recording: Path, spec: str, out: Path | None, wanted: list[str] | None,
                    command: str | None = None) -> tuple[str, int]:
    """The graph file's text for ``recording`` (``spec``: how the file names it, a path or
    ``example``; ``out``: where it will be written, None: printed) and how many topics it has;
    UsageError when no topic has a rate."""
    traffic = recording_traffic(recording, spec, out, wanted, command)
    if not runnable(traffic):
        raise UsageError(f"{recording}: no topic has two messages or a length to give a rate: "
                         "no graph written")
    return graph_text(traffic), sum(1 for t in traffic.topics if t.left_out is None)


def recording_traffic(recording: Path, spec: str, out_file: Path | None,
                      wanted: list[str] | None, command: str | None = None) -> Traffic:
    kind = detect_format(recording)
    with open_reader(recording) as reader:
        topics = check_topics(recording, topics_of(reader), wanted, flag="--topics")
        times: dict[str, list[int]] = {t.name: [] for t in topics}
        sizes: dict[str, list[int]] = {t.name: [] for t in topics}
        for topic, log_time, raw in messages(recording, reader, topics):
            times[topic].append(log_time)
            sizes[topic].append(len(raw))
        publishers = {t.name: _publishers(reader, t.name) for t in topics}
    start = min((v[0] for v in times.values() if v), default=0)
    span = max((v[-1] for v in times.values() if v), default=start) - start
    named = any(e.node for pubs in publishers.values() for e in pubs)
    out = []
    for t in topics:
        info = summarise(t.name, t.msgtype, times[t.name], sizes[t.name], start) \
            if times[t.name] else None
        out.append(_topic(t.name, info, sizes[t.name], span, spec, publishers[t.name]))
    command = command or shlex.join(["mwperf", *sys.argv[1:]])
    started = datetime.fromtimestamp(start / 1e9, timezone.utc)
    return Traffic(
        name=(out_file or recording).stem,
        description=f"The recording {recording.name} ({kind}, {format_ns(span)} from "
                    f"{started:%Y-%m-%d %H:%M:%S} UTC): {len(out)} topics (mwperf bag graph).",
        header=(f"Graph of a recording, written by mwperf {__version__} on "
                f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M:%S} UTC from",
                f"  {command}",
                f"recording: {recording.resolve()} ({kind}); {format_ns(span)} of log time "
                f"from {started:%Y-%m-%dT%H:%M:%S}Z",
                f"Run it: mwperf run --graph {shlex.quote(str(out_file or 'FILE'))} --transport "
                "zenoh [--link wifi-80211n]"),
        topics=tuple(out), listener="recorder",
        nodes_note=("Nodes: the publishing node of each connection of the ROS 1 bag (its "
                    "callerid)" if named else
                    "Nodes: the recording names no publishing node (no callerid in its "
                    "connections, or a ROS 2 recording): each topic has a publisher node of its "
                    "own named after it (TOPIC_publisher)")
        + "; a recording knows no subscribers: 'recorder' subscribes to every topic, as the "
          "recorder did.",
        notes=(SIZE_NOTE,))


def _topic(name: str, info: Any, sizes: list[int], span: int, spec: str,
           publishers: tuple[Endpoint, ...]) -> TopicTraffic:
    if info is None:
        return TopicTraffic(name, None, Payload(), "", left_out="no message in the recording")
    if info.rate_hz:
        rate = info.rate_hz
        origin = (f"rate {rate:.4g} Hz from the recording: {info.count} messages, "
                  f"{info.count - 1} intervals in "
                  f"{format_ns(info.last_offset_ns - info.first_offset_ns)} of log time")
    elif span > 0:
        rate = 1e9 / span
        origin = f"1 message in the recording's {format_ns(span)}: rate = 1 / its length"
    else:
        return TopicTraffic(name, None, Payload(), "", left_out="one message in a recording "
                            "with no length: no rate")
    low, high = min(sizes), max(sizes)
    if low == high:
        payload, what = Payload(fixed=low), f"every message {format_bytes(low)}"
    else:
        kept = f", its first {MAX_SEQUENCE}" if len(sizes) > MAX_SEQUENCE else ""
        payload = Payload(recording=spec)
        what = (f"sizes: the recording's own, in recorded order ({len(sizes)} messages{kept}, "
                f"{format_bytes(low)} to {format_bytes(high)})")
    return TopicTraffic(name, rate, payload, f"{origin}; {what}", publishers or None, None)


def _publishers(reader: Any, topic: str) -> tuple[Endpoint, ...]:
    """One endpoint per connection of ``topic`` (a ROS 1 callerid as its node; a rosbag2
    connection's first offered QoS)."""
    out = []
    for conn in reader.connections:
        if conn.topic != topic:
            continue
        callerid = getattr(conn.ext, "callerid", None)
        profiles = getattr(conn.ext, "offered_qos_profiles", None) or []
        out.append(Endpoint(node=callerid or None, qos=_qos(profiles[0]) if profiles else Qos()))
    return tuple(out)


def _qos(profile: Any) -> Qos:
    """A rosbag2 offered QoS profile (rosbags' Qos) as the graph file takes it."""
    def named(value: Any) -> str:
        return str(getattr(value, "name", value)).lower()

    reliability = {"reliable": "reliable", "best_effort": "best-effort"}.get(
        named(profile.reliability))
    durability = {"volatile": "volatile", "transient_local": "transient-local"}.get(
        named(profile.durability))
    history = None
    if named(profile.history) == "keep_all":
        history = "keep-all"
    elif named(profile.history) == "keep_last":
        history = f"keep-last:{profile.depth}" if profile.depth > 0 else "keep-last"
    return Qos(reliability=reliability, history=history, durability=durability)
