"""Running a graph's command nodes (commands.py): each program started before mwperf's nodes
(its subscriptions then exist when mwperf's publishers wait for their readers), in its own
process group, as a daemon of the run (recorded in the lease, its output in
``daemons/command.<node>.log``, stopped with its whole group at the end, on a failure and on
Ctrl-C); watched while mwperf's nodes get ready (one that exits is named at once); its group's
CPU and memory read over the measurement (process_group.py); its verdict in the result."""

import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

from .. import pong_command
from ..daemons.base import DaemonProcess, DaemonSet, DaemonSpec
from ..errors import RunError, UsageError
from ..procs import AgentProcess
from ..process_group import Usage, usage
from .commands import argv, is_command, outputs
from .model import Graph

PREFIX = "command."
READY_POLL_S = 0.05


def daemon_name(node: str) -> str:
    return PREFIX + node.replace("/", "_")


def check_programs(graph: Graph, env: Mapping[str, str]) -> None:
    """Every command's program is there (a UsageError naming the node, exit 2)."""
    for node in graph.nodes:
        if is_command(node):
            pong_command.program(node.command, env, f"node '{node.name}': command")


class Commands:
    """The run's command nodes as started programs."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.nodes = [n for n in graph.nodes if is_command(n)]
        self.index = {n.name: i for i, n in enumerate(graph.nodes)}
        self.started: dict[str, DaemonProcess] = {}
        self.start_usage: dict[str, tuple[Usage, float]] = {}
        self.end_usage: dict[str, tuple[Usage, float]] = {}
        self.exit_codes: dict[str, int | None] = {}
        self.names: dict[str, str] = {}
        self.message_type = ""

    def start(self, daemons: DaemonSet, names: Mapping[str, str], message_type: str,
              env: Mapping[str, str]) -> None:
        """Start each program (``names``: graph topic -> its name on the transport)."""
        self.names, self.message_type = dict(names), message_type
        for node in self.nodes:
            line = argv(node, dict(names), message_type)
            spec = DaemonSpec(name=daemon_name(node.name), argv=line,
                              package=f"the program of node '{node.name}'", env=dict(env),
                              ready=lambda d: True, ready_timeout_s=5.0)
            try:
                self.started[node.name] = daemons.start(lambda s=spec: s)
            except RunError as exc:
                raise RunError(f"command node '{node.name}': {exc}") from None

    def check_alive(self) -> None:
        """A RunError naming a program that exited before the graph started."""
        for name, daemon in self.started.items():
            code = daemon.exit_code
            if code is not None:
                raise RunError(f"command node '{name}' ({daemon.spec.argv[0]}) exited before "
                               f"the graph started (exit code {code}): {daemon.log_tail()} "
                               f"({daemon.log_path})")

    def wait_ready(self, procs: Sequence[AgentProcess], timeout_s: float) -> None:
        """mwperf's nodes READY, each within ``timeout_s`` from now, the programs watched."""
        deadline = time.monotonic() + timeout_s
        for proc in procs:
            while True:
                self.check_alive()
                left = deadline - time.monotonic()
                if (proc.exit_code is not None or left <= 0
                        or proc.said_ready(proc.stdout_path.read_text(errors="replace"))):
                    try:
                        proc.wait_ready("node", max(0.0, left))
                    except (RunError, UsageError) as exc:
                        raise type(exc)(f"{exc}{self._readers_of(proc.role)}") from None
                    break
                proc.wait(min(READY_POLL_S, left))

    def _readers_of(self, node: str) -> str:
        """What to say of the programs among the readers mwperf's ``node`` waited for."""
        published = ({p.topic for p in self.graph.node(node).publishers}
                     | {s.publish for s in self.graph.node(node).subscribers if s.publish})
        hints = [f"command node '{n.name}' reads '{s.topic}' ({self.names.get(s.topic, '?')}): "
                 f"is it subscribed there, in {self.message_type}, with a QoS that matches?"
                 for n in self.nodes for s in n.subscribers if s.topic in published]
        return f"; {'; '.join(hints)}" if hints else ""

    def measuring(self) -> None:
        """The go instant: each group's CPU counts from here."""
        for name, daemon in self.started.items():
            self.start_usage[name] = (usage(daemon.popen.pid), time.monotonic())

    def measured(self) -> None:
        """mwperf's nodes finished (before anything is stopped): each group's figures, each
        program's state."""
        for name, daemon in self.started.items():
            self.exit_codes[name] = daemon.exit_code
            self.end_usage[name] = (usage(daemon.popen.pid), time.monotonic())

    def entries(self) -> list[dict[str, Any]]:
        """The result's ``nodes[]`` entries of the command nodes (status set by verdicts)."""
        out = []
        for node in self.nodes:
            daemon = self.started.get(node.name)
            entry: dict[str, Any] = {"name": node.name, "status": "complete",
                                     "status_reason": None}
            if daemon is None:
                out.append({**entry, "status": "failed", "status_reason": "not started"})
                continue
            start, end = self.start_usage.get(node.name), self.end_usage.get(node.name)
            command: dict[str, Any] = {"argv": daemon.spec.argv, "pgid": daemon.popen.pid,
                                       "exit_code": self.exit_codes.get(node.name),
                                       "log": f"daemons/{daemon.log_path.name}"}
            if start is not None and end is not None:
                (before, t0), (after, t1) = start, end
                cpu = max(0.0, after.cpu_user_s + after.cpu_sys_s
                          - before.cpu_user_s - before.cpu_sys_s)
                wall = t1 - t0
                entry.update(cpu_s=round(cpu, 4),
                             cpu_percent=round(100 * cpu / wall, 2) if wall > 0 else None,
                             max_rss_kib=after.peak_rss_kib)
                command.update(processes=after.processes, rss_kib=after.rss_kib)
            entry["command"] = command
            if self.exit_codes.get(node.name) is not None:
                entry.update(status="partial", status_reason=(
                    f"exited during the run (exit code {self.exit_codes[node.name]}): "
                    f"{daemon.log_tail()}"))
            out.append(entry)
        return out


def verdicts(graph: Graph, result: dict[str, Any],
             foreign: Mapping[str, tuple[int, int]]) -> None:
    """Name, in ``result``, each command node whose output carried none of mwperf's messages
    although its input was sent some (``foreign``: topic -> (foreign, malformed) messages
    mwperf's subscriptions of it saw: what the program published that was no copy), and each
    that exited; either makes the result partial."""
    problems = []
    for entry in result["nodes"]:
        if "command" not in entry:
            continue
        node = graph.node(entry["name"])
        reasons = [entry["status_reason"]] if entry["status_reason"] else []
        for topic in outputs(node):
            # into another program: judged where that one's output arrives
            edges = [e for e in result["edges"] if e["from"] == node.name and e["topic"] == topic
                     and not e.get("command_input")]
            sent = max((e["sent"] or 0 for e in edges), default=0)
            if sent and not any(e["received"] for e in edges):
                others, bad = foreign.get(topic, (0, 0))
                what = (f"; it published {others + bad} message(s) there without mwperf's "
                        "(a node under test must pass its input's data on)"
                        if others + bad else "")
                reasons.append(f"published none of the {sent} messages mwperf sent it on its "
                               f"output '{topic}'{what}")
        if reasons:
            entry.update(status="partial", status_reason="; ".join(reasons))
            problems.append(f"command node '{node.name}' {'; '.join(reasons)}")
    if problems and result["status"] != "failed":
        result["status"] = "partial"
        result["status_reason"] = "; ".join(
            [r for r in [result["status_reason"]] if r] + problems)


def environment(base: Mapping[str, str], extra: Mapping[str, str], python_dir: str
                ) -> dict[str, str]:
    """The programs' environment: mwperf's with the transport's on top, the distribution's
    Python first on PATH (``python3 node.py`` imports its rclpy)."""
    env = {**base, **extra}
    env["PATH"] = os.pathsep.join([python_dir, env.get("PATH", os.defpath)])
    return env
