"""The restart part (``--restart TARGET@T``, restarts.py): the ping and pong run with
``--reopen`` and the ping keeps its raw samples; once the sender says its measured phase began,
a thread kills each target at its time and starts it again with the same arguments and address;
the result gets its ``restarts`` section."""

import contextlib
import os
import re
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import MwperfError
from ..merge import make_warning
from ..restarts import (DAEMON_ALIASES, PEER_TIMEOUT_NS, READY_TIMEOUT_S, agent_lines, analyse,
                        check, read_samples)
from ..topicnames import SAMPLES_NAME
from .base import P, Part

if TYPE_CHECKING:
    from ..daemons import DaemonProcess
    from ..point import Point
    from ..procs import AgentProcess
    from ..result_types import RunResult
    from .state import PointState

_READY = re.compile(r"^READY (\S+) (\S+)")
_POLL_S = 0.005
_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mwperf-respawn")
"""restarted processes are started from this one long-lived thread: the kernel's parent-death
signal (procs.py) follows the thread that started a child, and must not fire when a point's
scheduling thread ends"""


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
        return ["--reopen"] if role in ("ping", "pong") else []

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
        entries = analyse(sorted(events, key=lambda e: e["at_ns"]),
                          read_samples(run.workdir / SAMPLES_NAME), ping.get("sent"),
                          accounting.get("duplicated"), reopened)
        result["restarts"] = entries + pending  # type: ignore[typeddict-unknown-key]
        for entry in entries + pending:
            if entry.get("recovered", "no") == "no":
                result["warnings"].append(make_warning(
                    "restart-not-recovered",
                    f"--restart {entry['target']}: nothing sent after the restart came back "
                    f"within the run ({'; '.join(entry['notes']) or 'no arrivals'})",
                    "run longer after the restart, or see the daemons/ and agents' logs"))


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
            if target in ("pong",):
                _SPAWNER.submit(_restart_agent, run, target, count, event).result()
            else:
                _SPAWNER.submit(_restart_daemon, run, DAEMON_ALIASES.get(target, target),
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
    event["killed_ns"] = time.monotonic_ns()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(old.popen.pid, signal.SIGKILL)
    old.popen.wait()
    kept = run.found.setdefault("restart_stdout", {})
    for suffix in ("stdout", "stderr"):
        path = run.workdir / f"{old.name}.{suffix}"
        with contextlib.suppress(OSError):
            path.rename(run.workdir / f"{old.name}.killed-{count}.{suffix}")
    kept[f"{old.name}.killed-{count}"] = run.workdir / f"{old.name}.killed-{count}.stdout"
    assert run.agents is not None
    event["started_ns"] = time.monotonic_ns()
    new = run.agents.respawn(old, argv)
    run.servers[run.servers.index(old)] = new
    transport = ready.group(1) if ready is not None else run.cfg.transport
    new.wait_ready(transport, READY_TIMEOUT_S)
    event["ready_ns"] = time.monotonic_ns()


def _restart_daemon(run: "PointState", name: str, count: int, event: dict[str, Any]) -> None:
    """Kill daemon ``name`` and start it again on the same address."""
    old: "DaemonProcess | None" = next((d for d in run.daemons.daemons if d.name == name), None)
    if old is None:
        event["notes"].append(f"no daemon {name} ran in this point")
        return
    spec = old.spec
    if name == "zenoh-router" and old.address:  # it had chosen its port: keep it
        spec = replace(spec, argv=[old.address if a.endswith(":0") else a for a in spec.argv])
    event["killed_ns"] = time.monotonic_ns()
    old.kill_now()
    event["started_ns"] = time.monotonic_ns()
    run.daemons.respawn(old, spec, f"{old.name}.restart-{count}", READY_TIMEOUT_S)
    event["ready_ns"] = time.monotonic_ns()
