"""One measurement point, validated: what the user asked for, resolved against the agent.

Every error names the flag it is about, what was given and what is allowed.
"""

import math
from collections.abc import Callable
from dataclasses import replace, asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .options import KINDS
from .parts import parts_for
from .restarts import parse_restarts
from .durations import parse_duration
from .clocksync import parse_test_clock
from .emulation.links import parse_link
from .emulation.network import BACKENDS as LINK_BACKENDS
from .emulation.network import check_transport as check_link_transport
from .emulation.network import link_specs, require_root
from .emulation.cpu import CpuLimits, parse_limits
from .emulation.topology import Topology, two_hosts
from .remote.plan import RemotePlan, parse_remote
from .roles import MEASURING_ROLE, MODES, ROLES, SENDERS  # noqa: F401 (the names config gives)
from .agent import option_choices, option_default, option_limit
from . import pong_command
from .errors import RunError, UsageError
from . import rclpy_roles
from .security.modes import parse_secure, zenoh_link
from .sizes import payload_size
from .subscribers import check_subscribers, parse_subscribers
from .transports import hook, profile, profiles

if TYPE_CHECKING:
    from .calls import ServicePoint
    from .graph.point import GraphPoint

DEFAULTS: dict[str, str] = {"transport": "udp", "mode": "roundtrip", "warmup": "1s"}
"""``mwperf run``'s own defaults (a point warms up 1 s; the agent by itself, 0 s). Every other
option's default is the agent's, written once on its command line (cli.rs) and read through
``mwperf-agent options --json``: :func:`default`."""
DURATION_HINT = "use e.g. 10s, 500ms, 2m"
SESSION_TIMEOUT_NS = 5_000_000_000
"""the default --session-timeout: TCP's first retransmissions and DDS's heartbeats all retry
well within 5 s of a link coming back, so a session still silent then is taken as dead"""
RELAY_EXECUTORS = ("events",)
"""executors only a foreign echo offers (ros2's rclpy relay: rclpy's EventsExecutor); checked
against the transport's once it is known"""
PONGS = ("agent", "relay")
"""who answers a round trip: mwperf's own pong, or a foreign echo (ROS 1 topic_tools relay, a ROS 2
rclpy relay node)"""
TRANSPORTS = ("udp", "tcp", "uds", "iceoryx2", "cyclonedds", "fastdds", "rustdds", "zenoh", "mqtt", "foxglove",
              "ros1", "ros2")
"""every transport mwperf knows, in side-by-side order (an agent may be built without some)"""
OPTIONS: dict[str, str] = KINDS
"""every option of a point, keyed like the command-line flags (``-`` as ``_``), as
``build_point`` takes it: ``text`` (a value), ``flag`` (a boolean) or ``repeated`` (a list of
values). Derived from the one definition, python/mwperf/options.py (which also makes the
``mwperf run`` flags): scenario files accept exactly these keys."""


@dataclass(frozen=True)
class PointConfig:
    """A single measurement: one transport, one mode, one rate, one payload."""

    transport: str
    mode: str
    rate: float
    """messages per second; 0 = as fast as possible (roundtrip: closed loop, one in flight)"""
    payload: str
    """as given: a catalogue name or a byte count"""
    payload_bytes: int
    duration_ns: int | None
    """measured time after warm-up; None when ``count`` is used instead"""
    count: int | None
    warmup_ns: int
    peer_timeout_ns: int
    busy_poll: bool = False
    prevent_cpu_idle: bool = False
    keep_awake: bool = False
    """``--keep-awake``: a SCHED_IDLE spinner on each CPU while the point runs (parts/keep_awake.py)"""
    secure: str | None = None
    """``--secure MODE``: DDS-Security (security/modes.py: auth, sign, encrypt); None = plain"""
    spin_margin_ns: int = 100_000
    samples: bool = False
    reliability: str = "reliable"
    history: str = "keep-last"
    depth: int = 10
    durability: str = "volatile"
    opts: tuple[str, ...] = ()
    """transport-specific ``KEY=VALUE`` settings, passed to both agents as ``--opt``"""
    discovery_timeout_ns: int = 10_000_000_000
    pong: str = "agent"
    """agent, relay (--pong relay) or command (--pong-cmd)"""
    client: str = "agent"
    """who plays one side of the stream (``--opt client=``): the agent, or rclpy (the echo,
    each sub, the server, or a throughput stream's publisher as a real rclpy node:
    rclpy_roles.py)"""
    pong_cmd: str | None = None
    """``--pong-cmd CMD``: the user's program as the echo (pong_command.py), as given"""
    qos_given: tuple[str, ...] = ()
    """the QoS flags the user gave (only those are passed to the agents; names as in the flags)"""
    topics: int = 1
    """topics per agent, each with its own sequence numbers, statistics and schedule at ``rate``"""
    executor: str = "single"
    """how the pong/sub runs the topics' callbacks: ``single`` (serialized) or ``multi``"""
    busy_loop_ns: int = 0
    """CPU work inside every pong/sub callback (a spin, not a sleep)"""
    link: str | None = None
    """``--link`` as given (a preset and/or KEY=VALUE items); None = both agents on loopback"""
    link_backend: str = "auto"
    """how the link is emulated: auto (netem if the kernel has it), netem or userspace"""
    session_timeout_ns: int = SESSION_TIMEOUT_NS
    """after a link outage: no delivery within this long after the link is back = session dead"""
    cpu: CpuLimits = CpuLimits()
    """CPU quota, pinning and real-time priority of the agents (emulation/cpu.py)"""
    topology: Topology | None = None
    """a scenario's hosts, links and placement (emulation/topology.py); None = --link alone
    (hosts a and b) or loopback"""
    subscribers: int = 1
    """one-way: sub agents per topic, each measuring its own stream (subscribers.py)"""
    remote: RemotePlan | None = None
    """real hosts over SSH (``--host``) and where each role and daemon runs (remote/)"""
    clock_sync: bool = False
    """one-way: measure the pub clock's offset and drift and correct every sample (clocksync.py)"""
    test_clock: tuple[tuple[str, int, float], ...] = ()
    """TEST ONLY: (emulated host, CLOCK_MONOTONIC offset s, drift ppm) given to its agents"""
    count_allocs: bool = False
    """count every heap allocation of each agent per phase (LD_PRELOAD libmwperf_alloc.so)"""
    alloc_sites: bool = False
    layers: bool = False
    """split each message's latency into layers (parts/layers.py: LD_PRELOAD libmwperf_layers.so)"""
    """record each agent's allocations with their backtraces (heaptrack) and list the top call
    sites (allocsites/)"""
    replay: dict[str, Any] | None = None
    """``--replay``: the recording replayed (file, rate, window, topics in topic-index order)"""
    replay_trace: str | None = None
    """``--replay``: the folder of the per-topic traces the sender streams (bags/trace.py)"""
    wire_bytes: bool = False
    """count bytes and packets on the wire per phase (wire.py: the userspace emulator's packet
    log on every emulated wire; a clean two-host link when no --link is given)"""
    idle_ns: int = 0
    """the sender keeps its endpoint open this long after the last reply, sending nothing"""
    profile: bool = False
    """sample every local agent and daemon with perf during the point (profiling/)"""
    bridge: str | None = None
    """``--bridge``: a bridge in the path (bridges/), ``direct`` (the same path without one), or
    None (not asked: the plain two-host layout)"""
    graph: "GraphPoint | None" = None
    """``--graph`` (a scenario's ``graph:``): a graph of nodes instead of one stream
    (graph/point.py); the stream's own fields then keep their defaults"""
    restarts: tuple[tuple[str, int], ...] = ()
    """``--restart TARGET@T``: (target, ns after the measured phase starts) (restarts.py)"""
    service: "ServicePoint | None" = None
    """``--mode service``: the calls' options (calls.py); None for streams"""
    min_samples: int | None = None
    """``--min-samples``: at least this many measured messages (the agent's ``--min-count``):
    at a rate the point runs ``measure_ns``, at rate 0 until them or the duration, whichever
    is later; None = the duration alone decides"""

    gates: tuple[str, ...] = ()
    """``--gate`` / a scenario's ``gates:``: pass/fail checks on the result (soak/gates.py),
    normalised; the resources part parses and checks them"""
    targets: tuple[tuple[str, str], ...] = ()
    """``--targets FILE``: the target file's gates as (expression, source) pairs
    (soak/targets.py), checked with ``gates``"""

    @property
    def measure_ns(self) -> int | None:
        """The measured time as planned: ``duration_ns``, at a rate stretched to ``min_samples``
        periods when that is longer (the agent's period: 1e9 / rate, rounded); at rate 0 a lower
        bound. A graph's: stretched to ``min_samples`` periods of its slowest publisher or
        client, the same for every node (each of its edges and calls gets at least that many).
        None with ``count``."""
        if self.duration_ns is None or self.min_samples is None:
            return self.duration_ns
        if self.graph is not None:
            return max(self.duration_ns, self.min_samples * self.graph.graph.longest_period_ns())
        if self.rate <= 0:
            return self.duration_ns
        return max(self.duration_ns, self.min_samples * max(1, round(1e9 / self.rate)))

    @property
    def max_queued(self) -> int:
        """The history as a queue length for a broker: keep-last N -> N, keep-all -> 0 (no limit)."""
        if self.history == "keep-all":
            return 0
        if self.history.startswith("keep-last:"):
            return int(self.history.split(":", 1)[1])
        return self.depth

    def option(self, key: str) -> str | None:
        """The value of ``--opt KEY=VALUE`` (the last one given), or None."""
        found = None
        for item in self.opts:
            name, _, value = item.partition("=")
            if name.strip() == key:
                found = value.strip()
        return found

    def to_dict(self) -> dict[str, Any]:
        """The point as plain JSON-able data (the run-result's ``config``)."""
        data = asdict(self)
        data["opts"] = list(self.opts)
        data["cpu"] = self.cpu.to_dict()
        del data["qos_given"]
        del data["replay_trace"]  # a temporary folder; ``replay`` says what was replayed
        if self.replay is None:
            del data["replay"]
        if self.remote is None:
            del data["remote"]
        else:
            data["remote"] = self.remote.to_dict()
        if self.topology is None:
            del data["topology"]
        else:
            data["topology"] = self.topology.to_dict()
        if not self.clock_sync:
            del data["clock_sync"]
        if not self.count_allocs:
            del data["count_allocs"]
        if not self.alloc_sites:
            del data["alloc_sites"]
        if not self.layers:
            del data["layers"]
        if not self.wire_bytes:
            del data["wire_bytes"]
        if not self.idle_ns:
            del data["idle_ns"]
        if not self.profile:
            del data["profile"]
        if self.bridge is None:
            del data["bridge"]
        if self.min_samples is None:
            del data["min_samples"]
        if self.pong_cmd is None:
            del data["pong_cmd"]
        if self.secure is None:
            del data["secure"]
        if self.client == "agent":
            del data["client"]
        if not self.gates:
            del data["gates"]
        else:
            data["gates"] = list(self.gates)
        if not self.targets:
            del data["targets"]
        else:
            data["targets"] = [list(item) for item in self.targets]
        if self.service is None:
            del data["service"]
        else:
            data["service"] = self.service.to_dict()
        if self.graph is None:
            del data["graph"]
        else:
            data["graph"] = self.graph.to_dict()
        if not self.restarts:
            del data["restarts"]
        else:
            data["restarts"] = [list(item) for item in self.restarts]
        if not self.test_clock:
            del data["test_clock"]
        else:
            data["test_clock"] = [list(item) for item in self.test_clock]
        return data


def default(key: str) -> str:
    """The default of point option ``key`` (as in ``OPTIONS``): ``mwperf run``'s own, else the
    agent's (its QoS defaults are ROS 2's: recorded in the config, passed on only when given)."""
    return DEFAULTS[key] if key in DEFAULTS else option_default(key)


class Catalogue(Protocol):
    """What validation needs from the agent (an ``agent.Agent`` provides it)."""

    def transports(self) -> list[str]: ...

    def payloads(self) -> dict[str, int]: ...


def build_point(options: dict[str, Any], agent: Callable[[], Catalogue]) -> PointConfig:
    """Validate raw option values (strings as typed, None = not given) into a PointConfig.

    ``options`` keys: transport, mode, rate, payload, duration, count, warmup, peer_timeout,
    spin_margin, topics, executor, busy_loop, link, link_backend, session_timeout, cpu_quota, cpu_pin,
    rt_priority (strings) and busy_poll, prevent_cpu_idle, samples (booleans). ``agent`` is
    called only once the values that need no agent are valid, so those errors come first.
    """
    def given(key: str) -> str:
        value = options.get(key)
        return str(default(key) if value is None else value)

    from .graph.point import build_graph_point, refuse_graph_options  # graph -> scenario -> here

    if options.get("graph") not in (None, ""):
        return build_graph_point(options, lambda rest: build_point(rest, agent),
                                 lambda transport: profile(transport).max_payload)
    refuse_graph_options(options)

    if options.get("count") is not None and options.get("duration") is not None:
        raise UsageError("--count and --duration are mutually exclusive; give one of them")
    count = _count(options["count"]) if options.get("count") is not None else None
    min_samples = _min_samples(options.get("min_samples"))
    if min_samples is not None and count is not None:
        raise UsageError("--min-samples: not with --count (which already sets how many messages "
                         "are measured); give one of them")
    mode = _choice("--mode", "mode", given("mode"), MODES)
    rate = _rate(given("rate"))
    duration_ns = None if count is not None else _duration("--duration", given("duration"), 1)
    warmup_ns = _duration("--warmup", given("warmup"), 0)
    peer_timeout_ns = _duration("--peer-timeout", given("peer_timeout"), 1)
    spin_margin_ns = _duration("--spin-margin", given("spin_margin"), 0)
    qos = _qos(options, mode)
    workload = _workload(options)
    subscribers = parse_subscribers(options.get("subscribers"),
                                    option_limit("subscribers"))
    foreign = qos["pong"] != "agent" or (qos["client"] == "rclpy" and mode == "service")
    agents = ROLES[mode][1:] if foreign else ROLES[mode]  # a relay, an rclpy server: no agent
    if options.get("wire_bytes"):
        options = _wire_bytes(options, str(given("transport")).strip())
    if (options.get("layers") and (options.get("link") or options.get("topology"))
            and str(options.get("link_backend") or "auto").strip() == "auto"):
        # the userspace emulator stamps each message's passage: the link's own layer
        options = {**options, "link_backend": "userspace"}
    link = _link(options)
    hosts = link.get("topology") or (two_hosts() if link.get("link") else None)
    real = parse_remote(options, ROLES[mode], None)  # real hosts (the transport is checked below)
    cpu = parse_limits(options.get("cpu_quota"), options.get("cpu_pin"),
                       options.get("rt_priority"), agents,
                       hosts.place if hosts else real.away() if real else (),
                       tuple(name for name, _ in real.hosts) if real else ())
    catalogue = agent()
    transport = _choice("--transport", "transport", given("transport"), catalogue.transports())
    client = qos.pop("client") or "agent"
    rclpy_roles.check(client, transport, mode,
                      rate if options.get("rate") is not None else 0.0)
    echo = "--pong-cmd" if qos["pong"] == "command" else f"--pong {qos['pong']}"
    relays = [t for t in TRANSPORTS  # their hooks start a foreign echo / the user's program
              if (hook(t).pong_command if qos["pong"] == "command" else hook(t).relay)]
    if qos["pong"] != "agent" and transport not in relays:
        raise UsageError(f"{echo}: only with --transport "
                         f"{' or '.join(relays)} (got {transport}); other transports "
                         f"use --pong agent")
    if qos["pong"] != "agent" and mode != "roundtrip":
        raise UsageError(f"{echo}: only for --mode roundtrip (a relay echoes)")
    offered = (hook(transport).relay_executors if qos["pong"] == "relay"
               else rclpy_roles.EXECUTORS if client == "rclpy" else ())
    if qos["pong"] != "agent" and workload != _workload({}) and not offered:
        raise UsageError(f"{echo}: the foreign echo has no --topics, --executor or "
                         f"--busy-loop; use --pong agent for those")
    allowed = offered or option_choices("executor")
    if workload["executor"] not in allowed:
        where = (f"{echo} on {transport}" if qos["pong"] == "relay"
                 else "rclpy's executors (--opt client=rclpy)" if offered
                 else "mwperf's agents")
        raise UsageError(f"--executor {workload['executor']}: {where} have "
                         f"{', '.join(allowed)}" + ("" if offered else
                                                    " (events: ros2's rclpy echo, --pong relay)"))
    payload = given("payload").strip()
    payload_bytes = payload_size("--payload", payload, catalogue.payloads())
    service = _service(options, mode, payload_bytes, catalogue.payloads())
    point = PointConfig(
        transport=transport, mode=mode, rate=rate, payload=payload,
        payload_bytes=payload_bytes,
        duration_ns=duration_ns, count=count, warmup_ns=warmup_ns,
        peer_timeout_ns=peer_timeout_ns, busy_poll=bool(options.get("busy_poll")),
        prevent_cpu_idle=bool(options.get("prevent_cpu_idle")),
        keep_awake=bool(options.get("keep_awake")),
        secure=parse_secure(options.get("secure")),
        spin_margin_ns=spin_margin_ns, samples=bool(options.get("samples")), **qos, **workload,
        client=client,
        **link,
        cpu=cpu, subscribers=subscribers,
        remote=parse_remote(options, ROLES[mode], transport),
        clock_sync=bool(options.get("clock_sync")),
        test_clock=parse_test_clock(options.get("test_clock"), hosts.hosts if hosts else None),
        count_allocs=bool(options.get("count_allocs")),
        alloc_sites=bool(options.get("alloc_sites")),
        layers=bool(options.get("layers")),
        wire_bytes=bool(options.get("wire_bytes")),
        profile=bool(options.get("profile")),
        idle_ns=_duration("--idle", options.get("idle") or ("2s" if options.get("wire_bytes")
                                                           else "0s"), 0),
        min_samples=min_samples, service=service,
        restarts=parse_restarts(options.get("restart")),
    )

    if options.get("bridge") is not None:
        point = _bridged(point, str(options["bridge"]).strip(), options.get("topology"))
    elif point.opts:
        _check_opts(transport, point.opts)
    if transport == "zenoh":  # its link and --secure agree, before anything starts
        zenoh_link(point.secure, point.option("link"))
    if point.link is not None or point.topology is not None:
        check_link_transport(transport, point.option, point.topology, ROLES[mode])
    if point.remote is not None and mode == "oneway" and not point.clock_sync and \
            any(point.remote.host_of("pub") != point.remote.host_of(s) for s in ("sub",)):
        point = replace(point, clock_sync=True)  # two real clocks: measure their offset
    rclpy_roles.refuse(point, options)
    for part in parts_for(point):  # what a part cannot do with the rest of the point
        point = part.validate(point, options)
    if point.subscribers > 1:
        check_subscribers(point, options)
    return point


def _service(options: dict[str, Any], mode: str, payload_bytes: int,
             catalogue: dict[str, int]) -> "ServicePoint | None":
    """The calls of a ``--mode service`` point (calls.py); their options refused elsewhere.
    Whether the transport has services is the calls part's check (parts/calls.py)."""
    from .calls import build_service, refuse_service_options
    if mode != "service":
        refuse_service_options(options, mode)
        return None
    return build_service(options, payload_bytes, catalogue)


def _wire_bytes(options: dict[str, Any], transport: str) -> dict[str, Any]:
    """--wire-bytes counts with the userspace emulator's packet log (wire.py): its backend on
    every link, and a clean link between two emulated hosts when none is given — except for a
    transport that stays on one machine (shared memory, Unix sockets): nothing crosses a wire,
    and its result says so (a sweep over every transport goes on)."""
    if options.get("link") is None and options.get("topology") is None:
        try:
            known = profiles()
        except RunError:
            known = {}  # no agent: the transport check below says so
        local = transport in known and not known[transport].crosses_hosts
        if local:
            return options
    backend = str(options.get("link_backend") or "auto").strip()
    if backend == "netem":
        raise UsageError("--wire-bytes: counts the packets mwperf's userspace link emulator "
                         "forwards; use --link-backend userspace or auto (not netem)")
    extra: dict[str, Any] = {"link_backend": "userspace"}
    if options.get("link") is None and options.get("topology") is None:
        extra["link"] = "delay=0ms"  # two emulated hosts, nothing impaired
    return {**options, **extra}


def _check_opts(transport: str, opts: tuple[str, ...]) -> None:
    """Every --opt key is one the transport knows (its descriptor's), before anything starts."""
    known = profiles().get(transport)
    if known is None:
        return  # an unknown transport is reported on its own
    for item in opts:
        key, eq, _ = item.partition("=")
        key = key.strip()
        if not eq or not key:
            # the agent would refuse it at the start of the run (found by tests/test_properties.py)
            raise UsageError(f"--opt: '{item}' is not KEY=VALUE (e.g. --opt "
                             f"{next(iter(known.opts), 'key')}=VALUE)")
        if key not in known.opts:
            allowed = ", ".join(known.opts) or "none (it takes no --opt)"
            raise UsageError(f"--opt {key}: not an option of {transport}; allowed: {allowed}")


def _bridged(point: PointConfig, name: str, topology: Any) -> PointConfig:
    """``--bridge NAME``, checked against the transport and the rest of the point; with --link
    the bridge layout (bridges/topology.py: each half on a host of its own)."""
    from .bridges import bridge, check_pair
    from .bridges.topology import bridge_hosts
    check_pair(name, point.transport, point.mode)
    if point.subscribers > 1 and name != "direct" and not bridge(name).fanout:
        raise UsageError(f"--bridge {name} --subscribers {point.subscribers}: not through "
                         f"{name}: the publisher meets the bridge's one reader, not the "
                         "subscribers behind it, so it cannot wait for them; use --subscribers "
                         "1, or --bridge mqtt-bridge or direct")
    for flag, given in (("--host", point.remote is not None), ("--pong relay", point.pong != "agent"),
                        ("a scenario's hosts:", topology is not None)):
        if given:
            raise UsageError(f"--bridge {name}: not together with {flag} (yet); a bridged point "
                             f"runs on loopback or, with --link, on its own four hosts")
    return replace(point, bridge=name,
                   topology=bridge_hosts() if point.link is not None else None)


def _link(options: dict[str, Any]) -> dict[str, Any]:
    """--link and --link-backend, checked (the spec's grammar: emulation/links.py), and a
    scenario's topology (``options['topology']``, emulation/topology.py's ``to_dict``)."""
    text = options.get("link")
    backend = str(options.get("link_backend") or "auto").strip()
    topology = (Topology.from_dict(options["topology"]) if options.get("topology") is not None
                else None)
    if text is None and topology is None:
        for key in ("link_backend", "session_timeout"):
            if options.get(key) is not None:
                raise UsageError(f"--{key.replace('_', '-')}: only together with --link")
        return {"link": None, "link_backend": "auto"}
    if text is not None:
        parse_link(str(text))
    if topology is not None:
        link_specs(topology, None if text is None else str(text))
    session = options.get("session_timeout")
    session_ns = (SESSION_TIMEOUT_NS if session is None
                  else _duration("--session-timeout", str(session), 1))
    require_root()
    return {"link": None if text is None else str(text).strip(), "topology": topology,
            "link_backend": _choice("--link-backend", "link backend", backend, LINK_BACKENDS),
            "session_timeout_ns": session_ns}


def _workload(options: dict[str, Any]) -> dict[str, Any]:
    """--topics --executor --busy-loop, checked (the pong/sub callback load of seed 001)."""
    def given(key: str) -> str:
        value = options.get(key)
        return str(default(key) if value is None else value).strip()

    text, most = given("topics"), option_limit("topics")  # one thread per topic on each side
    try:
        topics = int(text)
    except ValueError:
        raise UsageError(f"--topics: cannot parse '{text}'; use a whole number from 1 to "
                         f"{most}, e.g. 3") from None
    if not 1 <= topics <= most:
        raise UsageError(f"--topics: must be from 1 to {most}, got {topics}")
    busy_loop = given("busy_loop")
    if busy_loop.startswith("-"):
        raise UsageError(f"--busy-loop: must be 0 or longer, got '{busy_loop}'; {DURATION_HINT}")
    return {
        "topics": topics,
        "executor": _choice("--executor", "executor", given("executor"),
                            (*option_choices("executor"), *RELAY_EXECUTORS)),
        "busy_loop_ns": _duration("--busy-loop", busy_loop, 0),
    }


def _qos(options: dict[str, Any], mode: str) -> dict[str, Any]:
    """--reliability --history --depth --durability --opt --discovery-timeout --pong, checked."""
    def given(key: str) -> str:
        value = options.get(key)
        return str(default(key) if value is None else value).strip()

    history = given("history")
    if history not in ("keep-last", "keep-all") and not _is_keep_last_n(history):
        raise UsageError(f"--history: unknown history '{history}'; allowed: keep-last, "
                         f"keep-last:N (N >= 1), keep-all")
    try:
        depth = int(given("depth"))
    except ValueError:
        raise UsageError(f"--depth: cannot parse '{given('depth')}'; use a whole number >= 1, "
                         f"e.g. 10") from None
    if depth < 1:
        raise UsageError(f"--depth: must be >= 1, got {depth}")
    opts = tuple(options.get("opt") or ())
    for item in opts:
        if "=" not in item or not item.split("=", 1)[0].strip():
            raise UsageError(f"--opt: '{item}' is not KEY=VALUE (e.g. --opt mode=client)")
    pong = str(options.get("pong") or "agent")
    command = options.get("pong_cmd")
    client, opts = rclpy_roles.take(opts)
    if client == "rclpy" and mode == "roundtrip":  # the echo is rclpy's relay (--pong relay)
        if command not in (None, "") or options.get("pong") not in (None, "relay"):
            given = "--pong-cmd" if command not in (None, "") else f"--pong {pong}"
            raise UsageError(f"--opt {rclpy_roles.OPT}=rclpy: not with {given} (client=rclpy "
                             "makes the echo a real rclpy relay node: --pong relay)")
        pong = "relay"
    if command not in (None, ""):
        if pong != "agent":
            raise UsageError(f"--pong-cmd: not with --pong {pong} (the program is the echo)")
        pong_command.parse(str(command))
    given_flags = tuple(key for key in ("reliability", "history", "depth", "durability",
                                        "discovery_timeout") if options.get(key) is not None)
    return {
        "reliability": _choice("--reliability", "reliability", given("reliability"),
                               option_choices("reliability")),
        "history": history, "depth": depth,
        "durability": _choice("--durability", "durability", given("durability"),
                              option_choices("durability")),
        "opts": opts,
        "discovery_timeout_ns": _duration("--discovery-timeout", given("discovery_timeout"), 1),
        "pong": ("command" if command not in (None, "")
                 else _choice("--pong", "pong", pong, PONGS)),
        "pong_cmd": None if command in (None, "") else str(command),
        "qos_given": given_flags,
        "client": client or "agent",
    }


def _is_keep_last_n(text: str) -> bool:
    prefix, _, number = text.partition(":")
    return prefix == "keep-last" and number.isdigit() and int(number) >= 1


def _choice(flag: str, what: str, value: str, allowed: list[str] | tuple[str, ...]) -> str:
    if value not in allowed:
        raise UsageError(f"{flag}: unknown {what} '{value}'; allowed: {', '.join(allowed)}")
    return value


def _rate(text: str) -> float:
    try:
        rate = float(text)
    except ValueError:
        raise UsageError(f"--rate: cannot parse '{text}'; use messages per second, "
                         f"e.g. 1000 (0 = as fast as possible)") from None
    if not math.isfinite(rate):
        raise UsageError(f"--rate: must be a finite number of messages per second, got {text}")
    if rate < 0:
        raise UsageError(f"--rate: must be >= 0 (0 = as fast as possible), got {text}")
    return rate


def _duration(flag: str, text: str, minimum_ns: int) -> int:
    try:
        ns = parse_duration(text)
    except ValueError:
        raise UsageError(f"{flag}: cannot parse '{text}'; {DURATION_HINT}") from None
    if ns < minimum_ns:
        raise UsageError(f"{flag}: must be longer than 0, got '{text}'")
    return ns


def _whole_number(flag: str, text: Any, what: str, example: int) -> int:
    """A whole number >= 1 given to ``flag``; a usage error naming the flag otherwise."""
    try:
        number = int(str(text).strip())
    except ValueError:
        raise UsageError(f"{flag}: cannot parse '{text}'; use a whole number of {what}, "
                         f"e.g. {example}") from None
    if number < 1:
        raise UsageError(f"{flag}: must be >= 1, got {number}")
    return number


def _min_samples(text: Any) -> int | None:
    """--min-samples N: a whole number >= 1 (None when not given)."""
    return None if text is None else _whole_number("--min-samples", text,
                                                   "measured messages", 1000)


def _count(text: Any) -> int:
    return _whole_number("--count", text, "messages", 500)
