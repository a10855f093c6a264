"""Running a graph on this machine: the transport's daemons, one agent per node (``mwperf-agent
node``), all READY, one start instant for every schedule (the go file), then each node's
report merged into the graph result (result.py). A node that dies leaves a partial result
naming it; the rest of the graph is measured and stopped; nothing is left running."""

import contextlib
import json
import os
import secrets
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..agent import Agent
from ..commandline import qos_args
from ..config import PointConfig
from ..daemons import DaemonSet
from ..durations import format_duration_arg
from ..emulation.network import Network, emulated_network
from ..emulation.topology import Topology, two_hosts
from ..errors import RunError, UsageError
from ..schema import validation_error
from ..leases import Lease
from ..middleware import prepare
from ..procs import AgentProcess, AgentSet
from ..transports import hook, profile
from ..transports.iceoryx2 import own_domain
from ..wire import HEADER_BYTES
from .check import check_hosts, check_sizes
from .model import Graph, Node
from .plan import addresses, linger_ns, node_specs, supported
from .result import merge

START_MARGIN_NS = 200_000_000
"""the go file names an instant this far ahead: every node reads it before it comes"""
SLACK_S = 10.0


def file_name(node: str) -> str:
    """A node's name as a file name (iRobot namespaces have '/'; check.py refuses two nodes
    that would share one)."""
    return "node." + node.replace("/", "_")


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
    _check_rustdds_loopback(graph, cfg)
    most = profile(cfg.transport).max_message
    check_sizes(graph, cfg.transport, most - HEADER_BYTES if most else None)
    tag = secrets.randbits(32)
    started = datetime.now(timezone.utc)
    duration_ns = cfg.duration_ns or 0
    linger = linger_ns(graph)
    interrupted: str | None = None
    failed: dict[str, str] = {}
    ready_s = 0.0
    stop_s: float | None = None
    topology = placed_topology(graph, cfg)
    shm_before = _shm_entries()
    with Lease.take(f"{cfg.transport} graph {graph.name}") as lease, \
            _emulated(topology, cfg, workdir, tag) as network, \
            DaemonSet(workdir, lease) as daemons:
        cfg = replace(cfg, opts=cfg.opts + own_domain(cfg, lease))
        plan = prepare(cfg, workdir, agent, daemons, network)
        specs = node_specs(graph, addresses(graph, cfg.transport, plan.listen, workdir, tag,
                                            network),
                           cfg.warmup_ns, duration_ns, linger)
        go_file = workdir / "go"
        with AgentSet(workdir) as agents:
            t0 = time.monotonic()
            procs: dict[str, AgentProcess] = {}
            try:
                for spec in specs:
                    procs[spec["name"]] = _start(agents, agent, cfg, spec, workdir, go_file, tag,
                                                 network)
                for proc in procs.values():
                    proc.wait_ready("node", max(10.0, cfg.discovery_timeout_ns / 1e9 + 5))
                ready_s = time.monotonic() - t0
                start_ns = time.monotonic_ns() + START_MARGIN_NS
                temporary = go_file.with_suffix(".tmp")
                temporary.write_text(f"{start_ns}\n")
                os.replace(temporary, go_file)
                limit = (START_MARGIN_NS + cfg.warmup_ns + duration_ns + linger) / 1e9 + SLACK_S
                deadline = time.monotonic() + limit
                for name, proc in procs.items():
                    if proc.wait(max(0.0, deadline - time.monotonic())) is None:
                        failed[name] = f"did not finish within {limit:g} s and was stopped"
                planned_end_ns = start_ns + cfg.warmup_ns + duration_ns + linger
                stop_s = max(0.0, (time.monotonic_ns() - planned_end_ns) / 1e9)
                agents.stop_all()
            except KeyboardInterrupt as exc:
                interrupted = str(getattr(exc, "reason", "")) or "interrupted by Ctrl-C"
                agents.stop_all()
                ready_s = time.monotonic() - t0
                stop_s = None
            daemons.sample_all()
        _remove_orphaned_shm(shm_before)
        stopped = time.monotonic() - t0
        link = network.describe() if network is not None else None
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
            failed[name] = f"exited (code {code}) without a report: {why}"
    result = merge(graph, cfg, specs, reports, failed, interrupted,
                 run_id=f"{started:%Y%m%dT%H%M%SZ}-{cfg.transport}-graph-{tag & 0xFFFF:04x}",
                 started=started, ready_s=ready_s, stop_s=stop_s, total_s=stopped,
                 daemons=daemons.describe(), link=link)
    problem = validation_error(result, "graph-result")
    if problem is not None:  # mwperf's own fault: say where, keep nothing half-right
        raise RunError(f"the graph result does not match schema/result.v2.json at {problem}")
    return result


def placed_topology(graph: Graph, cfg: PointConfig) -> Topology | None:
    """With ``--link``: the emulated hosts (a and b, as for one stream), each node on the host
    it names (a node that names none on the first); None on this machine, where every node
    runs here whatever host it names."""
    if cfg.link is None and cfg.topology is None:
        return None
    base = cfg.topology or two_hosts()
    check_hosts(graph, base.hosts, "--link")
    taken = {name for name, _ in base.place}
    clash = next((n.name for n in graph.nodes if n.name in taken), None)
    if clash is not None:
        raise UsageError(f"graph '{graph.name}': node '{clash}' has the name of a role or daemon "
                         f"mwperf places ({', '.join(sorted(taken))}); rename the node")
    return replace(base, place=base.place + tuple((n.name, n.host or base.hosts[0])
                                                  for n in graph.nodes))


def _emulated(topology: Topology | None, cfg: PointConfig, workdir: Path, tag: int
              ) -> contextlib.AbstractContextManager[Network | None]:
    if topology is None:
        return contextlib.nullcontext()
    return emulated_network(topology, cfg.link, cfg.link_backend, workdir,
                            f"graph {tag & 0xFFFF:04x}")


def _start(agents: AgentSet, agent: Agent, cfg: PointConfig, spec: dict[str, Any],
           workdir: Path, go_file: Path, tag: int, network: Network | None) -> AgentProcess:
    name = file_name(spec["name"])
    spec_path = workdir / f"{name}.spec.json"
    spec_path.write_text(json.dumps(spec))
    argv = [str(agent.path), "node", "--transport", cfg.transport, "--node-spec",
            str(spec_path), "--go-file", str(go_file), "--run-id", str(tag),
            "--json", str(workdir / f"{name}.json"), "--quiet", *qos_args(cfg),
            "--spin-margin", format_duration_arg(cfg.spin_margin_ns)]
    if cfg.busy_poll:
        argv.append("--busy-poll")
    if network is None:
        return agents.spawn("node", argv, name=name)
    hooks = hook(cfg.transport)
    for opt in hooks.link_opts(network, spec["name"]):
        argv += ["--opt", opt]
    return agents.spawn("node", argv, network.netns_of(spec["name"]),
                        hooks.agent_env(network.address_of(spec["name"])), name=name)


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



SHM = Path("/dev/shm")
SHM_PREFIXES = ("fastrtps_", "sem.fastrtps_")
"""Fast DDS's shared-memory files: each agent removes what it made and nobody maps at its exit,
but with many node processes the last to exit counts the others' early files as someone
else's, so the run removes what appeared during it and no process maps any more"""


def _shm_entries() -> set[str]:
    try:
        return {n for n in os.listdir(SHM) if n.startswith(SHM_PREFIXES)}
    except OSError:
        return set()


def _remove_orphaned_shm(before: set[str]) -> None:
    new = _shm_entries() - before
    if not new:
        return
    mapped: set[str] = set()
    for maps in Path("/proc").glob("[0-9]*/maps"):
        try:
            text = maps.read_text(errors="replace")
        except OSError:
            continue
        mapped.update(name for name in new if f"/dev/shm/{name}" in text)
    for name in new - mapped:
        (SHM / name).unlink(missing_ok=True)
