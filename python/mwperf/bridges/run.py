"""A bridge inside one point (runner.py calls these): start its halves, give each side its
address and settings, notice a half that died, and write the result's ``bridge`` section."""

import contextlib
import subprocess
import time
from dataclasses import replace
from pathlib import Path
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..merge import make_warning
from .base import HALVES, BridgePlan, BridgeSetup
from .rate import achieved, short_warning
from .registry import DIRECT, bridge
from ..result_types import Daemon, RunResultBridge, Warning

if TYPE_CHECKING:
    from ..agent import Agent
    from ..daemons import DaemonSet
    from ..emulation.network import Network

from ..point import Point

P = TypeVar("P", bound=Point)
LOOPBACK = "127.0.0.1"


def ensure_bridge(cfg: "Point", agent: "Agent") -> None:
    """Before anything starts: the bridge's program is there (or is built now), else RunError
    naming the bridge and the command that builds it."""
    if cfg.bridge not in (None, DIRECT):
        bridge(cfg.bridge).ensure(agent)


def start_bridge(cfg: "Point", workdir: Path, agent: "Agent", daemons: "DaemonSet",
                 network: "Network | None", tag: int) -> BridgePlan | None:
    """Start the point's bridge (None for no bridge or ``direct``)."""
    if cfg.bridge in (None, DIRECT):
        return None
    found = bridge(cfg.bridge)

    def where(name: str) -> tuple[str, Path | None]:
        if network is None:
            return LOOPBACK, None
        return network.address_of(name), network.netns_of(name)

    def facing(name: str, peer: str) -> str | None:
        if network is None:
            return None
        if network.tunnel is not None:  # --secure wireguard: the halves meet inside it
            return network.address_of(name)
        here, there = network.topology.host_of(name), network.topology.host_of(peer)
        for wire in network.addressing.wires:
            ends = {wire.near.node: wire.near, wire.far.node: wire.far}
            if here != there and set(ends) == {here, there}:
                return ends[here].address
        return network.address_of(name)

    started = time.monotonic()
    plan = found.prepare(BridgeSetup(cfg, workdir, agent, daemons, where, tag, facing))
    plan.facts["start_s"] = round(time.monotonic() - started, 3)  # both halves, health-checked
    return plan


def sides(cfg: P, plan: BridgePlan | None) -> tuple[P, P]:
    """(the server's point, the sender's point): each side's transport and own settings. A side
    whose transport is not the point's gets only the bridge's settings for it (the point's
    ``--opt`` are the point's transport's)."""
    if plan is None:
        return cfg, cfg

    def side(transport: str | None, opts: tuple[str, ...]) -> P:
        own = transport in (None, cfg.transport)
        return replace(cfg, transport=transport or cfg.transport,
                       opts=(cfg.opts if own else ()) + opts)

    return side(plan.server_transport, plan.server_opts), side(plan.sender_transport,
                                                               plan.sender_opts)


def bridge_died(daemons: "DaemonSet", settle_s: float = 0.0) -> str | None:
    """Why the point is partial when a bridge half exited during the measurement. ``settle_s``:
    how long a half still running may take to finish exiting (the sender failed: a half killed
    closes its sockets before the kernel reports it gone, and the sender, failing on that
    close, can finish first: stress run, 1 of 3; nothing here signals a half, so an exit in
    that time is its own)."""
    for d in daemons.daemons:
        if d.name in HALVES and d.died is None and settle_s > 0:
            with contextlib.suppress(subprocess.TimeoutExpired):
                d.died = d.popen.wait(settle_s)
    dead = [d for d in daemons.daemons if d.name in HALVES and d.died is not None]
    if not dead:
        return None
    return "; ".join(f"{d.name} exited during the run (exit code {d.died}): {d.log_tail()}"
                     for d in dead)


def section(cfg: "Point", plan: BridgePlan | None, daemons: "Sequence[Daemon]",
            result: Mapping[str, Any]) -> "RunResultBridge":
    """The result's ``bridge``: which bridge, the path, each half's daemon entry (CPU, RSS,
    version), and achieved vs offered rate (one way to N subscribers: each message offered to
    each of them, as their pooled count receives it)."""
    name = cfg.bridge or DIRECT
    path = (f"{cfg.transport} end to end, no bridge" if name == DIRECT
            else bridge(name).path(cfg.transport))
    halves = [d for d in daemons if d["name"] in HALVES]
    return {"name": name, "path": path, "halves": halves,
            **achieved(cfg.rate, cfg.topics * cfg.subscribers, result.get("measurement"),
                       cfg.measure_ns / 1e9 if cfg.measure_ns else None, cfg.count),
            **(plan.facts if plan is not None else {})}


def rate_warnings(bridge_section: Mapping[str, Any]) -> list[Warning]:
    found = short_warning(bridge_section["name"], bridge_section)
    return [] if found is None else [make_warning(*found)]


def crossing_section(graph: Any, edges: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A bridged graph's: the edges that cross the bridge (graph/bridge_sides.py) with their
    offered and achieved rates, and the rates summed over them (what a stream's section says
    of its one path); the offered rate unknown when one of them saturates."""
    from ..graph.bridge_sides import crossing
    across = set(crossing(graph))
    found = [e for e in edges if (e["topic"], e["from"], e["to"]) in across]
    offered = [e.get("offered_per_s") for e in found]
    achieved_sum = sum(e.get("achieved_per_s") or 0.0 for e in found)
    total = sum(o for o in offered if o) if found and all(offered) else None
    return {"crossing": [{"topic": e["topic"], "from": e["from"], "to": e["to"],
                          "offered_per_s": e.get("offered_per_s"),
                          "achieved_per_s": e.get("achieved_per_s")} for e in found],
            "offered_msgs_per_s": round(total, 3) if total else None,
            "achieved_msgs_per_s": round(achieved_sum, 3) if found else None,
            "delivered_ratio": round(achieved_sum / total, 4) if total else None}


def hops(link: Mapping[str, Any], messages: int) -> list[dict[str, Any]]:
    """Bytes on the wire on each hop (the userspace emulator's counters of every link: IP
    packets forwarded each way over the whole point, discovery and warm-up included), and per
    message sent (``messages``, warm-up included where known). Empty with netem (no
    counters)."""
    out = []
    for item in link.get("links") or []:
        for wire in item.get("emulator") or []:
            report = wire.get("report") or {}
            if "up" not in report:
                continue
            entry = {"link": item["name"], "from": wire["from"], "to": wire["to"]}
            for way in ("up", "down"):
                sent = report[way].get("forwarded_bytes")
                entry[f"{way}_bytes"] = sent
                entry[f"{way}_packets"] = report[way].get("forwarded")
                entry[f"{way}_bytes_per_message"] = (round(sent / messages, 1)
                                                     if sent is not None and messages else None)
            out.append(entry)
    return out
