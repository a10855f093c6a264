"""Restarts on graphs (``--restart NODE@T`` with ``--graph``): a node's process killed (SIGKILL,
its process group) at T after the measured phase began and started again at once, as it ran
(its host, its CPU limits, its spec), and what that cost every edge into or out of it and every
chain through those edges.

What the killed process knew survives it on disk: the node was started with ``progress`` in its
spec (node/spec.rs), so each of its publishers and chain stages writes its counts over in place
after every send (24 bytes: warm-up sent, measured sent, the number of its first measured
message), and each of its subscriptions writes every arrival to its edge's samples file as it
arrives (``--samples`` is implied). Before the restart those files are moved aside
(``.killed-N``); the restarted process (spec ``resume``) joins its publishers' schedules where
they are when it starts: the messages due while no process ran are never sent and its messages
keep the schedule's numbers.

Then, per edge: its publisher's ``sent`` is every incarnation's count added up (the killed ones'
from their progress files); a restarted subscriber's arrivals are every incarnation's samples
merged (each message's first arrival once; those several incarnations got are duplicates), its
``received``/``lost`` counted over them while its latency figures stay the survivor's (warning
``restart-survivor-only``). Per restart and edge (``restarts[].edges``): the first arrival of a
message sent at or after the kill (the restarted subscriber's own first arrival), the gap's
messages sent and lost between the last arrival before the kill and that one, and the
schedule's messages in it that no process sent (``never_sent``: not lost, never sent). A chain
has recovered once every hop carried a message sent after the kill.

A daemon (the MQTT broker ``mosquitto``, the zenoh router ``zenohd`` of ``--opt mode=client``,
ROS 1's ``rosmaster``) is restarted on its address; it carries every edge, each of which gets its
figures. Every agent node of such a run opens an endpoint again when a send or a receive finds
its connection or broker gone (spec ``reopen``: node/reopen.rs).

Restarted: those daemons and mwperf's own (``client: agent``) nodes whose publishers are paced.
Not (yet): rclpy and command nodes (their counts live in another program), round trips' and
saturating publishers and service clients (numbered from 0 by each process), servers, graphs on
real hosts; and not with ``--layers``, ``--count-allocs``, ``--alloc-sites`` or ``--profile``,
whose records of the killed process die with it."""

import contextlib
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..procs import RESPAWNER
from ..restarts import daemon_targets, merge_sub_samples, read_samples, survivor_accounting, \
    write_merged_samples
from .model import Graph

FOLDER = "restarts"
"""in the run's work folder: the restartable nodes' progress files and restarted specs"""
READY_TIMEOUT_S = 20.0
"""how long a restarted node gets to print READY (its publishers matched again)"""
NOT_WITH = (("layers", "--layers"), ("count_allocs", "--count-allocs"),
            ("alloc_sites", "--alloc-sites"), ("profile", "--profile"))
"""what a graph restart is refused with: the killed process's records die with it"""


def check(graph: Graph, cfg: Any) -> None:
    """A usage error naming ``--restart`` for what cannot be restarted in this graph point."""
    if not cfg.restarts:
        return
    allowed = restartable(graph) + graph_daemons(cfg)
    for target, at_ns in cfg.restarts:
        item = f"--restart {target}@{at_ns / 1e9:g}s"
        if cfg.remote is not None:
            raise UsageError(f"{item}: not with --host (yet): restarts run on this machine and "
                             "its emulated hosts")
        if target not in allowed:
            why = _why_not(graph, target)
            raise UsageError(f"{item}: {why}; restartable nodes of graph {graph.name}: "
                             f"{', '.join(allowed) or 'none'}")
        if cfg.measure_ns is not None and at_ns >= cfg.measure_ns:
            raise UsageError(f"{item}: at or beyond the end of the measured phase "
                             f"({cfg.measure_ns / 1e9:g} s): give a time inside it")
    for attr, flag in NOT_WITH:
        if getattr(cfg, attr):
            raise UsageError(f"--restart: not with {flag} on a graph (the killed process's "
                             "records die with it)")
    if len({at for _, at in cfg.restarts}) != len(cfg.restarts):
        raise UsageError("--restart: two restarts at the same time; give each its own")


def graph_daemons(cfg: Any) -> list[str]:
    """The daemons a graph run of ``cfg`` starts that ``--restart`` takes, by the names users know
    them by: the MQTT broker, the zenoh router of ``--opt mode=client``, ROS 1's master (the
    nodes open their connections again: node/reopen.rs)."""
    return daemon_targets(cfg.transport, "graph", cfg.option, "agent", None)


def is_daemon(target: str) -> bool:
    return target in ("mosquitto", "zenohd", "rosmaster")


def restartable(graph: Graph) -> list[str]:
    """The nodes ``--restart`` may kill and start again."""
    return [n.name for n in graph.nodes if _why_not(graph, n.name) is None]


def _why_not(graph: Graph, name: str) -> str | None:
    node = next((n for n in graph.nodes if n.name == name), None)
    if node is None:
        return f"no node or daemon '{name}' in this graph run"
    if node.command or node.client != "agent":
        return (f"node '{name}' is run by {'a program of yours' if node.command else node.client}"
                ", whose counts mwperf does not keep across a kill")
    if node.clients or node.servers:
        return f"node '{name}' has services (their calls are not restarted yet)"
    for p in node.publishers:
        if p.period_ns == 0:
            return (f"node '{name}' publishes '{p.topic}' back to back or as a round trip "
                    "(only paced publishers resume their schedule)")
    return None


@dataclass
class Restarter:
    """The restarts of one graph run: which nodes get progress files, the thread that kills and
    restarts them, and what the run's reports and result gain from them."""

    graph: Graph
    restarts: tuple[tuple[str, int], ...]
    workdir: Path
    events: list[dict[str, Any]] = field(default_factory=list)
    replaced: set[str] = field(default_factory=set)
    """the nodes whose process was killed and started again"""
    touched: set[str] = field(default_factory=set)
    """the nodes a restart began on (before the kill: their first process's end is no failure)"""
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @property
    def targets(self) -> set[str]:
        return {t for t, _ in self.restarts}

    def prepare(self, specs: list[dict[str, Any]], file_name: Callable[[str], str]) -> None:
        """Every target's spec gets its progress files' base; every agent node's, ``reopen``
        (a connection to a restarted node breaks: tcp, uds, foxglove)."""
        (self.workdir / FOLDER).mkdir(exist_ok=True)
        agents = {n.name for n in self.graph.nodes if n.client == "agent" and not n.command}
        for spec in specs:
            if spec["name"] in self.targets:
                spec["progress"] = str(self.workdir / FOLDER / file_name(spec["name"]))
            if spec["name"] in agents:
                spec["reopen"] = True

    def start(self, measure_start_ns: int, procs: dict[str, Any],
              restart: Callable[[str, int, dict[str, Any]], None]) -> None:
        """From now on: each target killed and started again at its time (``restart`` does it:
        name, count, the event to fill)."""
        def run() -> None:
            for count, (target, at_ns) in enumerate(sorted(self.restarts, key=lambda r: r[1]), 1):
                due = measure_start_ns + at_ns
                while (now := time.monotonic_ns()) < due:
                    if self._stop.wait((due - now) / 1e9):
                        return
                event: dict[str, Any] = {"target": target, "at_ns": at_ns, "notes": []}
                if target in procs and procs[target].exit_code is not None:
                    event["notes"].append("not restarted: the node had already exited")
                else:
                    if not is_daemon(target):
                        self.touched.add(target)
                    try:  # from the long-lived thread: see RESPAWNER
                        RESPAWNER.submit(restart, target, count, event).result()
                        if not is_daemon(target):
                            self.replaced.add(target)
                    except Exception as exc:  # noqa: BLE001 - said in the result, run goes on
                        event["notes"].append(f"the restart failed: {exc}")
                self.events.append(event)
        self._thread = threading.Thread(target=run, name="mwperf-graph-restarts", daemon=True)
        self._thread.start()

    def join(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def move_aside(self, name: str, spec: dict[str, Any], count: int) -> None:
        """The killed process's files out of the restarted one's way: its progress files and
        its subscriptions' samples files get ``.killed-<count>``."""
        base = Path(spec["progress"])
        for path in base.parent.glob(base.name + ".[ps]*"):
            if ".killed-" not in path.name:
                path.rename(path.with_name(f"{path.name}.killed-{count}"))
        for sub in spec.get("subscriptions", []):
            if sub.get("samples"):
                stem = Path(sub["samples"])
                for path in stem.parent.glob(f"{stem.stem}.*{stem.suffix}"):
                    if ".killed-" not in path.name:
                        path.rename(path.with_name(f"{path.stem}.killed-{count}{path.suffix}"))

    def resumed_spec(self, spec: dict[str, Any]) -> dict[str, Any]:
        """The restarted process's spec (after ``move_aside``): its publishers resume their
        schedules; its chain stages number on from what the processes before it sent."""
        base = Path(spec["progress"])
        subscriptions = []
        for j, sub in enumerate(spec.get("subscriptions", [])):
            killed = _killed_progress(base, f"s{j}") if sub.get("publish") else []
            if killed:
                _, sent, first = killed[-1]
                sub = {**sub, "stage_first_seq": first + sent}
            subscriptions.append(sub)
        return {**spec, "subscriptions": subscriptions, "resume": True}

    def fold(self, specs: list[dict[str, Any]], reports: dict[str, dict[str, Any] | None]
             ) -> list[str]:
        """Every incarnation's counts into the survivors' reports (before the result is
        merged); returns warnings' texts (figures only the survivor has)."""
        said = []
        for spec in specs:
            name = spec["name"]
            report = reports.get(name)
            if name not in self.replaced or report is None:
                continue
            base = Path(spec["progress"])
            for i, pub in enumerate(report.get("publishers", [])):
                for warm, sent, _ in _killed_progress(base, f"p{i}"):
                    pub["sent"] += sent
                    pub["warmup_sent"] += warm
            for j, sub in enumerate(report.get("subscriptions", [])):
                if sub.get("stage") is not None:
                    for warm, sent, _ in _killed_progress(base, f"s{j}"):
                        sub["stage"]["sent"] += sent
                        sub["stage"]["warmup_sent"] += warm
                for edge in sub.get("edges", []):
                    path = edge["measurement"].get("samples_file")
                    if not path:
                        continue
                    killed = _killed_samples(Path(path))
                    if not killed:
                        continue
                    survivor = read_samples(Path(path))
                    rows, across = merge_sub_samples([read_samples(k) for k in killed]
                                                     + [survivor])
                    accounting = edge["measurement"]["accounting"]
                    edge["measurement"]["accounting"] = survivor_accounting(
                        accounting, {r[0] for r in survivor}, {r[0] for r in rows}, across)
                    write_merged_samples(Path(path), rows, [*killed, Path(path)])
                    for k in killed:
                        k.unlink()
                    said.append(f"node '{name}' '{sub['topic']}': the latency figures are the "
                                f"restarted process's {len(survivor)} arrivals of {len(rows)} "
                                "(the killed one's distribution died with it); received and "
                                "lost count both processes' samples")
        return said

    def section(self, result: dict[str, Any], specs: list[dict[str, Any]],
                reports: dict[str, dict[str, Any] | None], samples: Path) -> None:
        """The result's ``restarts``: each restart per edge into or out of its node and per
        chain through them."""
        by_name = {s["name"]: s for s in specs}
        entries = []
        done = {(e["target"], e["at_ns"]) for e in self.events}
        events = sorted(self.events, key=lambda e: e["at_ns"]) + [
            {"target": t, "at_ns": at, "notes": ["not restarted: the measured phase ended (or "
                                                 "never began) before"]}
            for t, at in self.restarts if (t, at) not in done]
        for event in events:
            target = event["target"]
            # which restart of its node this is (the node's progress files count them)
            index = sum(1 for e in events if e["target"] == target
                        and e.get("killed_ns") is not None and event.get("killed_ns") is not None
                        and e["killed_ns"] < event["killed_ns"])
            killed = event.get("killed_ns")
            edges = []
            for edge in result["edges"]:
                # a daemon (a broker, a router) carries every edge; a node its own
                if killed is None or (not is_daemon(target)
                                      and target not in (edge["from"], edge["to"])):
                    continue
                edges.append(self._edge(edge, event, index, by_name, reports, samples))
            chains = []
            for chain in result["chains"]:
                if killed is None or not any(e["topic"] in chain["topics"] for e in edges):
                    continue
                chains.append(_chain(chain, result["edges"], killed, samples))
            entries.append({"target": target, "at_ns": event["at_ns"], "killed_ns": killed,
                            "started_ns": event.get("started_ns"),
                            "ready_ns": event.get("ready_ns"), "edges": edges,
                            "chains": chains, "notes": event["notes"]})
        result["restarts"] = entries

    def _edge(self, edge: dict[str, Any], event: dict[str, Any], index: int,
              by_name: dict[str, dict[str, Any]], reports: dict[str, dict[str, Any] | None],
              samples: Path) -> dict[str, Any]:
        """One edge's figures for one restart of a node at one of its ends."""
        killed = event["killed_ns"]
        target = event["target"]
        rows = read_samples(samples / Path(edge["samples_file"]).name
                            if edge.get("samples_file") else None)
        later = [e["killed_ns"] for e in self.events if e["target"] == target
                 and e.get("killed_ns") is not None and e["killed_ns"] > killed]
        until = min(later) if later else None
        if edge["to"] == target:  # the restarted subscriber's own first arrival
            started = event.get("started_ns") or killed
            own = [r for r in rows if r[2] >= started and (until is None or r[2] < until)]
        else:  # the first arrival of a message sent at or after the kill
            own = [r for r in rows if r[1] >= killed and (until is None or r[1] < until)]
        first = min(own, key=lambda r: r[2]) if own else None
        never: range = range(0)
        if edge["from"] == target:
            never = _never_sent(by_name[target], reports.get(target), edge["topic"], index)
        received = {seq for seq, _, _ in rows}
        after = max((seq for seq, _, recv in rows if recv < killed), default=-1) + 1
        end = first[0] if first is not None else max(
            (edge.get("sent") or 0) + len(never), max(received, default=-1) + 1)
        gap = [seq for seq in range(after, end) if seq not in never]
        return {"topic": edge["topic"], "from": edge["from"], "to": edge["to"],
                "first_message_after_ns": first[2] if first else None,
                "rediscovery_ns": first[2] - killed if first else None,
                "sent_in_gap": len(gap), "never_sent": len(range(max(after, never.start),
                                                                 min(end, never.stop))),
                "lost": sum(1 for seq in gap if seq not in received),
                "recovered": first is not None}


def _killed_progress(base: Path, outlet: str) -> list[tuple[int, int, int]]:
    """(warm-up sent, measured sent, first measured number) of each killed process of a node's
    outlet, in the order they were killed."""
    found = []
    for path in sorted(base.parent.glob(f"{base.name}.{outlet}.killed-*"),
                       key=lambda p: int(p.name.rsplit("-", 1)[1])):
        with contextlib.suppress(OSError, struct.error):
            found.append(struct.unpack("<QQQ", path.read_bytes()[:24]))
    return found


def _killed_samples(path: Path) -> list[Path]:
    """An edge's samples files that killed processes wrote, in the order they were killed."""
    return sorted(path.parent.glob(f"{path.stem}.killed-*{path.suffix}"),
                  key=lambda p: int(p.stem.rsplit("-", 1)[1]))


def _never_sent(spec: dict[str, Any], report: dict[str, Any] | None, topic: str, index: int
                ) -> range:
    """The numbers of ``topic``'s messages that no process of the node sent around restart
    ``index`` of it: after the killed process's last, before the restarted one's first."""
    i = next((k for k, p in enumerate(spec.get("publishers", [])) if p["topic"] == topic), None)
    if i is None:
        return range(0)
    killed = _killed_progress(Path(spec["progress"]), f"p{i}")
    if index >= len(killed):
        return range(0)
    _, sent, first = killed[index]
    if index + 1 < len(killed):
        resumed = killed[index + 1][2]
    else:
        pubs = (report or {}).get("publishers", [])
        resumed = pubs[i].get("resumed_at_seq") if i < len(pubs) else None
    if resumed is None:
        return range(0)
    return range(first + sent, resumed)


def _chain(chain: dict[str, Any], edges: list[dict[str, Any]], killed: int,
           samples: Path) -> dict[str, Any]:
    """When every hop of ``chain`` had carried a message sent at or after ``killed``."""
    firsts = []
    for topic in chain["topics"]:
        on = [e for e in edges if e["topic"] == topic and e.get("samples_file")]
        arrivals = [r[2] for e in on
                    for r in read_samples(samples / Path(e["samples_file"]).name)
                    if r[1] >= killed]
        firsts.append(min(arrivals) if arrivals else None)
    first = None if not firsts or None in firsts else max(firsts)  # type: ignore[type-var]
    return {"name": chain["name"], "first_message_after_ns": first,
            "rediscovery_ns": None if first is None else first - killed}
