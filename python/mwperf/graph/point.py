"""A graph as a measured point: ``mwperf run --graph`` and a scenario's ``graph:`` key build the
same thing, so a sweep varies a graph's transport, link, CPU limits, QoS and scale (``copies``,
``rate_scale``) like any other point, validated before anything runs.

The point's ``PointConfig`` carries the transport, timing, QoS, link and CPU limits (the
stream's own fields keep their defaults and mean nothing here); its ``graph`` field is the
``GraphPoint``: the graph as it runs (without the nodes left out, scaled), and the part that
runs alone first with ``baseline``."""

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..bridges.registry import DIRECT, bridge
from ..errors import RunError, UsageError
from ..restarts import parse_restarts
from ..soak.gates import POINT_ONLY, parse_gates, refuse
from ..soak.targets import load_targets
from . import bridge_sides, combine
from .check import check_sizes
from .clients import check_run_clients
from .services import check_run as check_services
from .cpu import node_limits
from .hosts import node_place
from . import processes as processes_mod
from .model import Graph
from .placement import placed_topology
from .replay_inputs import refuse as refuse_replay, replay_inputs
from .restarts import check as check_restarts
from .plan import supported
from .scale import parse_copies, parse_rate_scale, parse_topic_scales, scale
from .subgraph import alone, without

Point = Any
"""a config.PointConfig (config imports this module, so it is not imported here)"""

GRAPH_OPTIONS = ("graph", "baseline", "without", "copies", "rate_scale", "processes")
"""the point options only a graph has"""
GRAPH_TAKES = ("transport", "duration", "warmup", "reliability", "history", "depth",
               "durability", "discovery_timeout", "opt", "busy_poll", "link", "link_backend",
               "spin_margin", "peer_timeout", "prevent_cpu_idle", "keep_awake", "cpu_quota", "cpu_pin",
               "rt_priority", "clock_sync", "test_clock", "host", "remote_place", "ssh_config",
               "accept_new_host_key", "count_allocs", "layers", "gates", "targets", "profile",
               "wire_bytes", "alloc_sites", "replay", "replay_topics", "samples", "restart",
               "min_samples", "secure", "bridge", *GRAPH_OPTIONS)
"""every point option a graph point takes (the rest set one stream's rates, sizes and work)"""
CPU_OPTIONS = ("cpu_quota", "cpu_pin", "rt_priority")


@dataclass(frozen=True)
class GraphPoint:
    """What a graph point runs."""

    spec: str
    """as given: a built-in's name or a file"""
    graph: Graph
    """as it runs: ``without`` left out, scaled by ``copies`` and ``rate_scale``"""
    copies: int = 1
    rate_scale: float = 1.0
    processes: str = processes_mod.FILE
    """``--processes``: how the nodes share OS processes (processes.py)"""
    without: tuple[str, ...] = ()
    baseline: str | None = None
    alone: Graph | None = None
    """with ``baseline``: the topic or chain alone, run first"""
    topic_scales: tuple[tuple[str, float], ...] = ()
    """``--rate-scale TOPIC=FACTOR``: those topics' publishers scaled alone"""
    replay: tuple[str, tuple[str, ...]] | None = None
    """``--replay FILE``: the recording and the publishers' topics it drives (replay_inputs.py)"""

    def to_dict(self) -> dict[str, Any]:
        """As the point's configuration records it (the graph by name and size, not whole)."""
        return {"spec": self.spec, "name": self.graph.name, "nodes": len(self.graph.nodes),
                "copies": self.copies, "rate_scale": self.rate_scale,
                **({"processes": self.processes} if self.processes != processes_mod.FILE
                   else {}),
                **({"topic_scales": dict(self.topic_scales)} if self.topic_scales else {}),
                "without": list(self.without), "baseline": self.baseline,
                **({"replay": {"recording": self.replay[0], "topics": list(self.replay[1])}}
                   if self.replay else {})}


def refuse_graph_options(options: dict[str, Any]) -> None:
    """A graph option given without ``--graph``."""
    for name in GRAPH_OPTIONS[1:]:
        if options.get(name) not in (None, "", (), []):
            raise UsageError(f"--{name.replace('_', '-')}: only with --graph (a scenario's "
                             "graph: key)")


def build_graph_point(options: dict[str, Any], stream: Callable[[dict[str, Any]], Point],
                      max_payload: Callable[[str], int]) -> Point:
    """The graph point of ``options`` (``graph`` is given): ``stream`` builds the shared fields
    (config.build_point without the graph's own options), ``max_payload`` is the transport's
    largest payload (its descriptor's: the agent's limit included)."""
    refuse_replay(options)
    given = [n for n, v in options.items() if n not in GRAPH_TAKES
             and v not in (None, False, (), [], "")]
    if given:
        flag = "--" + given[0].replace("_", "-")
        raise UsageError(f"{flag}: not with --graph, whose nodes set their own rates, sizes and "
                         "work; a graph takes --transport, --duration, --warmup, the QoS flags, "
                         "--opt, --busy-poll, --link, the CPU flags, --profile, --wire-bytes, "
                         "--alloc-sites, --samples, --restart, --replay, --min-samples, "
                         "--secure, --bridge, --copies, --processes, --rate-scale, --baseline, "
                         "--without")
    if any(str(o).split("=", 1)[0].strip() == "client" for o in options.get("opt") or ()):
        raise UsageError("--opt client: not with --graph: a graph file says who runs each node "
                         "(client: agent | rclpy on the node)")
    spec = str(options["graph"]).strip()
    names = tuple(n.strip() for n in str(options.get("without") or "").split(",") if n.strip())
    copies = parse_copies(options.get("copies"))
    share = processes_mod.parse_mode(options.get("processes"))
    rate_scale = parse_rate_scale(options.get("rate_scale"))
    topic_scales = parse_topic_scales(options.get("rate_scale"))
    graph, still = combine.load(spec, share)  # several files: --processes one per file
    if names:
        graph = without(graph, names)
    replay = None
    if options.get("replay") not in (None, ""):
        recording = str(options["replay"]).strip()
        graph, topics = replay_inputs(graph, recording, options.get("replay_topics"))
        replay = (recording, topics)
    baseline = str(options["baseline"]).strip() if options.get("baseline") else None
    part = alone(graph, baseline) if baseline else None
    graph = processes_mod.apply(scale(graph, copies, rate_scale, topic_scales), still)
    if part is not None:
        part = processes_mod.apply(scale(part, copies, rate_scale, topic_scales), still)
    targets = load_targets(options.get("targets"))
    gates = parse_gates(options.get("gates"), targets)
    refuse(gates, POINT_ONLY, "single streams only (a graph has no one peer to match: its "
           "edges match each on their own); a graph has cpu<=PCT%, rss<=SIZE, late<=PCT%, "
           "too-late<=PCT%, loss<=PCT%, lost<=N, p50|p99|max<=DURATION, min-samples=N, "
           "rss-growth<=SIZE, fd-growth<=N, threads-growth<=N, live-allocs-growth<=SIZE")
    cfg = stream({k: v for k, v in options.items()
                  if k not in GRAPH_OPTIONS and k not in CPU_OPTIONS
                  and k not in ("remote_place", "gates", "targets", "replay", "replay_topics",
                                "restart")})
    cfg = replace(cfg, gates=tuple(g.text for g in gates if g.source is None), targets=targets)
    restarts = parse_restarts(options.get("restart"))
    if restarts:  # each restart's cost per edge comes from the edges' samples
        cfg = replace(cfg, restarts=restarts, samples=True)
        check_restarts(graph, cfg)
    supported(cfg.transport)
    if cfg.bridge not in (None, DIRECT):
        bridge_sides.check(graph, cfg.bridge, bridge(cfg.bridge).graphs)
    if cfg.samples and cfg.remote is not None:
        raise UsageError("--samples: not yet for a graph on real hosts (--host): each node writes "
                         "its edges' samples where it runs, and they are not fetched; sample a "
                         "graph with its nodes on this machine (loopback or --link)")
    if cfg.layers and cfg.remote is not None:
        raise UsageError("--layers: not yet for a graph on real hosts (--host): its nodes there "
                         "would need the interposer copied and their rows fetched; split a "
                         "graph's layers with its nodes on this machine (loopback or --link)")
    try:
        most: int | None = max_payload(cfg.transport)
    except RunError:
        most = None  # not described by this agent: the sweep skips the point
    check_sizes(graph, cfg.transport, most)
    check_services(graph, cfg.transport, most)
    check_run_clients(graph, cfg)
    place: tuple[tuple[str, str], ...] = ()
    remote: tuple[str, ...] = ()
    if cfg.link is not None or cfg.topology is not None:
        placed = placed_topology(graph, cfg)
        place = placed.place if placed is not None else ()
    elif cfg.remote is not None:  # real hosts: the nodes placed, the daemons here
        cfg = replace(cfg, remote=node_place(graph, cfg.remote, options.get("remote_place"),
                                             cfg.transport))
        place, remote = cfg.remote.place, tuple(name for name, _ in cfg.remote.hosts)
    cpu = node_limits(graph, _text(options.get("cpu_quota")), _text(options.get("cpu_pin")),
                      _text(options.get("rt_priority")), place, remote)
    processes_mod.check(graph, replace(cfg, cpu=cpu), dict(place), remote)
    if cfg.min_samples is not None and graph.unpaced():
        raise UsageError(f"--min-samples: not with a publisher that is not paced "
                         f"({', '.join(graph.unpaced()[:3])}: rate: max, a closed loop or a "
                         "replayed recording): its subscribers cannot know when its last message "
                         "is due; give the graph a --duration long enough instead")
    point = GraphPoint(spec, graph, copies, rate_scale, share, names, baseline, part,
                       topic_scales, replay)
    return replace(cfg, graph=point, cpu=cpu)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
