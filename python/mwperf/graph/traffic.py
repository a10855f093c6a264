"""What was seen of a live system's or a recording's topics, as a graph file takes it: per topic
its rate, its message sizes, who published and subscribed, and where each figure came from.

Made by from_probe.py (a probe document) and from_recording.py (a recording); written out as a
graph file by emit.py, which ``mwperf run --graph`` loads (parse.py).
"""

from dataclasses import dataclass, field

from .model import Qos


@dataclass(frozen=True)
class Endpoint:
    """One publisher or subscriber: its node's name as the system spells it (``/ns/talker``),
    or None when unknown; ``participant`` (a DDS participant GUID) groups unnamed ones."""

    node: str | None
    qos: Qos = Qos()
    participant: str | None = None


@dataclass(frozen=True)
class Payload:
    """A topic's message sizes, in one of sizes.py's forms: ``fixed`` bytes, a ``sizes`` list
    cycled through, or a ``recording`` (FILE or ``example``) whose topic's sizes are replayed."""

    fixed: int | None = None
    sizes: tuple[int, ...] = ()
    recording: str | None = None


@dataclass(frozen=True)
class TopicTraffic:
    """One topic. ``rate_hz`` None with ``left_out``: the topic is left out of the graph (no
    message, no rate) and ``left_out`` says why. ``publishers``/``subscribers`` None: unknown
    (the source has no node information), [] known to be none."""

    topic: str
    rate_hz: float | None
    payload: Payload
    origin: str
    """where the rate and the sizes came from, one line (a comment in the file)"""
    publishers: tuple[Endpoint, ...] | None = None
    subscribers: tuple[Endpoint, ...] | None = None
    left_out: str | None = None


@dataclass(frozen=True)
class Traffic:
    """A whole system or recording: its topics and what the file's header says of them."""

    name: str
    description: str
    header: tuple[str, ...]
    """comment lines at the top of the file: the command, the system, the window, the date"""
    topics: tuple[TopicTraffic, ...]
    listener: str
    """the node that subscribes to every topic without a known subscriber (the probe's
    stand-in, ``probe_listener``, or the recorder's, ``recorder``)"""
    nodes_note: str
    """what the source knew of nodes (said in the file)"""
    notes: tuple[str, ...] = field(default=())
    """further comment lines (e.g. what the sizes mean)"""
