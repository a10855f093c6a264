"""Running one point: the place and its daemons, the server role(s) until READY, the sender,
then collect, merge, and let each part (parts/) add its section.

Roles: roundtrip = pong (server) + ping (sender, measures); oneway = sub (server, measures) +
pub (sender); with ``--subscribers N`` one-way runs N subs (subscribers.py). The place
(place.py) is this machine's loopback, emulated hosts (``--link`` or a scenario's ``hosts:``;
``--link`` alone: the server on host b, the sender on host a) or real hosts over SSH. What a
point measures besides its stream (a bridge, clock sync, allocations, a profile, wire bytes,
samples, resilience) is a part: parts/ registers them, and ``run_point`` calls their hooks.
Nothing outlives ``run_point``: the agents live inside an ``AgentSet``, the cgroups of a
CPU quota in the point's lease (leases.py), the emulated hosts in their own. A Ctrl-C stops
them with SIGINT, and whatever they reported still becomes a (partial) result.
"""

import contextlib
import json
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

from . import fastdds_shm
from .agent import Agent
from .bridges.run import sides
from .commandline import (SAMPLES_NAME, make_run_id, ready_timeout_s, role_argv,
                          samples_files, sender_timeout_s, server_names)
from .config import ROLES, PointConfig
from .roles import ONE_WAY
from .emulation.topology import two_hosts
from .errors import RunError, UsageError
from .known_crashes import named
from .merge import AgentRun, make_warning, merge
from .middleware import Plan, prepare
from .parts import Part, parts_for
from .parts.state import PointState
from .procs import STOP_GRACE_S, AgentProcess
from .remote.supervised import RemoteProcess
from .result_types import RunResult, Warning
from .run.opened import opened
from .run.placed import placed
from .schema import validation_error
from .subscribers import connect_address, listen_address
from .transports.iceoryx2 import own_domain

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
    layers_dir: Path | None = None
    """--layers: each agent's per-message rows (layers_rows.py), saved with the result"""
    topic_samples: list[Path] = field(default_factory=list)
    """--samples with several topics: each topic's file (``samples.<topic>.csv``), saved by its
    name; ``samples_path`` is then None"""


def sweeps_nothing(cfg: PointConfig) -> bool:
    """A point whose Fast DDS process leaves its shared-memory files (fastdds_shm.py): the rclpy
    publisher of ``--mode throughput --opt client=rclpy`` (its port files stayed in /dev/shm);
    the point removes, at its end, what appeared during it and nobody maps. Not every Fast DDS
    point: a file a live process of a point beside it maps only now and then would go too."""
    return cfg.client == "rclpy" and cfg.mode == "throughput"


def run_point(cfg: PointConfig, agent: Agent, workdir: Path) -> Outcome:
    """Measure one point with agents working in ``workdir`` (which the caller removes)."""
    parts = parts_for(cfg)
    for part in parts:
        part.check(cfg, agent)
    started = datetime.now(timezone.utc)
    interrupted: str | None = None
    shm_before = fastdds_shm.entries() if sweeps_nothing(cfg) else None
    with _opened(cfg, agent, workdir) as run:
        try:
            _each(parts, "start", run)
            given = _given(run, parts)
            servers_given, sender_given = sides(given, run.bridge)
            address = _start_servers(run, parts, servers_given)
            _start_sender(run, parts, sender_given, address)
            _each(parts, "sender_started", run)
            _wait_sender(run, given)
            run.daemons.sample_all()  # the end of the measurement
            _each(parts, "sender_done", run)
            if run.sender is not None and run.sender.exit_code == 2:
                raise UsageError(f"{run.sender.role} rejected the point: "
                                 f"{run.sender.stderr_tail()}")
            for server in run.servers:
                run.warnings += _stop_server(server, cfg.mode)
        except KeyboardInterrupt as exc:
            interrupted = exc.reason if isinstance(exc, Interrupted) else "interrupted by Ctrl-C"
            assert run.agents is not None
            run.agents.stop_all()
            _each(parts, "interrupted", run)
    if shm_before is not None:  # what the rclpy publisher left (it sweeps nothing)
        fastdds_shm.remove_orphaned(shm_before)
    if interrupted and run.agents is not None and not run.agents.agents:
        # stopped while the daemons started: nothing measured
        raise Interrupted(interrupted)
    result = _merged(run, parts, started, interrupted)
    run.place.record(result)
    for part in parts:
        part.section(run, result)
    files = {name: path for part in parts for name, path in part.files(run).items()}
    topic_samples = files.get("topic_samples", {})
    return Outcome(result, files.get("samples_path"), interrupted is not None,
                   run.daemons.folder if run.daemons.daemons else None,
                   files.get("profile_dir"), files.get("alloc_sites_dir"),
                   files.get("layers_dir"), list(topic_samples.values()))


def _each(parts: Sequence[Part], hook_name: str, run: PointState[PointConfig]) -> None:
    for part in parts:
        getattr(part, hook_name)(run)


def _opened(cfg: PointConfig, agent: Agent, workdir: Path
            ) -> contextlib.AbstractContextManager[PointState[PointConfig]]:
    """The point's lease, place, daemons, CPU placement and agents (run/opened.py): emulated
    hosts with ``--link`` or a scenario's ``hosts:`` (``--link`` alone: hosts a and b)."""
    topology = ((cfg.topology or two_hosts()) if cfg.link is not None or cfg.topology is not None
                else None)
    return opened(cfg, agent, workdir, f"{cfg.transport} {cfg.mode} point", "run", topology)


def _given(run: PointState[PointConfig], parts: Sequence[Part]) -> PointConfig:
    """The point as the agents get it: the parts' changes, and a domain of the run's own."""
    given = replace(run.cfg, opts=run.cfg.opts + own_domain(run.cfg, run.lease))
    for part in parts:
        given = part.given(run, given)
    return given


def _argv(run: PointState[PointConfig], parts: Sequence[Part], role: str, given: PointConfig,
          address: str, name: str | None = None) -> Callable[[Path, Agent], list[str]]:
    """The agent command line of ``role`` as a function of where it works (here or a real
    host's scratch folder) and which agent binary it runs."""
    def argv(here: Path, agent_path: Agent) -> list[str]:
        line = role_argv(agent_path, role, given, here, run.tag, address, name)
        for part in parts:
            line += part.args(run, role)
        for part in parts:
            line = part.command(run, role, line)
        return line
    return argv


def _start_servers(run: PointState[PointConfig], parts: Sequence[Part], given: PointConfig) -> str:
    """Start the pong or the subs, each until READY; the address the sender connects to."""
    cfg, role = run.cfg, ROLES[run.cfg.mode][0]
    plan = (Plan(run.bridge.listen) if run.bridge is not None
            else prepare(cfg, run.workdir, run.agent, run.daemons, run.network))
    if plan.listen is None:
        return plan.connect or ""
    ready: list[str] = []
    for index, name in enumerate(server_names(cfg)):
        listen = listen_address(given.transport, plan.listen, index, ready[0] if ready else None)
        run.servers.append(_spawn(run, parts, role, _argv(run, parts, role, given, listen, name),
                                  given.transport, name))
        ready.append(run.servers[-1].wait_ready(given.transport, ready_timeout_s(cfg)))
    return (run.bridge.sender(ready[0]) if run.bridge is not None
            else connect_address(cfg.transport, ready))


def _start_sender(run: PointState[PointConfig], parts: Sequence[Part], given: PointConfig,
                  address: str) -> None:
    role = ROLES[run.cfg.mode][1]
    run.sender = _spawn(run, parts, role, _argv(run, parts, role, given, address),
                        given.transport, role)


def _wait_sender(run: PointState[PointConfig], given: PointConfig) -> None:
    """Until the sender finishes, or stop everything at its time limit (with a warning)."""
    assert run.sender is not None and run.agents is not None
    limit_s = sender_timeout_s(given)
    if run.sender.wait(limit_s) is None:
        stopped = f"{run.sender.role} did not finish within {limit_s:g} s and was stopped"
        run.found["stopped"] = stopped
        run.warnings.append(make_warning(
            "sender-timeout", f"{stopped}; its last words: {run.sender.stderr_tail()}",
            "the agent seems stuck: please report it with the command line"))
        run.agents.stop_all()
    run.sender_stopped_ns = time.monotonic_ns()


def _merged(run: PointState[PointConfig], parts: Sequence[Part], started: datetime,
            interrupted: str | None) -> RunResult:
    """Every agent's report read and merged into the run-result (with mwperf's own warnings)."""
    assert run.agents is not None
    cfg = run.cfg
    files = {name: path for part in parts for name, path in part.files(run).items()}
    run.runs = [_collect(proc, run.workdir) for proc in run.agents.agents]
    placement = run.found["placement"]
    try:
        result = merge(
            run_id=make_run_id(cfg, run.tag, started), mode=cfg.mode, config=cfg.to_dict(),
            runs=run.runs,
            started_at=_rfc3339(started), finished_at=_rfc3339(datetime.now(timezone.utc)),
            interrupted=interrupted or run.found.get("stopped"),
            own_warnings=run.warnings + placement.warnings + _kill_warnings(run.agents.agents)
            + run.daemons.warnings() + _lost_warnings(run.agents.agents),
            samples_file=SAMPLES_NAME if files.get("samples_path") else None,
            topic_samples={i: path.name for i, path in files.get("topic_samples", {}).items()},
            daemons=run.daemons.describe())
    except RunError as exc:
        if interrupted:  # nothing usable, and the user asked to stop: a suite must stop too
            raise StoppedRunError(str(exc)) from None
        raise
    if run.found.get("cpu") is not None:
        result["cpu"] = run.found["cpu"]
    return result


def _spawn(run: PointState[PointConfig], parts: Sequence[Part], role: str,
           argv: Callable[[Path, Agent], list[str]], transport: str, name: str) -> AgentProcess:
    """Start agent ``name`` where its role is placed: here (in an emulated host's namespace,
    or mwperf's own) or on a real host (its paths then the remote scratch folder's)."""
    assert run.agents is not None
    netns, env, opts = placed(run.network, role, transport, run.bridge)
    for part in parts:
        opts = part.placed_opts(run, role, opts)
    own = [arg for opt in opts for arg in ("--opt", opt)]
    if run.real is None or not run.real.is_remote(role):
        for part in parts:
            env = part.env(run, name, env)
        return run.agents.spawn(role, argv(run.workdir, run.agent) + own, netns, env, name=name)
    host = run.real.hosts[run.real.host_of(role)]
    command = argv(Path("."), Agent(Path(host.agent.path))) + own
    sends = [f"{name}.json"] + (samples_files(run.cfg) if "--samples" in command else [])
    for part in parts:
        env = part.remote_env(run, role, name, env)
        sends += part.remote_files(run, role, name)
    return run.agents.adopt(run.real.spawn(role, command, run.workdir, name, env, sends))


def _lost_warnings(agents: list[AgentProcess]) -> list[Warning]:
    """A real host's agent whose SSH channel closed before it reported (remote/supervised)."""
    return [make_warning("connection-lost", f"{a.name} on host '{a.host}': {a.channel.lost}",
                         "what it measured before is kept if it reported; check the network "
                         "to that host and run again")
            for a in agents if isinstance(a, RemoteProcess) and a.channel.lost]


def _stop_server(server: AgentProcess, mode: str) -> list[Warning]:
    """pong runs until told; sub exits by itself after pub's end-of-stream marker."""
    warnings: list[Warning] = []
    if mode in ONE_WAY and server.wait(STOP_GRACE_S) is None:
        warnings.append(make_warning(
            "no-end-of-stream", f"{server.name} did not exit within {STOP_GRACE_S:g} s after pub finished "
            "and was stopped with SIGTERM", "the end-of-stream marker may have been lost, or, on a "
            "reliable stream, still be queued behind messages not yet delivered"))
    server.send(signal.SIGTERM)
    if server.wait(STOP_GRACE_S) is None:
        server.kill()
    return warnings


def _kill_warnings(agents: list[AgentProcess]) -> list[Warning]:
    return [make_warning("agent-killed", f"{a.name} did not stop within {STOP_GRACE_S:g} s of "
                         "being asked and was killed (SIGKILL)", "its report may be missing")
            for a in agents if a.killed]


def _ending(proc: AgentProcess) -> str:
    """How an agent that wrote no report ended: what to look at next (a crash, a hang)."""
    code = proc.exit_code
    if proc.killed:
        return f"killed with SIGKILL: it did not stop within {STOP_GRACE_S:g} s of being asked"
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"ended by {signal.Signals(-code).name}"
        except ValueError:
            return f"ended by signal {-code}"
    return f"exit code {code}"


def _collect(proc: AgentProcess, workdir: Path) -> AgentRun:
    """Read and check the report an agent wrote; an unusable one is recorded with why."""
    path = workdir / f"{proc.name}.json"
    report, note = None, proc.stderr_tail()
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        lost = getattr(getattr(proc, "channel", None), "lost", None)
        note = (f"no report: {lost}" if lost
                else f"no report written ({_ending(proc)}); stderr: {note}")
        known = named(proc.stderr_text(), (proc.exit_code or 0) < 0)
        if known is not None:
            note += f" (a known crash: {known})"
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
