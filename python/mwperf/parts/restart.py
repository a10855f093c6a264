"""The restart part (``--restart TARGET@T``, restarts.py): the agents run with ``--reopen``
and the measuring one keeps its raw samples; once the sender says its measured phase began, a
thread kills each target at its time and starts it again with the same arguments and address
(a sub: its killed predecessor's samples kept as ``samples.killed-N.csv``); the result gets its
``restarts`` section (a restarted sub: the measurement's accounting merged over both subs)."""

import contextlib
import os
import re
import signal
import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import MwperfError
from ..merge import make_warning
from ..restarts import (DAEMON_ALIASES, PEER_TIMEOUT_NS, READY_TIMEOUT_S, agent_lines, analyse,
                        analyse_topics,
                        check, merge_sub_samples, read_samples, survivor_accounting,
                        write_merged_samples)
from ..procs import RESPAWNER
from ..topicnames import SAMPLES_NAME, samples_files
from .base import P, Part

if TYPE_CHECKING:
    from ..daemons import DaemonProcess
    from ..point import Point
    from ..procs import AgentProcess
    from ..result_types import RunResult
    from .state import PointState

_READY = re.compile(r"^READY (\S+) (\S+)")
_POLL_S = 0.005


class Restarts(Part):
    name = "restarts"

    def wanted(self, cfg: "Point") -> bool:
        return bool(getattr(cfg, "restarts", ()))

    def validate(self, cfg: P, options: dict[str, Any]) -> P:
        check(cfg)
        return replace(cfg, samples=True)  # type: ignore[type-var]

    def given(self, run: "PointState", cfg: P) -> P:
        return replace(cfg, peer_timeout_ns=max(cfg.peer_timeout_ns, PEER_TIMEOUT_NS))

    def args(self, run: "PointState", role: str) -> list[str]:
        return ["--reopen"] if role in ("ping", "pong", "pub", "sub") else []

    def sender_started(self, run: "PointState") -> None:
        stop = threading.Event()
        events: list[dict[str, Any]] = []
        thread = threading.Thread(target=_schedule, args=(run, stop, events),
                                  name="mwperf-restarts", daemon=True)
        run.found["restarts"] = (thread, stop, events)
        thread.start()

    def sender_done(self, run: "PointState") -> None:
        _join(run)

    def interrupted(self, run: "PointState") -> None:
        _join(run)

    def section(self, run: "PointState", result: "RunResult") -> None:
        _, _, events = run.found.get("restarts", (None, None, []))
        pending = [{"target": t, "at_ns": at, "notes": ["not restarted: the measured phase "
                                                         "ended (or never began) before"]}
                   for t, at in run.cfg.restarts
                   if not any(e["target"] == t and e["at_ns"] == at for e in events)]
        ping = run.sender_report() or {}
        accounting = (ping.get("measurement") or {}).get("accounting") or {}
        reopened = {name: agent_lines(_read(path))["REOPENED"]
                    for name, path in run.found.get("restart_stdout", {}).items()}
        for agent in run.agents.agents if run.agents is not None else []:
            reopened.setdefault(agent.name, [])
            reopened[agent.name] += agent_lines(_read(agent.stdout_path))["REOPENED"]
        events = sorted(events, key=lambda e: e["at_ns"])
        if run.cfg.mode == "oneway" and any(e["target"] == "sub" for e in events):
            entries = _sub_restarts(run, result, events, ping.get("sent"), reopened)
        elif run.cfg.topics > 1:  # a round trip of several topics: each on its own samples
            per_topic = ping.get("per_topic") or []
            topics = [(t.get("name") or f"topic {i}", read_samples(run.workdir / name),
                       t["accounting"].get("sent") if i < len(per_topic) else None,
                       t["accounting"].get("duplicated") if i < len(per_topic) else None)
                      for i, (name, t) in enumerate(zip(samples_files(run.cfg), per_topic))]
            entries = analyse_topics(events, topics, reopened)
        else:  # the measuring side's samples and duplicates (one way: the one sub's)
            if run.cfg.mode == "oneway":
                accounting = (result.get("measurement") or {}).get("accounting") or {}
            entries = analyse(events, read_samples(run.workdir / SAMPLES_NAME), ping.get("sent"),
                              accounting.get("duplicated"), reopened)
        result["restarts"] = entries + pending  # type: ignore[typeddict-unknown-key]
        for entry in entries + pending:
            if entry.get("recovered", "no") == "no":
                result["warnings"].append(make_warning(
                    "restart-not-recovered",
                    f"--restart {entry['target']}: nothing sent after the restart came back "
                    f"within the run ({'; '.join(entry['notes']) or 'no arrivals'})",
                    "run longer after the restart, or see the daemons/ and agents' logs"))


def _sub_restarts(run: "PointState", result: "RunResult", events: list[dict[str, Any]],
                  sent: int | None, reopened: dict[str, list[int]]) -> list[dict[str, Any]]:
    """A one-way point's sub restarts: every incarnation's samples merged into samples.csv and
    into the measurement's accounting; each restart analysed against the merged rows, its first
    message after = the restarted sub's first arrival."""
    killed = sorted(run.workdir.glob("samples.killed-*.csv"),
                    key=lambda p: int(p.name.split("-")[1].split(".")[0]))
    incarnations = [read_samples(path) for path in killed]
    survivor = read_samples(run.workdir / SAMPLES_NAME)
    incarnations.append(survivor)
    rows, across = merge_sub_samples(incarnations)
    measurement = result.get("measurement")
    accounting = measurement["accounting"] if measurement else None
    survivor_dups = accounting["duplicated"] if accounting else None
    entries = analyse(events, rows, sent, None if survivor_dups is None else
                      survivor_dups + across, reopened, restarted=incarnations[1:])
    what = ("the killed sub's duplicates, reordering, corruption and warm-up arrivals died with "
            "it: duplicates = the restarted sub's own + messages both subs received "
            f"({across}); accounting.received/lost merged over both subs' samples "
            "(samples.csv holds both); latency, jitter, series, late and throughput are the "
            "restarted sub's alone")
    for entry in entries:
        entry["notes"].append(what)
    if measurement is not None and accounting is not None and killed:
        measurement["accounting"] = survivor_accounting(
            accounting, {r[0] for r in survivor}, {r[0] for r in rows}, across)
        write_merged_samples(run.workdir / SAMPLES_NAME, rows,
                             killed + [run.workdir / SAMPLES_NAME])
        result["warnings"].append(make_warning(
            "restart-survivor-only",
            f"--restart sub: the latency figures, series and throughput cover only the "
            f"restarted sub's {len(survivor)} arrivals of {len(rows)} (the killed sub's "
            f"distribution died with it); received/lost are counted over both subs' samples",
            "see restarts[].notes; samples.csv has every arrival of both subs"))
    elif measurement is None and rows:
        entries[0]["notes"].append("no measurement: the restarted sub wrote no report")
    return entries


def _join(run: "PointState") -> None:
    found = run.found.get("restarts")
    if found is not None:
        thread, stop, _ = found
        stop.set()
        thread.join()


def _read(path: Any) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _schedule(run: "PointState", stop: threading.Event, events: list[dict[str, Any]]) -> None:
    """Wait for the sender's MEASURING line, then restart each target at its time."""
    sender = run.sender
    start_ns = None
    while start_ns is None and not stop.is_set() and sender.exit_code is None:
        found = agent_lines(_read(sender.stdout_path))["MEASURING"]
        start_ns = found[0] if found else None
        if start_ns is None:
            stop.wait(_POLL_S)
    if start_ns is None:
        return
    for count, (target, at_ns) in enumerate(sorted(run.cfg.restarts, key=lambda r: r[1]), 1):
        due = start_ns + at_ns
        while (now := time.monotonic_ns()) < due:
            if stop.wait((due - now) / 1e9):
                return
        if sender.exit_code is not None:
            return
        event: dict[str, Any] = {"target": target, "at_ns": at_ns, "measure_start_ns": start_ns,
                                 "notes": []}
        try:
            if target in ("pong", "sub"):
                RESPAWNER.submit(_restart_agent, run, target, count, event).result()
            else:
                RESPAWNER.submit(restart_daemon, run, DAEMON_ALIASES.get(target, target),
                                count, event).result()
        except (MwperfError, OSError) as exc:
            event["notes"].append(f"the restart failed: {exc}")
        events.append(event)


def _restart_agent(run: "PointState", name: str, count: int, event: dict[str, Any]) -> None:
    """Kill agent ``name`` and start it again with its arguments and its READY address."""
    old: "AgentProcess" = next(s for s in run.servers if s.name == name)
    ready = _READY.match(_read(old.stdout_path))
    argv = list(old.popen.args)
    if ready is not None and "--listen" in argv:
        argv[argv.index("--listen") + 1] = ready.group(2)  # the same address and port
    with contextlib.suppress(ProcessLookupError):
        os.killpg(old.popen.pid, signal.SIGKILL)
    # stamped once the signal is sent: a thread switch between a stamp and the kill would
    # otherwise count the killed process's last moments as after the kill
    event["killed_ns"] = time.monotonic_ns()
    old.popen.wait()
    kept = run.found.setdefault("restart_stdout", {})
    for suffix in ("stdout", "stderr"):
        path = run.workdir / f"{old.name}.{suffix}"
        with contextlib.suppress(OSError):
            path.rename(run.workdir / f"{old.name}.killed-{count}.{suffix}")
    kept[f"{old.name}.killed-{count}"] = run.workdir / f"{old.name}.killed-{count}.stdout"
    if name == "sub":  # what it recorded is on disk (--reopen): the restarted sub starts afresh
        with contextlib.suppress(OSError):
            (run.workdir / SAMPLES_NAME).rename(run.workdir / f"samples.killed-{count}.csv")
    assert run.agents is not None
    event["started_ns"] = time.monotonic_ns()
    new = run.agents.respawn(old, argv)
    run.servers[run.servers.index(old)] = new
    transport = ready.group(1) if ready is not None else run.cfg.transport
    new.wait_ready(transport, READY_TIMEOUT_S)
    event["ready_ns"] = time.monotonic_ns()


def restart_daemon(run: "PointState", name: str, count: int, event: dict[str, Any]) -> None:
    """Kill daemon ``name`` and start it again on the same address (a stream point's or a
    graph run's: graph/restarts.py)."""
    old: "DaemonProcess | None" = next((d for d in run.daemons.daemons if d.name == name), None)
    if old is None:
        event["notes"].append(f"no daemon {name} ran in this point")
        return
    spec = old.spec
    if name == "zenoh-router" and old.address:  # it had chosen its port: keep it
        spec = replace(spec, argv=[old.address if a.endswith(":0") else a for a in spec.argv])
    event["killed_ns"] = old.kill_now()
    event["started_ns"] = time.monotonic_ns()
    run.daemons.respawn(old, spec, f"{old.name}.restart-{count}", READY_TIMEOUT_S)
    event["ready_ns"] = time.monotonic_ns()
