"""Running a graph on this machine: the transport's daemons, one agent per node (``mwperf-agent
node``), all READY, one start instant for every schedule (the go file), then each node's
report merged into the graph result (result.py). A node that dies leaves a partial result
naming it; the rest of the graph is measured and stopped; nothing is left running."""

import contextlib
import json
import os
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..agent import Agent
from ..clocksync import shifted
from ..commandline import qos_args
from ..config import PointConfig
from ..daemons import DaemonSet, foxglove
from .. import fastdds_shm
from ..durations import format_duration_arg
from ..emulation.network import Network
from ..emulation.topology import Topology
from ..errors import RunError, UsageError
from ..known_crashes import named
from ..merge import make_warning
from ..schema import validation_error
from ..security import FOLDER as SECURITY_FOLDER
from ..security.modes import zenoh_link
from ..security.tls import BROKER, identity
from ..middleware import prepare
from ..parts import Part, parts_for
from ..parts.restart import restart_daemon
from ..parts.state import PointState
from ..procs import AgentProcess, AgentSet
from ..place import Place
from ..remote.hosts import PointHosts
from ..restarts import DAEMON_ALIASES
from ..run.opened import opened
from ..run.placed import placed
from ..transports import profile
from ..transports.foxglove import require_sdk
from ..transports.iceoryx2 import own_domain
from ..transports.ros2 import (DEFAULT_TYPE, TYPE_OPT, agent_environment as ros2_environment,
                               check_timer, distribution, message_type)
from .command_run import Commands, check_programs, environment, verdicts
from .commands import RAW_DDS_TYPE, await_writers, awaited, ros_name
from .commands import supported as supported_commands
from .check import check_qos, check_sizes
from .clients import check_run_clients, rclpy_nodes
from .rclpy_run import argv as rclpy_argv, collect as rclpy_collect
from .load import flow_control
from .bridge_sides import sided, sides
from .clocks import CLOCK_NODE, clock_node, clock_plan, real_clock_plan
from .hosts import GO_NAME, REMOTE_START_MARGIN_NS, write_remote_go
from .placement import placed_topology
from .processes import FILE_PREFIX, groups, process_of
from .services import check_run as check_services
from .model import Graph, Node
from .outages import attach as attach_outages
from .restarts import FOLDER, READY_TIMEOUT_S, Restarter, is_daemon
from .plan import SAMPLES_DIR, addresses, linger_ns, node_specs, serving_nodes, supported, way
from ..layers import Link
from ..layers_link import read_many
from .layers import attach as attach_layers, rows_path
from .node_files import file_name
from .result import merge

START_MARGIN_NS = 200_000_000
"""the go file names an instant this far ahead: every node reads it before it comes"""
SLACK_S = 10.0


RUSTDDS_LOOPBACK_PARTICIPANTS = 13
"""RustDDS on loopback announces itself to participant ids 0..12 only (no multicast on lo): two
participants above those never meet (transports/rustdds/mod.rs)"""


def rustdds_participants(graph: Graph) -> int:
    """The RustDDS participants a graph opens: one per node (its endpoints share it,
    transports/rustdds/participant.rs), two for a node subscribing to a topic it publishes
    (RustDDS does not deliver between a writer and a reader of one participant)."""
    def own(node: Node) -> int:
        published = {p.topic for p in node.publishers} | {s.publish for s in node.subscribers
                                                          if s.publish}
        return 2 if any(s.topic in published for s in node.subscribers) else 1
    return sum(own(n) for n in graph.nodes)


def _check_rustdds_loopback(graph: Graph, cfg: PointConfig) -> None:
    if cfg.transport != "rustdds" or cfg.option("network") not in (None, "loopback"):
        return
    participants = rustdds_participants(graph)
    if participants > RUSTDDS_LOOPBACK_PARTICIPANTS:
        raise UsageError(
            f"--graph {graph.name} --transport rustdds: {len(graph.nodes)} nodes make "
            f"{participants} RustDDS participants (one per node); on loopback RustDDS discovers "
            f"only {RUSTDDS_LOOPBACK_PARTICIPANTS} (it announces itself to participant ids "
            "0..12, lo has no multicast); use a smaller graph or emulated hosts (--link)")


def run_graph(graph: Graph, cfg: PointConfig, agent: Agent, workdir: Path) -> dict[str, Any]:
    """Measure ``graph`` over ``cfg.transport`` for cfg's warm-up and duration."""
    supported(cfg.transport)
    check_run_clients(graph, cfg)
    _check_rustdds_loopback(graph, cfg)
    most = profile(cfg.transport).max_payload
    check_sizes(graph, cfg.transport, most)
    check_qos(graph, cfg.transport, profile(cfg.transport).qos)
    graph = flow_control(graph, cfg, profile(cfg.transport).qos)
    check_services(graph, cfg.transport, most)
    if cfg.transport == "ros2":
        check_timer(cfg, f"--graph {graph.name} --transport ros2")
    parts = [part for part in parts_for(cfg) if part.on_graphs]
    if cfg.alloc_sites and rclpy_nodes(graph):
        raise UsageError(f"--alloc-sites: not with client: rclpy nodes ("
                         f"{', '.join(rclpy_nodes(graph))}): heaptrack cuts the steady state "
                         "at the agent's per-message markers, which an rclpy node has not")
    for part in parts:
        part.check(cfg, agent)
    started = datetime.now(timezone.utc)
    duration_ns = cfg.measure_ns or 0  # --min-samples: stretched to the slowest's N periods
    linger = linger_ns(graph)
    interrupted: str | None = None
    failed: dict[str, str] = {}
    ready_s = 0.0
    stop_s: float | None = None
    topology = placed_topology(graph, cfg)
    supported_commands(graph, cfg.transport, {
        "--link": topology is not None, "--host": cfg.remote is not None,
        "--layers": cfg.layers, "--test-clock": bool(cfg.test_clock),
        "--cpu-quota/--cpu-pin NODE": cfg.cpu is not None and any(
            name == n.name for n in graph.nodes if n.command
            for name, _ in (*cfg.cpu.quota_pct, *cfg.cpu.pin))}, cfg.option(RAW_DDS_TYPE))
    commands = Commands(graph)
    command_env = _command_environment(graph, cfg) if commands.nodes else {}
    shm_before = fastdds_shm.entries()
    served_as: dict[str, str] = {}  # a node's server sits with the node (its host's limits)
    # real hosts: the nodes there, the daemons here
    with opened(cfg, agent, workdir, f"{cfg.transport} graph {graph.name}", "graph", topology,
                daemons_there=False, placed_as=served_as,
                shown={file_name(n.name): n.name for n in graph.nodes}
                | {FILE_PREFIX + p: f"process {p}" for p in groups(graph)}) as state:
        lease, network, real, daemons, tag = (state.lease, state.emulated, state.real,
                                              state.daemons, state.tag)
        place: Place | None = state.network
        cfg = replace(cfg, opts=cfg.opts + own_domain(cfg, lease))
        state.cfg = cfg
        agents = state.agents
        assert agents is not None
        mode = cfg.option("mode")
        # the parts first, as for one stream: a bridge's halves (the bridge part) are the
        # daemons its nodes meet, a secured point's certificates are there for the daemons
        _each(parts, "start", state)
        if way(cfg.transport, mode) == "served":
            listen, servers = None, serve(graph, daemons, network, served_as,
                                          workdir if cfg.secure == "tls" else None)
        elif state.bridge is not None:  # each node at its side's half (bridge_sides.py)
            listen, servers = state.bridge.listen, None
        else:
            listen, servers = prepare(cfg, workdir, agent, daemons, place).listen, None
        if real is not None:  # every real host a clock of its own; mwperf's serves the probes
            clocks = real_clock_plan(graph, real.place, real.address_of(CLOCK_NODE))
        else:
            clocks = clock_plan(graph, _node_hosts(graph, topology),
                                {h for h, _, _ in cfg.test_clock}, cfg.clock_sync,
                                network.address_of if network else None)
        link = zenoh_link(cfg.secure, cfg.option("link"))  # zenoh's peer links
        if state.bridge is not None:
            plan = state.bridge
            where = sided(lambda at: addresses(graph, cfg.transport, at, workdir, tag, place,
                                               mode, servers, link),
                          plan.sender(plan.listen), plan.listen, sides(graph))
        else:
            where = addresses(graph, cfg.transport, listen, workdir, tag, place, mode, servers,
                              link)
        # an outage's cost per edge comes from the edges' raw samples (graph/outages.py)
        outage = network.outage_window() if network is not None else None
        samples = workdir / SAMPLES_DIR if cfg.samples or outage is not None else None
        if samples is not None:
            samples.mkdir()
        specs = node_specs(graph, where, cfg.warmup_ns, duration_ns, linger, samples)
        restarter = Restarter(graph, cfg.restarts, workdir) if cfg.restarts else None
        if restarter is not None:
            restarter.prepare(specs, file_name)
        rclpy = set(rclpy_nodes(graph))
        if commands.nodes:  # the user's programs, on mwperf's topics, before mwperf's nodes
            domain = (listen or "").partition("/")[0] if "/" in (listen or "") else None
            names = {t: ros_name(a[0]) for t, a in where.publish.items() if a}
            commands.start(daemons, names, ros2_type(cfg), {**command_env, **(
                {"ROS_DOMAIN_ID": domain} if domain else {})})
            # one agent node waits for the programs' endpoints in the middleware's graph
            watcher = next((s for s in specs if s["name"] not in rclpy), None)
            if watcher is not None:
                watcher["await_graph"] = awaited(graph, names)
            await_writers(graph, [s for s in specs if s["name"] not in rclpy])
        extra = [clock_node(clocks, specs)] if clocks.server == CLOCK_NODE else []
        go_file = workdir / "go"
        shared, member = groups(graph), process_of(graph)  # nodes sharing a process
        t0 = time.monotonic()
        procs: dict[str, AgentProcess] = {}
        try:
            # rclpy nodes first: a Python importing rclpy takes longest to have its
            # endpoints up, and the agents' discovery timeouts run from their own start
            for spec in sorted(extra + specs, key=lambda s: s["name"] not in rclpy):
                if spec["name"] in rclpy:
                    procs[spec["name"]] = _start_rclpy(agents, cfg, graph, spec, workdir,
                                                       go_file, tag, place)
                    continue
                if spec["name"] in procs:  # started with the others of its process
                    continue
                together = [s for s in specs if s["name"] in shared.get(
                    member.get(spec["name"], ""), ())] or [spec]
                proc = _start(agents, agent, cfg, together, workdir, go_file, tag, place, real,
                              _clock_args(clocks, together), _shift(cfg, topology, spec["name"]),
                              (parts, state), member.get(spec["name"]))
                procs.update({s["name"]: proc for s in together})
            commands.wait_ready(list({id(p): p for p in procs.values()}.values()),
                                max(10.0, cfg.discovery_timeout_ns / 1e9 + 5))
            ready_s = time.monotonic() - t0
            margin = START_MARGIN_NS if real is None else REMOTE_START_MARGIN_NS
            start_ns = time.monotonic_ns() + margin
            temporary = go_file.with_suffix(".tmp")
            temporary.write_text(f"{start_ns}\n")
            os.replace(temporary, go_file)
            commands.measuring()
            # the schedule's phases on CLOCK_MONOTONIC, as a sender's report states them
            state.found["phases"] = {
                "first_send_ns": start_ns, "measure_start_ns": start_ns + cfg.warmup_ns,
                "drained_ns": start_ns + cfg.warmup_ns + duration_ns + linger}
            state.found["node_hosts"] = _node_hosts(graph, topology)
            _each(parts, "sender_started", state)
            # a node killed by its restart is waited for again after the restarts
            restarted = restarter.touched if restarter is not None else set()
            if restarter is not None:
                def restart(name: str, count: int, event: dict[str, Any]) -> None:
                    if is_daemon(name):  # on its address; the nodes open theirs again
                        restart_daemon(state, DAEMON_ALIASES.get(name, name), count, event)
                    else:
                        _restart(agents, procs, specs, restarter, workdir, name, count,
                                 event)
                restarter.start(start_ns + cfg.warmup_ns, procs, restart)
            if real is not None:
                write_remote_go(real, [(s["name"], file_name(s["name"])) for s in specs],
                                start_ns)
            limit = (margin + cfg.warmup_ns + duration_ns + linger) / 1e9 + SLACK_S
            deadline = time.monotonic() + limit
            for name, proc in procs.items():
                if proc.wait(max(0.0, deadline - time.monotonic())) is None \
                        and name != CLOCK_NODE and name not in restarted:
                    failed[name] = f"did not finish within {limit:g} s and was stopped"
            if restarter is not None:  # the restarted processes finish too
                restarter.join()
                for name in restarted:
                    if procs[name].wait(max(0.0, deadline - time.monotonic())) is None:
                        failed[name] = f"did not finish within {limit:g} s and was stopped"
            commands.measured()
            daemons.sample_all()  # the end of the measurement: a daemon gone by now died in it
            _each(parts, "sender_done", state)
            planned_end_ns = start_ns + cfg.warmup_ns + duration_ns + linger
            stop_s = max(0.0, (time.monotonic_ns() - planned_end_ns) / 1e9)
            agents.stop_all()
        except KeyboardInterrupt as exc:
            interrupted = str(getattr(exc, "reason", "")) or "interrupted by Ctrl-C"
            if restarter is not None:
                restarter.join()
            commands.measured()
            agents.stop_all()
            _each(parts, "interrupted", state)
            ready_s = time.monotonic() - t0
            stop_s = None
            daemons.sample_all()
        stopped = time.monotonic() - t0
        hosts = real.describe() if real is not None else None
    # the links' (and a tunnel's) counters: read as the network stopped, with the block
    link = network.describe() if network is not None else None
    # after the daemons stopped: a command node's program (a daemon) mapped its Fast DDS files
    # until then, and left them behind when it was stopped
    fastdds_shm.remove_orphaned(shm_before)
    for name in rclpy_nodes(graph):  # its report from what it counted and logged
        rclpy_collect(agent, workdir, file_name(name), tag)
    reports: dict[str, dict[str, Any] | None] = {}
    for spec in specs:
        name = spec["name"]
        reports[name], bad = _report(workdir, name)
        if bad is not None:
            failed.setdefault(name, bad)
        proc = procs.get(name)
        if reports[name] is None and name not in failed:
            code = proc.exit_code if proc is not None else None
            why = proc.stderr_tail() if proc is not None else "not started"
            known = named(proc.stderr_text(), (code or 0) < 0) if proc is not None else None
            failed[name] = (f"exited (code {code}) without a report: {why}"
                            + (f" (a known crash: {known})" if known else ""))
    for name, report in reports.items():  # where each clock ran; TEST ONLY: the true offset
        clock = (report or {}).get("clock")
        if clock is not None:
            clock["host"] = (real.place.get(name) if real is not None
                             else _node_hosts(graph, topology).get(name))
            shift = _shift(cfg, topology, name)
            if shift is not None and clock["role"] == "probed" and report is not None:
                # the node's clock = (mwperf's + offset) x (1 + drift); at its go instant t:
                # reference - node = t / (1 + drift) - offset - t
                t, (offset_s, drift_ppm) = report["go_ns"], shift
                clock["test_true_offset_ns"] = round(t / (1 + drift_ppm * 1e-6)
                                                     - offset_s * 1e9 - t)
    survivor_only = restarter.fold(specs, reports) if restarter is not None else []
    result = merge(graph, cfg, specs, reports, failed, interrupted,
                 run_id=f"{started:%Y%m%dT%H%M%SZ}-{cfg.transport}-graph-{tag & 0xFFFF:04x}",
                 started=started, ready_s=ready_s, stop_s=stop_s, total_s=stopped,
                 daemons=daemons.describe(), link=link, cpu=state.found["cpu"], hosts=hosts,
                 commands=commands.entries())
    verdicts(graph, result, _foreign(reports))
    phases = state.found.get("phases")
    attach_outages(result, workdir, _node_hosts(graph, topology),
                   network.outage_window() if network is not None else None,
                   network.outage_every_ns if network is not None else 0,
                   phases["drained_ns"] - linger if phases else None)
    for part in parts:
        part.section(state, result)  # type: ignore[arg-type]
    if restarter is not None:
        assert samples is not None
        restarter.section(result, specs, reports, samples)
        _restart_warnings(state, result, survivor_only)
    state.warnings.extend(daemons.warnings())  # one that died in the measurement, or was killed
    if state.warnings:  # after what the parts' sections said
        result["warnings"] = state.warnings + list(result.get("warnings") or [])
    if cfg.layers:
        attach_layers(result, graph, specs, reports,
                      {s["name"]: rows_path(workdir, file_name(s["name"])) for s in specs},
                      state.found.get("layers_missing"),
                      *_link_stamps(network, tag, graph, topology),
                      transport=cfg.transport)
    problem = validation_error(result, "graph-result")
    if problem is not None:  # mwperf's own fault: say where, keep nothing half-right
        raise RunError(f"the graph result does not match schema/result.v2.json at {problem}")
    return result


def _restart(agents: AgentSet, procs: dict[str, AgentProcess], specs: list[dict[str, Any]],
             restarter: Restarter, workdir: Path, name: str, count: int,
             event: dict[str, Any]) -> None:
    """``--restart``: node ``name``'s process killed, its files moved aside, and started again
    as it ran, its spec resuming (graph/restarts.py); the event gets the times."""
    old = procs[name]
    argv = list(old.popen.args)
    spec = next(s for s in specs if s["name"] == name)
    old.kill()
    # stamped once the signal is sent and the process reaped: nothing it sent is after this
    event["killed_ns"] = time.monotonic_ns()
    for suffix in ("stdout", "stderr"):
        with contextlib.suppress(OSError):
            (workdir / f"{old.name}.{suffix}").rename(
                workdir / f"{old.name}.killed-{count}.{suffix}")
    restarter.move_aside(name, spec, count)
    resumed = workdir / FOLDER / f"{file_name(name)}.restart-{count}.spec.json"
    resumed.write_text(json.dumps(restarter.resumed_spec(spec)))
    argv[argv.index("--node-spec") + 1] = str(resumed)
    event["started_ns"] = time.monotonic_ns()
    new = agents.respawn(old, argv)
    procs[name] = new
    new.wait_ready("node", READY_TIMEOUT_S)
    event["ready_ns"] = time.monotonic_ns()


def _restart_warnings(state: PointState[PointConfig], result: dict[str, Any],
                      survivor_only: list[str]) -> None:
    """A restart after which an edge never recovered, and figures only the survivor has."""
    warnings = state.warnings
    for entry in result.get("restarts", []):
        stuck = [f"{e['topic']} {e['from']} -> {e['to']}" for e in entry["edges"]
                 if not e["recovered"]]
        if entry["killed_ns"] is None or stuck:
            warnings.append(make_warning(
                "restart-not-recovered",
                f"--restart {entry['target']}: "
                + (f"nothing sent after the kill arrived on {', '.join(stuck)} within the run"
                   if stuck else "; ".join(entry["notes"]) or "not restarted"),
                "run longer after the restart, or see the node's logs (node.*.killed-N.stderr)"))
    for text in survivor_only:
        warnings.append(make_warning("restart-survivor-only", f"--restart: {text}",
                                     "see the edge's samples file: it has every arrival"))


def _each(parts: list[Part], hook: str, state: PointState[PointConfig]) -> None:
    for part in parts:
        getattr(part, hook)(state)


def _command_environment(graph: Graph, cfg: PointConfig) -> dict[str, str]:
    """The command nodes' environment (the distribution's, its Python first on PATH), their
    programs checked to be there (exit 2 naming the node)."""
    env = environment(os.environ, ros2_environment(cfg), str(distribution(cfg).python.parent))
    check_programs(graph, env)
    return env


def ros2_type(cfg: PointConfig) -> str:
    """The ROS 2 type the graph's topics travel in: the ros2 transport's (``--opt type``, else
    the agent's), a raw DDS transport's ``--opt ros2-type``."""
    if cfg.transport != "ros2":
        return cfg.option(RAW_DDS_TYPE) or ""
    return cfg.option(TYPE_OPT) or message_type(cfg) or DEFAULT_TYPE


def _foreign(reports: dict[str, dict[str, Any] | None]) -> dict[str, tuple[int, int]]:
    """topic -> (foreign, malformed) messages mwperf's subscriptions of it counted."""
    out: dict[str, tuple[int, int]] = {}
    for report in reports.values():
        for sub in (report or {}).get("subscriptions", []):
            f, m = out.get(sub["topic"], (0, 0))
            out[sub["topic"]] = (f + sub["foreign"], m + sub["malformed"])
    return out


def serve(graph: Graph, daemons: DaemonSet, network: Network | None,
          served_as: dict[str, str], secured: Path | None = None) -> dict[str, str]:
    """foxglove: a server (mwperf's foxglove-sdk server) per publishing node, on its host:
    node -> its ``host:port``; ``served_as`` gets each server's name -> its node. ``secured``:
    the point's work folder under ``--secure tls``: each server serves wss with the run's
    broker certificate (the secure part made it, for every host's address)."""
    require_sdk(f"--graph {graph.name} --transport foxglove")
    tls = identity(secured / SECURITY_FOLDER, BROKER) if secured is not None else None
    servers = {}
    for node in serving_nodes(graph):
        host, netns = ((network.address_of(node), network.netns_of(node)) if network is not None
                       else (foxglove.LOOPBACK, None))
        name = f"{foxglove.NAME}.{file_name(node)[len('node.'):]}"
        served_as[name] = node
        address = daemons.start(lambda h=host, n=netns, m=name: foxglove.spec(
            h, n, name=m, tls=tls)).address
        if address is None:
            raise RunError(f"{name} said it was ready but not where it listens")
        servers[node] = address
    return servers


def _link_stamps(network: Network | None, tag: int, graph: Graph,
                 topology: Topology | None) -> tuple[Link, dict[str, str]]:
    """``--layers --link``: the emulators' stamps of each message (read once their block was
    left) and where each node ran."""
    if network is None:
        return {}, {}
    paths = [path for wire in network.layer_logs() for path in wire.values()]
    return read_many(paths, run_id=tag), _node_hosts(graph, topology)


def _node_hosts(graph: Graph, topology: Topology | None) -> dict[str, str]:
    """node -> the emulated host it runs on (empty on this machine)."""
    if topology is None:
        return {}
    place = dict(topology.place)
    return {n.name: place[n.name] for n in graph.nodes}


def _shift(cfg: PointConfig, topology: Topology | None, node: str) -> tuple[int, float] | None:
    """TEST ONLY (--test-clock): the clock shift of the host ``node`` runs on, if any."""
    host = dict(topology.place).get(node) if topology is not None else None
    return next(((o, d) for h, o, d in cfg.test_clock if h == host), None)


def _start(agents: AgentSet, agent: Agent, cfg: PointConfig, specs: list[dict[str, Any]],
           workdir: Path, go_file: Path, tag: int, place: Place | None,
           real: PointHosts | None, clock_args: list[str],
           shift: tuple[int, float] | None,
           hooks: "tuple[list[Part], PointState[PointConfig]] | None" = None,
           process: str | None = None) -> AgentProcess:
    """Start ``specs``' node where it is placed: here (in an emulated host's namespace, or
    mwperf's own), or on a real host (its spec on its command line, its files in its scratch
    folder there, its report sent back). Several specs: the nodes of ``process``, in one agent
    process (processes.py; on one host, never a real one), placed and limited as its first."""
    first = specs[0]["name"]
    name = file_name(first) if len(specs) == 1 else FILE_PREFIX + str(process)
    remote = real is not None and real.is_remote(first)
    if remote:
        spec_args, go, reports = [json.dumps(specs[0])], GO_NAME, [f"{name}.json"]
    else:
        spec_args, reports = [], []
        for spec in specs:
            path = workdir / f"{file_name(spec['name'])}.spec.json"
            path.write_text(json.dumps(spec))
            spec_args.append(str(path))
            reports.append(str(workdir / f"{file_name(spec['name'])}.json"))
        go = str(go_file)
    argv = [str(agent.path), "node", "--transport", cfg.transport,
            *(w for s in spec_args for w in ("--node-spec", s)), "--go-file", go,
            "--run-id", str(tag),
            *(["--json", reports[0]] if len(specs) == 1
              else [w for r in reports for w in ("--node-json", r)]),
            "--quiet", *qos_args(cfg), "--spin-margin", format_duration_arg(cfg.spin_margin_ns)]
    if cfg.busy_poll:
        argv.append("--busy-poll")
    argv += clock_args
    if shift is not None:  # TEST ONLY: a host with a clock of its own (a time namespace)
        argv = shifted(argv, *shift)
    netns, env, opts = placed(place, first, cfg.transport, None)
    if cfg.transport == "ros2":  # the ROS 2 distribution's environment (transports/ros2.py)
        env = {**ros2_environment(cfg), **(env or {})}
    for part in hooks[0] if hooks is not None else []:  # what the parts on graphs add
        assert hooks is not None
        argv += part.args(hooks[1], first)
        opts = part.placed_opts(hooks[1], first, opts)
        env = (part.remote_env(hooks[1], first, name, env) if remote
               else part.env(hooks[1], name, env))
    argv += [arg for opt in opts for arg in ("--opt", opt)]
    if remote:
        assert real is not None
        return agents.adopt(real.spawn(first, argv, workdir, name, env, reports))
    proc = agents.spawn(first, argv, netns, env, name=name)
    proc.ready_lines = len(specs)  # each node of the process says READY
    return proc


def _clock_args(clocks: Any, specs: list[dict[str, Any]]) -> list[str]:
    """The clock flags of the nodes of one process: one host's, so the same for each (a
    process of the clock reference and its probers would need both: refused)."""
    each = {tuple(clocks.args(s["name"])) for s in specs}
    if len(each) > 1:
        raise UsageError(f"nodes {', '.join(s['name'] for s in specs)} share a process but not "
                         "a clock (one is the graph's clock reference): run them --processes "
                         "per-node")
    return list(next(iter(each)))


def _start_rclpy(agents: AgentSet, cfg: PointConfig, graph: Graph, spec: dict[str, Any],
                 workdir: Path, go_file: Path, tag: int, place: Place | None) -> AgentProcess:
    """A ``client: rclpy`` node (rclpy_run.py): the distribution's Python on the node's spec."""
    name = file_name(spec["name"])
    spec_path = workdir / f"{name}.spec.json"
    # the agent's spec form (node-collect reads it): rclpy's executor goes on the command line
    spec_path.write_text(json.dumps({**spec, "executor": "single"}))
    netns, env, _ = placed(place, spec["name"], cfg.transport, None)
    env = {**ros2_environment(cfg), **(env or {})}
    return agents.spawn(spec["name"], rclpy_argv(cfg, graph.node(spec["name"]), spec_path,
                                                 go_file, tag, workdir, name),
                        netns, env, name=name)


def _report(workdir: Path, node: str) -> tuple[dict[str, Any] | None, str | None]:
    """The node's report, checked against the schema's node-report; else (None, why)."""
    path = workdir / f"{file_name(node)}.json"
    try:
        report = json.loads(path.read_text())
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError) as exc:
        return None, f"its report {path.name} is not JSON ({exc})"
    problem = validation_error(report, "node-report")
    if problem is not None:
        return None, f"its report does not match schema/result.v2.json at {problem}"
    return report, None



