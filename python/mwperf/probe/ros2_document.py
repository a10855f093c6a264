"""The ROS 2 probe's result from the agent's parsed log (ros2_log.py): each topic's summary
(stats.py) with its publishers and subscribers (node names from ros_discovery_info, QoS), whether
the probe subscribed and why not, samples lost; and the ``ros2`` section: participants and
their nodes, services (``rq/``/``rr/`` topics grouped) and the QoS incompatibilities
(qos_match.py) between the endpoints that are alive at the end."""

from dataclasses import dataclass, field
from typing import Any

from ..errors import RunError
from ..ros2.discovery import DEFAULT_RANGE, Discovery
from .listen import ProbeResult
from .qos_match import mismatches
from .ros2_log import Endpoint, Ros2Log
from .ros2_names import DISCOVERY_INFO, is_ros_internal, ros_topic, ros_type, service_of
from .stats import summarise_topic


@dataclass
class Ros2ProbeResult(ProbeResult):
    """A ProbeResult with the ROS 2 fields: per topic (``extras``, in the order of ``topics``)
    and for the whole domain (``ros2``)."""

    extras: list[dict[str, Any]] = field(default_factory=list)
    ros2: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        document = super().to_dict()
        document["topics"] = [t | e for t, e in zip(document["topics"], self.extras)]
        document["ros2"] = self.ros2
        return document


@dataclass
class Ros2Request:
    """What was asked of the probe (for the document and the window's fallback end)."""

    domain: int
    interface: str | None
    topics: list[str]
    """DDS names asked for; empty = every topic"""
    reliable: bool
    discovery_ns: int
    gap_factor: float
    discovery: Discovery = Discovery(DEFAULT_RANGE)
    """ROS_AUTOMATIC_DISCOVERY_RANGE and ROS_STATIC_PEERS in force"""
    cyclonedds_uri: str | None = None
    """CYCLONEDDS_URI in force (what an rmw_cyclonedds_cpp node would read)"""


def build(log: Ros2Log, request: Ros2Request, cpu_s: float, max_rss_bytes: int | None,
          exit_ns: int) -> Ros2ProbeResult:
    """The result; ``exit_ns`` (when the agent exited) ends the window if the log has no end."""
    if log.discovered_ns is None:
        raise RunError("mwperf-agent probe-ros2 exited without its 'discovered' line: is it an "
                       "up-to-date build? run 'make build'")
    start = log.discovered_ns
    end = max(start, log.end_ns if log.end_ns is not None else exit_ns)
    names = request.topics or sorted(_every_topic(log), key=_display)
    topics, extras = [], []
    for dds in names:
        summary, extra = _topic(log, dds, start, end, request.gap_factor)
        topics.append(summary)
        extras.append(extra)
    interface = log.interface or request.interface or "auto"
    domain = log.domain if log.domain is not None else request.domain
    scope = set(request.topics) if request.topics else None
    ros2 = {"domain": domain, "interface": interface, "discovery_ns": request.discovery_ns,
            "discovery_range": request.discovery.range,
            "static_peers": list(request.discovery.peers_used),
            "cyclonedds_uri": request.cyclonedds_uri,
            "reliable": request.reliable, "taken": log.taken, "lost": log.lost,
            "participants": _participants(log), "services": _services(log),
            "incompatibilities": incompatibilities(log, scope)}
    return Ros2ProbeResult(f"ros2 domain {domain} ({_scope(interface, request)})", start, end - start,
                           cpu_s, request.gap_factor, topics, max_rss_bytes, extras, ros2)


def _scope(interface: str, request: Ros2Request) -> str:
    """``interface lo``, then the discovery settings when they are not ROS 2's defaults."""
    found = request.discovery
    scope = [f"interface {interface}"]
    if found.range != DEFAULT_RANGE or found.peers_used:
        scope.append(Discovery(found.range, found.peers_used, found.localhost_only).describe())
    if request.cyclonedds_uri:
        scope.append("CYCLONEDDS_URI set")
    return ", ".join(scope)


def _every_topic(log: Ros2Log) -> set[str]:
    found = {e.topic for e in [*log.writers.values(), *log.readers.values()]}
    found |= {s.topic for s in log.subscriptions.values()} | set(log.failed)
    return {t for t in found if t and not is_ros_internal(t)}


def _display(dds: str) -> str:
    """How a DDS topic is shown: its ROS name, a service topic as its service, else as is."""
    ros = ros_topic(dds)
    if ros is not None:
        return ros
    service = service_of(dds)
    return f"{service[0]} (service {service[1]})" if service else dds


def _topic(log: Ros2Log, dds: str, start: int, end: int,
           gap_factor: float) -> tuple[Any, dict[str, Any]]:
    subs = [s for s in log.subscriptions.values() if s.topic == dds]
    samples = sorted(zip((t for s in subs for t in s.arrivals),
                         (n for s in subs for n in s.sizes),
                         (h for s in subs for h in s.stamps)))
    writers = [w for w in log.writers.values() if w.topic == dds]
    readers = [r for r in log.readers.values() if r.topic == dds]
    dds_type = (subs[0].type if subs else writers[0].type if writers
                else readers[0].type if readers else "")
    summary = summarise_topic(_display(dds), ros_type(dds_type) if dds_type else "?",
                              [t for t, _, _ in samples], [n for _, n, _ in samples],
                              [h for _, _, h in samples], start, end, gap_factor)
    indexes = [k for k, s in log.subscriptions.items() if s.topic == dds]
    extra = {"dds_topic": dds, "ros": ros_topic(dds) is not None,
             "publishers": [_endpoint(log, w) for w in writers],
             "subscribers": [_endpoint(log, r) for r in readers],
             "subscribed": bool(subs), "why_not": None if subs else _why_not(log, dds, writers),
             "lost": sum(log.lost_by_index.get(k, 0) for k in indexes)}
    return summary, extra


def _why_not(log: Ros2Log, dds: str, writers: list[Endpoint]) -> str:
    if dds in log.failed:
        return log.failed[dds]
    if not writers:
        return "no publisher (only subscribers)"
    if not any(_alive(log, w) for w in writers):
        return "its publishers left"
    return "no publisher when the discovery time ended"


def _endpoint(log: Ros2Log, e: Endpoint) -> dict[str, Any]:
    return {"node": log.node_of.get(e.guid), "participant": e.participant, "endpoint": e.guid,
            "type": ros_type(e.type), "qos": e.qos, "alive": _alive(log, e)}


def _alive(log: Ros2Log, e: Endpoint) -> bool:
    """The endpoint and its participant are still there."""
    return e.alive and log.participants.get(e.participant, True)


def incompatibilities(log: Ros2Log, scope: set[str] | None) -> list[dict[str, Any]]:
    """Every alive writer/reader pair on one topic (of ``scope``; None = every topic but the
    DDS built-ins) that DDS will not match, with why."""
    found = []
    for w in log.writers.values():
        if not _alive(log, w) or w.topic == DISCOVERY_INFO or w.topic.startswith("DCPS"):
            continue
        if scope is not None and w.topic not in scope:
            continue
        for r in log.readers.values():
            if not _alive(log, r) or r.topic != w.topic:
                continue
            reasons = mismatches(w.qos, r.qos, w.type, r.type)
            if not reasons:
                continue
            writer = {"node": log.node_of.get(w.guid), "endpoint": w.guid}
            reader = {"node": log.node_of.get(r.guid), "endpoint": r.guid}
            topic = _display(w.topic)
            found.append({"topic": topic, "writer": writer, "reader": reader,
                          "reasons": [_ros_types(x) for x in reasons],
                          "text": f"no data flows from {writer['node'] or 'writer ' + w.guid} to "
                                  f"{reader['node'] or 'reader ' + r.guid} on {topic}: "
                                  + "; ".join(_ros_types(x) for x in reasons)})
    return sorted(found, key=lambda i: (i["topic"], i["text"]))


def _ros_types(reason: str) -> str:
    """A type reason with the ROS names of the types (``pkg::msg::dds_::T_`` -> ``pkg/msg/T``)."""
    if not reason.startswith("type: "):
        return reason
    return " ".join(ros_type(word.rstrip(",")) + ("," if word.endswith(",") else "")
                    for word in reason.split(" "))


def _participants(log: Ros2Log) -> list[dict[str, Any]]:
    guids = list(log.participants)
    guids += sorted({e.participant for e in [*log.writers.values(), *log.readers.values()]
                     if e.participant and e.participant not in log.participants})
    return [{"guid": g, "nodes": log.nodes.get(g, []), "alive": log.participants.get(g, True)}
            for g in guids]


def _services(log: Ros2Log) -> list[dict[str, Any]]:
    services: dict[str, dict[str, Any]] = {}
    for kind, table in (("writer", log.writers), ("reader", log.readers)):
        for e in table.values():
            found = service_of(e.topic)
            if found is None or not _alive(log, e):
                continue
            name, side = found
            service = services.setdefault(name, {"name": name, "type": ros_type(e.type),
                                                 "servers": [], "clients": []})
            # requests go from clients (writers) to servers (readers); replies the other way
            role = "clients" if (side == "request") == (kind == "writer") else "servers"
            who = log.node_of.get(e.guid) or e.guid
            if who not in service[role]:
                service[role].append(who)
    return [services[name] for name in sorted(services)]
