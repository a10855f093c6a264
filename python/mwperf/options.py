"""Every option of a measured point, defined once.

The table below is what the ``mwperf run`` command offers (click options built from it), what a
scenario file accepts (keys named like the flags, ``-`` as ``_``: ``config.OPTIONS`` is derived
from it, and the scenario parser and validation read that), and what docs/cli.md lists
(generated from the click command). Add a point option here, and handle it in
``config.build_point``: the command line, scenarios and the docs follow. The options that only
steer a run (``--json``, ``--results``, ``--quick``, ...) stay with the command in cli.py.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import click


@dataclass(frozen=True)
class PointOption:
    """One option: click's declarations and attributes, as ``click.option`` takes them."""

    decls: tuple[str, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    scenario_kind: str | None = None
    """the kind in scenario files when it differs from the flag's (``--host`` is repeatable on
    the command line, one comma-separated value in a scenario; ``--gate`` is repeatable, a
    scenario's ``gates:`` one list: ``list``)"""

    @property
    def name(self) -> str:
        """The key (``config.OPTIONS``, scenario files): the explicit name, else the flag."""
        explicit = [d for d in self.decls if not d.startswith("-")]
        return explicit[0] if explicit else self.decls[0].lstrip("-").replace("-", "_")

    @property
    def kind(self) -> str:
        """``flag`` (a boolean), ``repeated`` (a list of values), ``list`` (a list of texts,
        never an axis) or ``text`` (a value)."""
        if self.scenario_kind:
            return self.scenario_kind
        if self.attrs.get("is_flag"):
            return "flag"
        return "repeated" if self.attrs.get("multiple") else "text"


def option(*decls: str, scenario_kind: str | None = None, **attrs: Any) -> PointOption:
    """A table entry, written like ``click.option``."""
    return PointOption(decls, attrs, scenario_kind)


def agent_option(*decls: str, **attrs: Any) -> PointOption:
    """A table entry whose help names the agent's default (``{default}``) or limits
    (``{limit[KEY]}``): filled in from ``mwperf-agent options`` when the help is read."""
    return option(*decls, cls=AgentFactsOption, **attrs)


class AgentFactsOption(click.Option):
    """An option whose help names facts the agent owns (its defaults and limits), read from
    the agent when the help is shown (``mwperf run --help``, docs/cli.md): written once, there."""

    @property  # type: ignore[override]
    def help(self) -> str | None:
        if self._help is None:
            return None
        from .agent import find_agent
        from .errors import RunError
        try:
            agent = find_agent()
            default, limits = agent.defaults().get(self.name or "", "?"), agent.limits()
        except RunError:
            default, limits = "the agent's", _Unknown()
        return self._help.format(default=default, limit=limits)

    @help.setter
    def help(self, text: str | None) -> None:
        self._help = text


class _Unknown(dict):  # type: ignore[type-arg]
    """Any limit, when no agent answers: where to look."""

    def __missing__(self, key: str) -> str:
        return "see mwperf-agent options"


POINT_OPTIONS: tuple[PointOption, ...] = (
    option("--transport", help="Transport to measure (see 'mwperf transports').  [default: udp]"),
    option("--mode", help="roundtrip (ping/pong), oneway (pub/sub), throughput (pub sends as "
           "fast as the middleware takes messages, reliable: paced by its flow control, "
           "best-effort: at --rate if given; docs/throughput.md) or service (client calls "
           "a server through the middleware's own request/response; docs/services.md).  "
           "[default: roundtrip]"),
    agent_option("--rate", help="Messages per second; 0 = as fast as possible.  [default: {default}]"),
    agent_option("--payload", help="Catalogue name in any case (see 'mwperf payloads') or a "
           "size: bytes with an optional binary unit, e.g. 100, 64KiB or 64k, 4MiB (docs/cli.md, "
           "Sizes); at most what the transport carries.  [default: {default}]"),
    agent_option("--duration", help="Measured time after warm-up, e.g. 10s, 500ms.  "
           "[default: {default}]"),
    option("--count", help="Measure this many messages instead of a duration."),
    option("--min-samples", metavar="N", help="At least N measured messages (enough for the "
           "p99 from 1000): at a rate the point runs max(--duration, N / rate), at rate 0 until "
           "N messages or --duration, whichever is later (a scenario's timeout bounds it); a graph "
           "runs max(--duration, N periods of its slowest publisher or client), every edge and "
           "call at least N. Not with --count or --replay."),
    option("--warmup", help="Sent and echoed first, excluded from statistics.  [default: 1s]"),
    agent_option("--peer-timeout", help="Give up when the peer is silent this long; also how "
           "long the last replies are awaited over a transport that retransmits.  "
           "[default: {default}]"),
    agent_option("--spin-margin", help="Sleep until deadline - margin, then spin.  "
           "[default: {default}]"),
    option("--busy-poll", is_flag=True, help="Agents never block in receive (spins a core)."),
    option("--prevent-cpu-idle", is_flag=True, help="Keep CPUs out of deep idle states."),
    option("--keep-awake", is_flag=True, help="A spinner at the lowest priority (SCHED_IDLE) "
           "on each CPU of this machine while the point runs, so no CPU halts: every "
           "transport wakes on a running CPU (a VM's halted vCPU takes tens of µs to wake)."),
    option("--secure", metavar="MODE", help="DDS-Security with a PKI made for the run (a CA, "
           "an X.509 v3 identity per agent, signed governance and permissions; removed with "
           "the run's scratch folder): auth (authentication and access control), sign "
           "(messages, metadata and data signed) or encrypt (encrypted), --transport "
           "cyclonedds, fastdds or rustdds; or wireguard: every packet between emulated hosts (--link) "
           "through a userspace WireGuard tunnel (wireguard-go, keys made for the run), any "
           "transport; tls or mtls: the middleware's own TLS links, a CA and a certificate "
           "per agent made for the run (mtls: every side presents its own), --transport "
           "zenoh (its TLS link; over QUIC with --opt link=quic), mqtt (mosquitto's TLS "
           "listener) or foxglove (wss; tls only: its server checks no client certificate); "
           "plain: none (a scenario axis's unsecured side)."),
    agent_option("--reliability", help="QoS: reliable or best-effort (mapped per "
           "middleware).  [default: {default}]"),
    agent_option("--history", help="QoS: keep-last (with --depth), keep-last:N or "
           "keep-all.  [default: {default}]"),
    agent_option("--depth", help="QoS: queue depth for keep-last.  [default: {default}]"),
    agent_option("--durability", help="QoS: volatile or transient-local.  "
           "[default: {default}]"),
    option("--opt", multiple=True, metavar="KEY=VALUE", help="Transport setting for both "
           "agents, repeatable: zenoh mode=client|peer, express=true|false; mqtt qos=0|1|2; "
           "ros2 client=rclpy (not passed on: a real rclpy node plays the round trip's echo, "
           "each one-way sub or the service's server; docs/ros2.md)."),
    agent_option("--discovery-timeout", help="Give up when the peer is not discovered "
           "within this time.  [default: {default}]"),
    option("--pong-cmd", metavar="CMD", help="A program of yours as the echo of a round trip "
           "(ros2, or cyclonedds/fastdds/rustdds with --opt ros2-type: a ROS 2 node under test, "
           "a launch, any executable), started and stopped by "
           "mwperf; {in}, {out} and {type} in CMD become the ping's topic, the topic it listens "
           "on and the message type (pkg/msg/Type), e.g. 'python3 node.py --ros-args -r "
           "input:={in} -r output:={out}'. The program must send each message's data back "
           "unchanged. docs/ros2.md, Your node as the echo."),
    option("--pong", help="Who echoes a round trip: agent (mwperf's pong) or relay (ros1: "
           "topic_tools relay, a foreign echo).  [default: agent]"),
    agent_option("--topics", help="Topics per agent (1-{limit[topics]}), each with its "
           "own sequence numbers, statistics and schedule at --rate.  [default: {default}]"),
    agent_option("--executor", help="How the pong/sub runs several topics' callbacks: "
           "single (one at a time) or multi (one thread per topic); with --transport ros2 "
           "--pong relay rclpy's own: single, multi (a thread per topic) or events "
           "(EventsExecutor).  [default: {default}]"),
    agent_option("--busy-loop", help="CPU work inside every pong/sub callback, e.g. "
           "1.8ms.  [default: {default}]"),
    agent_option("--subscribers", help="One-way: sub agents per topic "
           "(1-{limit[subscribers]}), each measuring its own stream; the result lists each and "
           "pools them.  [default: {default}]"),
    option("--link", help="Put ping/pub and pong/sub on two emulated hosts joined by this link: "
           "a preset (see 'mwperf links') and/or KEY=VALUE items, e.g. delay=10ms,loss=1% "
           "(docs/links.md). Needs root."),
    option("--bridge", help="A real bridge in the path: mqtt-bridge (two mosquitto brokers "
           "joined by mosquitto's bridge), zenoh-ros2dds, foxglove; or direct (the same "
           "middleware end to end, same hosts and links). With --link each half runs on a "
           "host of its own and the link is the WAN between them. With --graph (mqtt-bridge, "
           "direct): nodes on host b meet bridge B, the others bridge A (docs/bridges.md)."),
    option("--link-backend", help="How --link is emulated: auto (netem when the kernel has "
           "it), netem or userspace (mwperf-linkem).  [default: auto]"),
    option("--session-timeout", help="With a --link outage: a session that delivers nothing "
           "this long after the link is back is reported dead (docs/links.md).  [default: 5s]"),
    option("--restart", "restart", multiple=True, scenario_kind="text", metavar="TARGET@T",
           help="Kill TARGET (SIGKILL) at T after the measured phase starts and start it again "
           "at once, same arguments and address: a round trip's pong or a daemon of the point "
           "(mosquitto, zenohd, rosmaster, relay, foxglove-server, bridge-a/bridge-b); a one-way "
           "point's sub or daemon (one topic, one subscriber; a sub restart: both subs' arrivals "
           "counted, the latency figures the restarted sub's); with --graph a node of the "
           "graph (its paced publishers resume their schedules) or a daemon of the run; the "
           "cost per edge and chain. "
           "Repeatable (a scenario: TARGET@T,TARGET@T). The result's restarts: messages lost, "
           "rediscovery time, session recovered or rebuilt, duplicates (docs/results.md)."),
    option("--host", "host", multiple=True, scenario_kind="text", metavar="NAME=ssh://[USER@]HOST[:PORT]",
           help="A real machine (a robot) reached with OpenSSH: keys or ssh-agent only, the "
           "host key checked against known_hosts. mwperf puts its agent there (copied when "
           "missing) and, without --place, runs pong/sub and the daemons on it and ping/pub "
           "here (host 'local'). Repeatable. docs/hosts.md."),
    option("--place", "remote_place", metavar="ROLE=HOST,...", help="With --host: where "
           "each of ping, pong, pub, sub, client, server, rosmaster, mosquitto, zenohd, "
           "foxglove-server runs, e.g. "
           "pong=b,rosmaster=b (host 'local' is this machine)."),
    option("--ssh-config", metavar="FILE", help="With --host: the ssh configuration file "
           "to use (ssh -F): IdentityFile, UserKnownHostsFile, ProxyJump ..."),
    option("--accept-new-host-key", is_flag=True, help="With --host: record the host key "
           "of a host seen for the first time (a changed key is still refused)."),
    option("--cpu-quota", metavar="[ROLE=|HOST=]PCT%", help="Limit agents' CPU (cgroup), "
           "e.g. 50% (every agent) or pong=50%,ping=25%; 100% = one CPU. With emulated hosts "
           "HOST=50% limits everything on that host, daemons included (--link: hosts a, b)."),
    option("--cpu-pin", metavar="[ROLE=|HOST=]CPUS", help="Pin agents to CPUs, e.g. 1, 0-1 "
           "or pong=1,ping=0 (or HOST=1: everything on that emulated host)."),
    option("--rt-priority", metavar="N", help="Run the agents SCHED_FIFO at priority N "
           "(1-99) when permitted; a warning in the result otherwise."),
    option("--samples", is_flag=True, help="Also keep every message's timestamps (samples.csv; "
           "with several topics one file per topic, samples.<topic>.csv)."),
    option("--clock-sync", is_flag=True, default=None, help="One-way points: measure the pub "
           "clock's offset and drift with NTP-style probes (UDP side channel) before, during "
           "and after the stream and correct every one-way sample; the result's "
           "measurement.clock_sync has the offset, drift and error bound. For agents on "
           "different clocks (--link/--host); round trips need none."),
    option("--count-allocs", is_flag=True, default=None, help="Count every heap "
           "allocation of each agent (Rust and C libraries: LD_PRELOAD of "
           "libmwperf_alloc.so) per phase; the details show allocations per message in the "
           "steady state. An agent on a real host (--host) preloads a copy there."),
    option("--layers", is_flag=True, default=None, help="Split every measured message's "
           "latency into where the time goes: sender app -> middleware, middleware send path, "
           "kernel and network (with --link: sender kernel, link, receiver kernel), middleware "
           "receive path, executor and callback. The agents run with libmwperf_layers.so "
           "preloaded, which sees the system calls carrying each message; the result's "
           "`layers` section, the details and the report. Round trips and one-way points. "
           "docs/layers.md."),
    option("--alloc-sites", is_flag=True, default=None, help="Record every heap "
           "allocation of each agent with its backtrace (heaptrack) and list the top call "
           "sites: allocations per message in the steady state and in the whole run "
           "(alloc-sites/ in the result folder, the details and the report). Slows every "
           "allocation: use --count-allocs for the counts alone. Agents on this machine only."),
    option("--wire-bytes", is_flag=True, default=None, help="Count bytes and packets on "
           "the wire per phase (setup, warm-up, steady state, idle, teardown) where they "
           "pass: mwperf's userspace link emulator logs every packet (without --link: a "
           "clean link between two emulated hosts). The details show bytes per message each "
           "way, setup bytes and idle bytes/s. docs/costs.md."),
    option("--profile", is_flag=True, default=None, help="Sample every agent and daemon "
           "with Linux perf during the point (DWARF call graphs): a flame graph (SVG) and the "
           "top functions per process in the result folder (profile/) and the report. A "
           "warning says what to change where perf cannot sample."),
    option("--idle", metavar="DURATION", help="After the last reply, the sender keeps its "
           "endpoint open this long sending nothing (default 2s with --wire-bytes, else 0s): "
           "what an idle session costs."),
    option("--replay", metavar="FILE", help="Send a recording's messages (a ROS 1 .bag, an "
           ".mcap, a rosbag2 folder, or 'example': mwperf's example bag, written once into "
           "~/.cache/mwperf): each recorded topic on its own topic, each message's real bytes "
           "at its recorded time. docs/replay-and-probe.md. With --graph: each publisher of a "
           "recorded topic publishes it with its recorded sizes and times, looped "
           "(docs/graphs.md)."),
    option("--replay-topics", metavar="A,B", help="With --replay: only these topics (with "
           "--graph: only these publishers)."),
    option("--replay-rate", metavar="FACTOR", help="With --replay: time scale (2 = twice as "
           "fast).  [default: 1]"),
    option("--replay-window", metavar="START+LENGTH", help="With --replay: only this part "
           "of the recording, e.g. 10s+60s."),
    option("--replay-loop", is_flag=True, default=None, help="With --replay and --duration: "
           "start the recording over at its end (one period later, on the same schedule) "
           "until --duration has passed."),
    option("--graph", multiple=True, scenario_kind="text", metavar="NAME|FILE", help="Run a "
           "graph of nodes instead of one stream: a built-in (mwperf graphs), a graph file "
           "(YAML) or an iRobot ros2-performance topology (.json); with --transport, --duration, "
           "--warmup, the QoS flags, --link and the CPU flags (NODE=... per node). Repeatable: "
           "several files side by side in one run, on shared topics (a scenario: FILE,FILE). "
           "docs/graphs.md."),
    option("--baseline", metavar="TOPIC|chain:NAME", help="With --graph: first run this "
           "topic (its publishers and subscribers) or chain alone, then the whole graph: what "
           "the rest costs it (p99 alone vs inside)."),
    option("--without", multiple=True, scenario_kind="text", metavar="NODE", help="With "
           "--graph: leave this node out (and what then has nothing to receive); repeatable "
           "(a scenario: NODE,NODE)."),
    option("--copies", metavar="N", help="With --graph: every node N times on the same topics "
           "(name_c1..name_cN), for scaling studies.  [default: 1]"),
    option("--processes", metavar="file|one|per-node", help="With --graph: how its nodes "
           "share OS processes: file (as the graph file's process: keys say; the others a "
           "process each), one (every mwperf node in one process, one middleware session: "
           "messages between them take the middleware's in-process path, as iRobot's "
           "ros2-performance runs a topology) or per-node (a process each, whatever the file "
           "says).  [default: file]"),
    option("--rate-scale", metavar="FACTOR|TOPIC=FACTOR", help="With --graph: every "
           "publisher's rate multiplied by FACTOR (2 = twice as often); TOPIC=FACTOR[,...]: only "
           "those topics' publishers.  [default: 1]"),
    option("--reply-payload", metavar="SIZE", help="--mode service: the reply's bytes after "
           "the header (a catalogue name or a size, as --payload).  [default: the request's "
           "--payload]"),
    agent_option("--server-work", metavar="DURATION", help="--mode service: CPU work (a "
           "spin) the server does per call before replying, e.g. 200us.  [default: {default}]"),
    agent_option("--in-flight", metavar="N", help="--mode service: calls each client keeps "
           "outstanding at most (1-{limit[in_flight]}).  [default: {default}]"),
    agent_option("--clients", metavar="N", help="--mode service: clients calling the one "
           "server (1-{limit[clients]}), each its own endpoint and schedule at --rate; the "
           "result lists each and pools them.  [default: {default}]"),
    agent_option("--call-timeout", metavar="DURATION", help="--mode service: a call not "
           "answered this long after it was sent is given up and counted as a timeout.  "
           "[default: {default}]"),
    option("--gate", "gates", multiple=True, scenario_kind="list", metavar="EXPR",
           help="A pass/fail check on the point, repeatable (a scenario: gates: [list]): "
           "rss-growth<=SIZE, fd-growth<=N, threads-growth<=N (each agent, graph node and daemon), "
           "live-allocs-growth<=SIZE (each agent, with --count-allocs); growth = least-squares "
           "slope over the steady state x its duration. min-samples=N (measured messages), "
           "matched-within=DURATION (peer matched), p50|p99|max<=DURATION, lost<=N, "
           "loss<=PCT%, cpu<=PCT% (of all cores, the run's processes summed), rss<=SIZE (their "
           "peak resident sets summed); with --graph also late<=PCT%, too-late<=PCT% (of the "
           "messages received, by each edge's period). A failed gate is printed with its "
           "figure and limit, the result is saved, and mwperf exits 1. docs/scenarios.md, Soak "
           "runs and gates."),
    option("--targets", metavar="FILE", help="Pass or fail the run against a target file: "
           "iRobot ros2-performance's own (e.g. mont_blanc_rpi3.json: resources cpu[%], "
           "rss[KB]; latency_total late[%], too_late[%], lost[%]) read as it is, or mwperf's "
           "{gates: [EXPR, ...]} (JSON or YAML). Each target is checked as a --gate; a miss is "
           "printed with its figure and limit and mwperf exits 1. docs/scenarios.md, Targets."),
    option("--test-clock", metavar="HOST=OFFSET_S[,DRIFT_PPM]", hidden=True,
           help="TEST ONLY: run an emulated host's agents in a time namespace OFFSET_S ahead "
           "and DRIFT_PPM fast (';' between hosts): ground truth for --clock-sync tests."),
)

KINDS: dict[str, str] = {o.name: o.kind for o in POINT_OPTIONS}
"""option name -> its kind, in the table's order (``config.OPTIONS``)"""


def point_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate ``command`` with every point option, in the table's order."""
    for entry in reversed(POINT_OPTIONS):
        command = click.option(*entry.decls, **entry.attrs)(command)
    return command
