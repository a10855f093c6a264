"""Running one point: start the server role, wait for READY, run the sender, collect, merge.

Roles: roundtrip = pong (server) + ping (sender, measures); oneway = sub (server, measures) +
pub (sender); with ``--subscribers N`` one-way runs N subs (subscribers.py). With ``--link`` or
a scenario's ``hosts:`` every role and daemon runs on the emulated host it is placed on
(``--link`` alone: the server on host b, the sender on host a), and the result's ``link``
section holds the specs, the backend and the emulators' counters.
Nothing outlives ``run_point``: the agents live inside an ``AgentSet``, the cgroups of a
CPU quota in the point's lease (leases.py), the emulated hosts in their own. A Ctrl-C stops
them with SIGINT, and whatever they reported still becomes a (partial) result.
"""

import contextlib
import functools
import json
import secrets
import signal
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from decimal import Decimal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .agent import Agent, alloc_preload
from .bridges.base import BridgePlan
from .bridges.run import bridge_died, ensure_bridge, hops as bridge_hops, rate_warnings, section as bridge_section, sides, start_bridge
from .clocksync import annotate as annotate_clock, clock_address, clock_args, in_test_clock
from .config import MEASURING_ROLE, ROLES, SENDERS, PointConfig
from .durations import format_duration_arg
from .errors import RunError, UsageError
from .merge import AgentRun, make_warning, merge
from .daemons import DaemonSet
from .emulation.network import Network, emulated_network
from .place import Place
from .emulation.topology import two_hosts
from .middleware import Plan, prepare
from .emulation.cpu import CpuPlacement
from .leases import Lease
from .procs import STOP_GRACE_S, AgentProcess, AgentSet
from .remote.daemon import remote_daemon
from .remote.hosts import PointHosts, point_hosts
from .remote.supervised import RemoteProcess
from .remote.ssh import SshOptions
from .resilience import missed_warning, section as resilience_section
from .result_types import RunResult, Warning
from .schema import validation_error
from .subscribers import connect_address, listen_address, names
from .topicnames import names_given, samples_names, topic_names
from .allocsites import heaptrack
from .transports import hook, profile
from .profiling import PROFILE_DIR, Recorder, unavailable, write_profiles
from .wire import not_applicable as wire_not_applicable, section as wire_section

READY_TIMEOUT_S = 10.0
SLACK_S = 10.0
COUNT_PACE_S = 0.001
"""assumed worst time per message for --count at rate 0 (closed loop), to bound the wait"""
SAMPLES_NAME = "samples.csv"
Placed = tuple[Path | None, dict[str, str] | None, tuple[str, ...]]
"""where an agent runs: its namespace, its environment, the --opt settings it needs there"""


class Interrupted(KeyboardInterrupt):
    """A stop request other than Ctrl-C (e.g. SIGTERM), with the reason to record."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class StoppedRunError(RunError):
    """The point failed (no usable report) after the user asked to stop: do not go on."""


@dataclass
class Outcome:
    """A finished point: the validated run-result and where its raw files are."""

    result: RunResult
    samples_path: Path | None
    interrupted: bool
    """True when the user stopped it (Ctrl-C / SIGTERM): a suite stops after this point."""
    daemons_dir: Path | None = None
    """the daemons' logs and configurations, saved with the result"""
    profile_dir: Path | None = None
    """--profile: the flame graphs, folded stacks and top functions, saved with the result"""
    alloc_sites_dir: Path | None = None
    """--alloc-sites: each agent's heaptrack record (gzipped) and its table of call sites"""
    topic_samples: list[Path] = field(default_factory=list)
    """--samples with several topics: each topic's file (``samples.<topic>.csv``), saved by its
    name; ``samples_path`` is then None"""


DAEMON_PLACED_AS = {"relay": "pong", "zenoh-router": "zenohd"}
"""a daemon's name in the topology's placement, where it differs from its own (the relay
echoes where the pong would)"""


def run_point(cfg: PointConfig, agent: Agent, workdir: Path) -> Outcome:
    """Measure one point with agents working in ``workdir`` (which the caller removes)."""
    ensure_bridge(cfg, agent)
    tag = secrets.randbits(32)
    started = datetime.now(timezone.utc)
    server_role, sender_role = ROLES[cfg.mode]
    own_warnings: list[Warning] = []
    stopped: str | None = None
    interrupted = False
    window: tuple[int, int] | None = None
    sender_stopped_ns: int | None = None
    bplan: BridgePlan | None = None
    bridge_gone: str | None = None
    recorder: Recorder | None = None
    profiled: dict[int, str] = {}
    with (Lease.take(f"{cfg.transport} {cfg.mode} point") as lease,
          _emulated_link(cfg, workdir, tag) as emulated,
          _real_hosts(cfg, agent, lease) as real,
          DaemonSet(workdir, lease) as daemons):
        network: Place | None = emulated or real  # None: this machine's loopback
        placement = CpuPlacement(cfg.cpu, lease)
        daemons.on_spawn = lambda spec, pid: placement.join(
            spec.name, DAEMON_PLACED_AS.get(spec.name, spec.name), pid)
        if real is not None:
            real.cpu = placement  # the supervisors there apply the CPU limits
            daemons.remote = lambda spec: remote_daemon(
                real, DAEMON_PLACED_AS.get(spec.name, spec.name), spec, workdir, agent)
        with AgentSet(workdir, placement) as agents:
            spawn = functools.partial(_spawn, agents, real, workdir, cfg)
            try:
                bplan = start_bridge(cfg, workdir, agent, daemons, emulated, tag)  # (not --host)
                plan = (Plan(bplan.listen) if bplan is not None
                        else prepare(cfg, workdir, agent, daemons, network))
                given = replace(cfg, opts=cfg.opts + _own_domain(cfg, lease))
                if network is not None:
                    window = network.outage_window()
                    given = outlasting(given, window)
                given_server, given_sender = sides(given, bplan)
                clock = clock_address(given, network)  # --clock-sync: the pub's probe port
                servers: list[AgentProcess] = []
                if plan.listen is not None:
                    ready: list[str] = []
                    for index, name in enumerate(server_names(cfg)):
                        listen = listen_address(given_server.transport, plan.listen, index,
                                                ready[0] if ready else None)
                        def server_argv(here: Path, agent_path: Agent, listen: str = listen,
                                        name: str = name) -> list[str]:
                            return in_test_clock(given, server_role, role_argv(
                                agent_path, server_role, given_server, here, tag, listen, name)
                                + outage_args(server_role, window)
                                + clock_args(server_role, given, clock))
                        servers.append(spawn(server_role, server_argv, _placed(
                            network, server_role, given_server.transport, bplan), name, agent))
                        ready.append(servers[-1].wait_ready(given_server.transport,
                                                            ready_timeout_s(cfg)))
                    address = (bplan.sender(ready[0]) if bplan is not None
                               else connect_address(cfg.transport, ready))
                else:
                    address = plan.connect or ""
                sender = spawn(sender_role, lambda here, agent_path: in_test_clock(given, sender_role, role_argv(
                    agent_path, sender_role, given_sender, here, tag, address)
                               + outage_args(sender_role, window) + clock_args(sender_role, given, clock)),
                               _placed(network, sender_role, given_sender.transport, bplan),
                               sender_role, agent)
                if cfg.profile:
                    recorder, profiled = _start_profile(workdir, servers, sender, daemons,
                                                        real, own_warnings, lease)
                limit_s = sender_timeout_s(given)
                if sender.wait(limit_s) is None:
                    stopped = f"{sender_role} did not finish within {limit_s:g} s and was stopped"
                    own_warnings.append(make_warning(
                        "sender-timeout", f"{stopped}; its last words: {sender.stderr_tail()}",
                        "the agent seems stuck: please report it with the command line"))
                    agents.stop_all()
                sender_stopped_ns = time.monotonic_ns()
                if recorder is not None:
                    failed = recorder.stop()
                    if failed is not None:
                        own_warnings.append(make_warning("profile-failed", failed,
                                                         "see profile/perf.log"))
                        recorder = None
                daemons.sample_all()  # the end of the measurement
                if bplan is not None:
                    bridge_gone = bridge_died(daemons)
                if sender.exit_code == 2:
                    raise UsageError(f"{sender_role} rejected the point: {sender.stderr_tail()}")
                for server in servers:
                    own_warnings += _stop_server(server, cfg.mode)
            except KeyboardInterrupt as exc:
                stopped = exc.reason if isinstance(exc, Interrupted) else "interrupted by Ctrl-C"
                interrupted = True
                agents.stop_all()
                if recorder is not None:
                    recorder.stop()
                    recorder = None  # an interrupted point keeps what it measured, no profile
        cpu = placement.describe()  # before the lease releases the cgroups
    if interrupted and not agents.agents:  # stopped while daemons started: nothing measured
        raise Interrupted(stopped or "interrupted")
    samples = workdir / SAMPLES_NAME
    samples_path = samples if cfg.samples and cfg.topics == 1 and samples.is_file() else None
    topic_samples = {i: workdir / name for i, name in enumerate(samples_files(cfg))
                     if cfg.samples and cfg.topics > 1 and (workdir / name).is_file()}
    runs = [_collect(proc, workdir) for proc in agents.agents]
    try:
        result = merge(
            run_id=make_run_id(cfg, tag, started), mode=cfg.mode, config=cfg.to_dict(),
            runs=runs,
            started_at=_rfc3339(started), finished_at=_rfc3339(datetime.now(timezone.utc)),
            interrupted=stopped,
            own_warnings=own_warnings + placement.warnings + _kill_warnings(agents.agents)
            + _daemon_warnings(daemons), samples_file=SAMPLES_NAME if samples_path else None,
            topic_samples={i: path.name for i, path in topic_samples.items()},
            daemons=daemons.describe())
        if cpu is not None:
            result["cpu"] = cpu
    except RunError as exc:
        if interrupted:  # nothing usable, and the user asked to stop: a suite must stop too
            raise StoppedRunError(str(exc)) from None
        raise
    if bridge_gone is not None and result["measurement"] is not None:
        # what was measured before the bridge died is kept; the agents' own failure (their
        # broker or peer vanished) is the consequence, so the bridge is the reason
        result["status"] = "partial"
        result["status_reason"] = f"{bridge_gone}; then {result['status_reason']}"
    if cfg.bridge is not None:
        result["bridge"] = bridge_section(cfg, bplan, daemons.describe(), result)
        result["warnings"] += rate_warnings(result["bridge"])
    if emulated is not None:
        result["link"] = emulated.describe()
        if cfg.wire_bytes:
            measured = result["measurement"]
            result["wire"] = wire_section(emulated.reports, emulated.wire_ends(),
                                          _sender_phases(runs, sender_role),
                                          measured["accounting"]["sent"] if measured else None,
                                          cfg.payload_bytes)
        if cfg.bridge is not None:
            result["bridge"]["hops"] = bridge_hops(result["link"], result["measurement"])
    if recorder is not None:
        result["profile"] = write_profiles(recorder, profiled, workdir / PROFILE_DIR)
    if cfg.alloc_sites:
        result["alloc_sites"] = heaptrack.collect(
            heaptrack.find(), workdir, [(a.name, a.role) for a in agents.agents
                                        if real is None or not real.is_remote(a.role)])
    if cfg.wire_bytes and emulated is None:
        result["wire"] = wire_not_applicable(cfg.transport)
    if real is not None:
        result["hosts"] = real.describe()
        result["warnings"] += _lost_warnings(agents.agents)
    outage = {run.role: run.report.get("outage") for run in runs if run.report is not None}
    counts = outage.get(sender_role), outage.get(MEASURING_ROLE[cfg.mode])
    annotate_clock(result, cfg)  # --test-clock: the injected truth beside the estimate
    result["resilience"] = resilience_section(result.get("discovery"), *counts,
                                              cfg.session_timeout_ns, sender_stopped_ns)
    missed = missed_warning(result["resilience"], *counts, sender_stopped_ns)
    if missed is not None:
        result["warnings"].append(make_warning(*missed))
    return Outcome(result, samples_path, interrupted, daemons.folder if daemons.daemons else None,
                   workdir / PROFILE_DIR if recorder is not None else None,
                   workdir / heaptrack.ALLOC_SITES_DIR if cfg.alloc_sites else None,
                   list(topic_samples.values()))


def _start_profile(workdir: Path, servers: list[AgentProcess], sender: AgentProcess,
                   daemons: DaemonSet, real: PointHosts | None, warnings: list[Warning],
                   lease: Lease) -> tuple[Recorder | None, dict[int, str]]:
    """--profile: perf on every local agent and daemon from now on; (None, {}) with a warning
    saying what to change when perf cannot sample here."""
    why = unavailable()
    if why is not None:
        warnings.append(make_warning("profile-unavailable", f"--profile: {why}",
                                     "the point was measured without a profile"))
        return None, {}
    names = {a.popen.pid: a.name for a in (*servers, sender)
             if real is None or not real.is_remote(a.role)}
    names.update({d.popen.pid: d.name for d in daemons.daemons
                  if getattr(d, "popen", None) is not None and d.popen.poll() is None})
    return Recorder(list(names), workdir / PROFILE_DIR, lease), names


def _sender_phases(runs: list[Any], sender_role: str) -> dict[str, Any] | None:
    """The sender's phase boundaries (its report's ``phases``), for --wire-bytes."""
    for run in runs:
        if run.role == sender_role and run.report is not None:
            return run.report.get("phases")
    return None


def _real_hosts(cfg: PointConfig, agent: Agent, lease: Lease
                ) -> contextlib.AbstractContextManager[PointHosts | None]:
    """The point's real hosts over SSH (remote/hosts.py), or nothing."""
    if cfg.remote is None:
        return contextlib.nullcontext()
    options = SshOptions(Path(cfg.remote.ssh_config) if cfg.remote.ssh_config else None,
                         cfg.remote.accept_new_host_key)
    return point_hosts(cfg.remote.hosts, cfg.remote.place, options, agent, lease.prefix)


def _spawn(agents: AgentSet, real: PointHosts | None, workdir: Path, cfg: PointConfig,
           role: str, argv: Callable[[Path, Agent], list[str]], placed: Placed, name: str,
           agent: Agent) -> AgentProcess:
    """Start agent ``name`` where its role is placed: here (in an emulated host's namespace,
    or mwperf's own) or on a real host (its paths then the remote scratch folder's)."""
    netns, env, opts = placed
    own = [arg for opt in opts for arg in ("--opt", opt)]
    if real is None or not real.is_remote(role):
        if cfg.count_allocs:
            env = {**(env or {}), "LD_PRELOAD": alloc_preload(agent)}
        if cfg.alloc_sites:
            env = heaptrack.environment(heaptrack.find(), workdir, name, env)
        return agents.spawn(role, argv(workdir, agent) + own, netns, env, name=name)
    host = real.hosts[real.host_of(role)]
    command = argv(Path("."), Agent(Path(host.agent.path))) + own
    sends = [f"{name}.json"] + (samples_files(cfg) if "--samples" in command else [])
    return agents.adopt(real.spawn(role, command, workdir, name, env, sends))


def _lost_warnings(agents: list[AgentProcess]) -> list[Warning]:
    """A real host's agent whose SSH channel closed before it reported (remote/supervised)."""
    return [make_warning("connection-lost", f"{a.name} on host '{a.host}': {a.channel.lost}",
                         "what it measured before is kept if it reported; check the network "
                         "to that host and run again")
            for a in agents if isinstance(a, RemoteProcess) and a.channel.lost]


def _emulated_link(cfg: PointConfig, workdir: Path, tag: int
                   ) -> contextlib.AbstractContextManager[Network | None]:
    """The point's emulated hosts and links (emulation/network.py): the scenario's topology,
    or hosts a and b joined by ``cfg.link``; or nothing (loopback)."""
    if cfg.link is None and cfg.topology is None:
        return contextlib.nullcontext()
    return emulated_network(cfg.topology or two_hosts(), cfg.link, cfg.link_backend, workdir,
                            f"run {tag & 0xFFFF:04x}", packet_log=cfg.wire_bytes)


def server_names(cfg: PointConfig) -> list[str]:
    """The pong, or the subs (``sub.0`` ... with several subscribers)."""
    return names(cfg.subscribers) if cfg.mode == "oneway" else [ROLES[cfg.mode][0]]


def outage_args(role: str, window: tuple[int, int] | None) -> list[str]:
    """``--outage-window`` for the agents that count around a link outage (not a pong)."""
    if window is None or role == "pong":
        return []
    return ["--outage-window", f"{window[0]}:{window[1]}"]


SHM = Path("/dev/shm")


def _own_domain(cfg: PointConfig, lease: Lease) -> tuple[str, ...]:
    """``--opt`` settings that keep a run's files apart: iceoryx2 in a domain named after the
    lease, whose files (iceoryx2 keeps a node counter in /dev/shm for good) the lease removes;
    nothing when the user chose a domain."""
    if cfg.transport != "iceoryx2" or cfg.option("domain") is not None:
        return ()
    lease.add("path", f"{SHM}/{lease.prefix}_*")
    return (f"domain={lease.prefix}",)


def outlasting(cfg: PointConfig, window: tuple[int, int] | None) -> PointConfig:
    """With an outage, a sender must not give up on a silent peer before the session could
    have been declared dead: peer timeout >= outage + --session-timeout + 1 s."""
    if window is None:
        return cfg
    need_ns = window[1] - window[0] + cfg.session_timeout_ns + 1_000_000_000
    return replace(cfg, peer_timeout_ns=max(cfg.peer_timeout_ns, need_ns))


def _placed(place: Place | None, role: str, transport: str, bridge: BridgePlan | None
            ) -> Placed:
    """The namespace ``role`` runs in at ``place`` (place.py), the environment it needs there
    (ROS 1 nodes advertise their host's address, as ROS_IP tells roscpp) and the ``--opt``
    settings its transport needs there (its ``link_opts`` hook; none with a bridge, which
    configures each side's middleware itself); nothing on this machine's loopback."""
    if place is None:
        return None, None, ()
    hooks = hook(transport)
    opts = hooks.link_opts(place, role) if bridge is None else ()
    return place.netns_of(role), hooks.agent_env(place.address_of(role)), opts


def ready_timeout_s(cfg: PointConfig) -> float:
    """How long a pong/sub may take to print READY (middleware may discover before it is ready)."""
    if not profile(cfg.transport).discovery:
        return READY_TIMEOUT_S
    return max(READY_TIMEOUT_S, cfg.discovery_timeout_ns / 1e9)


def sender_args(cfg: PointConfig) -> list[str]:
    """The ping/pub options that define the measurement."""
    amount = (["--count", str(cfg.count)] if cfg.count is not None
              else ["--duration", format_duration_arg(cfg.duration_ns or 0)]
              + (["--min-count", str(cfg.min_samples)] if cfg.min_samples else []))
    return ["--rate", format(Decimal(repr(cfg.rate)).normalize(), "f"), "--payload", cfg.payload,
            *amount, "--warmup", format_duration_arg(cfg.warmup_ns),
            "--peer-timeout", format_duration_arg(cfg.peer_timeout_ns),
            "--spin-margin", format_duration_arg(cfg.spin_margin_ns),
            *(["--subscribers", str(cfg.subscribers)] if cfg.subscribers > 1 else []),
            *(["--idle", format_duration_arg(cfg.idle_ns)] if cfg.idle_ns else []),
            *(["--replay-trace", cfg.replay_trace] if cfg.replay_trace else []),
            *(["--replay-loop", f"{cfg.replay['loop_span_ns']}ns"]
              if cfg.replay_trace and cfg.replay and "loop_span_ns" in cfg.replay else [])]


def sender_timeout_s(cfg: PointConfig) -> float:
    """How long the sender may take: discovery + warm-up + measurement + peer timeout + slack.
    With --min-samples at rate 0 the measurement is its duration plus what --count would get."""
    if cfg.count is not None:
        per_message_s = 1 / cfg.rate if cfg.rate > 0 else COUNT_PACE_S
        measure_s = 2 * cfg.count * per_message_s
    else:
        measure_s = (cfg.measure_ns or 0) / 1e9
        if cfg.min_samples and cfg.rate <= 0:
            measure_s += 2 * cfg.min_samples * COUNT_PACE_S
    discovery_ns = cfg.discovery_timeout_ns if profile(cfg.transport).discovery else 0
    return ((discovery_ns + cfg.warmup_ns + cfg.peer_timeout_ns + cfg.idle_ns) / 1e9 + measure_s
            + SLACK_S)


def make_run_id(cfg: PointConfig, tag: int, started: datetime) -> str:
    """A sortable id: ``20261121T224501Z-udp-roundtrip-1a2b`` (suffix = low bits of the tag)."""
    return f"{started:%Y%m%dT%H%M%SZ}-{cfg.transport}-{cfg.mode}-{tag & 0xFFFF:04x}"


def role_argv(agent: Agent, role: str, cfg: PointConfig, workdir: Path, tag: int,
              address: str, name: str | None = None) -> list[str]:
    """The full agent command line for ``role`` (docs/agent-contract.md); ``name`` tells apart
    several agents of one role (their report files)."""
    sender = role in SENDERS
    argv = [str(agent.path), role, "--transport", cfg.transport,
            "--connect" if sender else "--listen", address, "--run-id", str(tag),
            "--json", str(workdir / f"{name or role}.json"), "--quiet"]
    argv += ["--busy-poll"] * cfg.busy_poll + ["--prevent-cpu-idle"] * cfg.prevent_cpu_idle
    argv += ["--count-allocs"] * cfg.count_allocs
    argv += ["--alloc-site-markers"] * cfg.alloc_sites
    argv += qos_args(cfg) + workload_args(cfg, sender)
    if sender:
        argv += sender_args(cfg)
    if cfg.samples and role == MEASURING_ROLE[cfg.mode]:
        argv += ["--samples", str(workdir / SAMPLES_NAME)]
    return argv


def samples_files(cfg: PointConfig) -> list[str]:
    """The raw samples files of a point with --samples: samples.csv, or with several topics one
    per topic, ``samples.<topic name as a file name>.csv`` (topicnames.py; the agent derives
    the same names from its --samples path)."""
    if cfg.topics == 1:
        return [SAMPLES_NAME]
    return samples_names(topic_names(cfg.topics, cfg.replay))


def workload_args(cfg: PointConfig, sender: bool) -> list[str]:
    """--topics (and a replay's topic names) for both agents; --executor and --busy-loop for
    the callback side (pong, sub).

    Passed only when not the default, so a single-topic point's command lines stay as before.
    """
    args = ["--topics", str(cfg.topics)] if cfg.topics != 1 else []
    args += [f"--topic-name={name}" for name in names_given(cfg.topics, cfg.replay)]
    if not sender:
        args += ["--executor", cfg.executor] if cfg.topics != 1 else []
        args += ["--busy-loop", format_duration_arg(cfg.busy_loop_ns)] if cfg.busy_loop_ns else []
    return args


def qos_args(cfg: PointConfig) -> list[str]:
    """The QoS flags the user gave, and every --opt, for both agents (same values both sides)."""
    values = {"reliability": cfg.reliability, "history": cfg.history, "depth": str(cfg.depth),
              "durability": cfg.durability,
              "discovery_timeout": format_duration_arg(cfg.discovery_timeout_ns)}
    args = []
    for key in cfg.qos_given:
        args += ["--" + key.replace("_", "-"), values[key]]
    for item in cfg.opts:
        args += ["--opt", item]
    return args


def _daemon_warnings(daemons: DaemonSet) -> list[Warning]:
    warnings = [make_warning("daemon-exited", f"{d.name} exited during the run (exit code "
                             f"{d.died}): {d.log_tail()}", f"see daemons/{d.log_path.name}")
                for d in daemons.daemons if d.died is not None]
    return warnings + [make_warning("daemon-killed", f"{d.name} did not stop within a grace "
                                    "period of SIGTERM and was killed (SIGKILL)",
                                    f"see daemons/{d.log_path.name}")
                       for d in daemons.daemons if d.killed]


def _stop_server(server: AgentProcess, mode: str) -> list[Warning]:
    """pong runs until told; sub exits by itself after pub's end-of-stream marker."""
    warnings: list[Warning] = []
    if mode == "oneway" and server.wait(STOP_GRACE_S) is None:
        warnings.append(make_warning(
            "no-end-of-stream", f"{server.name} did not exit within {STOP_GRACE_S:g} s after pub finished "
            "and was stopped with SIGTERM", "the end-of-stream marker may have been lost"))
    server.send(signal.SIGTERM)
    if server.wait(STOP_GRACE_S) is None:
        server.kill()
    return warnings


def _kill_warnings(agents: list[AgentProcess]) -> list[Warning]:
    return [make_warning("agent-killed", f"{a.name} did not stop within {STOP_GRACE_S:g} s of "
                         "being asked and was killed (SIGKILL)", "its report may be missing")
            for a in agents if a.killed]


def _collect(proc: AgentProcess, workdir: Path) -> AgentRun:
    """Read and check the report an agent wrote; an unusable one is recorded with why."""
    path = workdir / f"{proc.name}.json"
    report, note = None, proc.stderr_tail()
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        lost = getattr(getattr(proc, "channel", None), "lost", None)
        note = f"no report: {lost}" if lost else f"no report written; stderr: {note}"
    except (OSError, ValueError) as exc:
        note = f"{path.name} is not JSON ({exc})"
    if report is not None:
        problem = validation_error(report, "agent-report")
        if problem is None and report["role"] != proc.role:
            problem = f"$.role: '{report['role']}', expected '{proc.role}'"
        if problem:
            report, note = None, f"{path.name} does not match schema/result.v2.json at {problem}"
    return AgentRun(proc.role, proc.exit_code, report, note, proc.killed, proc.name)


def _rfc3339(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
