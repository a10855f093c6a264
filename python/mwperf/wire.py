"""Bytes and packets on the wire per phase (``--wire-bytes``), counted where the packets pass.

With ``--wire-bytes`` every emulated wire is mwperf's userspace emulator (mwperf-linkem) run
with ``--packet-log``: each packet it forwarded, with its release time (ns since the link's
epoch, CLOCK_MONOTONIC) and its IP length (IP header included, no Ethernet framing: the
emulator's devices are TUN devices carrying IP packets). The sender's report gives its phase
boundaries on the same clock (``phases``), so each packet falls in exactly one phase:

- ``setup``: the link up → the first message sent (daemons, discovery, connections, the
  first-contact probes);
- ``warmup``: → the first measured message's scheduled time;
- ``steady``: → the sender's last measured message answered or given up on (``drained_ns``);
- ``idle``: → the end of ``--idle`` (endpoints open, nothing sent: keep-alives, heartbeats,
  discovery announcements), reported per second;
- ``teardown``: → the link stopped (closing, the agents' and daemons' goodbyes).

Per message = the steady phase's bytes (packets) / the measured messages sent, each way;
overhead = that / the message the agent hands the transport (payload + mwperf's 56-byte
header). Ground truth (tests/test_wire_bytes_e2e.py): a UDP message is one packet of
payload + 56 + 28 bytes (IPv4 20 + UDP 8) each way, to the byte.
"""
from __future__ import annotations

import struct
from pathlib import Path
from collections.abc import Mapping
from typing import Any

from .result_types import RunResultWire

HEADER_BYTES = 56
"""mwperf's message header (crates/mwperf-core: sequence, timestamps, flags): the agent's
``header_bytes`` (``mwperf-agent options --json``; tests/test_agent_options.py holds this to
it), stated here too because saved results are read and reported without an agent"""
RECORD = struct.Struct("<QI")
"""one packet-log record (crates/mwperf-linkem/src/packetlog.rs)"""
PHASES = ("setup", "warmup", "steady", "idle", "teardown")
METHOD = ("mwperf-linkem packet log: IP packets forwarded per direction (IP and transport "
          "headers included, no Ethernet framing), by the sender's phase boundaries")


def read_log(path: Path) -> list[tuple[int, int]]:
    """(ns since the link's epoch, IP bytes) per packet."""
    data = path.read_bytes()
    usable = len(data) - len(data) % RECORD.size
    return list(RECORD.iter_unpack(data[:usable]))


def boundaries(phases: dict[str, Any], stopped_ns: int) -> list[tuple[str, int, int]]:
    """Each phase as (name, start, end) on CLOCK_MONOTONIC; a phase the sender never reached
    is left out (e.g. no warm-up: first send = measure start gives an empty warm-up)."""
    first = phases.get("first_send_ns") or phases["setup_done_ns"]
    measure = phases.get("measure_start_ns") or first
    drained = phases.get("drained_ns") or phases.get("last_send_ns") or measure
    idle_end = phases.get("idle_end_ns") or drained
    marks = [("setup", 0, first), ("warmup", first, max(first, measure)),
             ("steady", max(first, measure), drained), ("idle", drained, idle_end),
             ("teardown", idle_end, max(idle_end, stopped_ns))]
    return [(name, start, end) for name, start, end in marks if end >= start]


def split(packets: list[tuple[int, int]], epoch_ns: int,
          marks: list[tuple[str, int, int]]) -> dict[str, dict[str, Any]]:
    """Bytes and packets per phase; a packet belongs to the phase its release time falls in
    ([start, end); before the first boundary: setup, after the last: teardown)."""
    out = {name: {"bytes": 0, "packets": 0, "seconds": round(max(0, end - start) / 1e9, 6)}
           for name, start, end in marks}
    out["setup"]["seconds"] = None  # from the link's start: not a session's length
    out["teardown"]["seconds"] = None
    edges = [(start, name) for name, start, _ in marks[1:]]
    for at, size in packets:
        t = epoch_ns + at
        phase = marks[0][0]
        for start, name in edges:
            if t >= start:
                phase = name
            else:
                break
        out[phase]["bytes"] += size
        out[phase]["packets"] += 1
    return out


def not_applicable(transport: str) -> RunResultWire:
    """The ``wire`` section of a transport that stays on one machine."""
    return {"method": METHOD, "status": f"{transport} stays on one machine: nothing crosses "
                                        f"a wire to count", "links": []}


def section(reports: list[dict[str, Any] | None], wires: list[dict[str, str]],
            phases: Mapping[str, Any] | None, messages: int | None, payload_bytes: int
            ) -> RunResultWire:
    """The run-result's ``wire`` section from the emulators' reports (one per wire, with
    ``wires``' from/to hosts) and the sender's phases; ``messages``: measured messages sent."""
    if phases is None:
        return {"method": METHOD, "status": "no phases: the sender did not finish its setup",
                "links": []}
    message_bytes = payload_bytes + HEADER_BYTES
    links = []
    for wire, report in zip(wires, reports):
        logs = (report or {}).get("packet_log") or {}
        if not logs:
            links.append({**wire, "status": "the emulator wrote no packet log"})
            continue
        epoch = report["epoch_ns"]
        stopped = epoch + report["elapsed_ns"]
        marks = boundaries(phases, stopped)
        entry: dict[str, Any] = {**wire, "truncated": sum(logs[w]["truncated"] for w in logs)}
        for way in ("up", "down"):
            counts = split(read_log(Path(logs[way]["path"])), epoch, marks)
            entry[way] = {"phases": counts, **per_message(counts, messages, message_bytes)}
        links.append(entry)
    return {"method": METHOD, "message_bytes": message_bytes, "messages": messages,
            "links": links, **headline(links)}


def graph_section(reports: list[dict[str, Any] | None], wires: list[dict[str, str]],
                  phases: Mapping[str, Any] | None, edges: list[dict[str, Any]],
                  node_hosts: Mapping[str, str]) -> RunResultWire:
    """A graph run's ``wire``: phases from its schedule; per message over the edges whose two
    nodes are on different hosts (their publishers' measured messages sent, each crossing once
    per subscriber), when those all carry one size."""
    across = [e for e in edges if node_hosts.get(e["from"]) != node_hosts.get(e["to"])]
    sizes = {e["payload_bytes"] for e in across}
    messages = sum(e["sent"] for e in across) if len(sizes) == 1 else None
    out = section(reports, wires, phases, messages, sizes.pop() if len(sizes) == 1 else 0)
    if not across:
        out["status"] = ("no edge crosses a wire: every publisher and its subscribers are on "
                         "one host (give nodes host: b to put them across the link)")
    elif messages is None:
        out["status"] = ("the edges across hosts carry several sizes: bytes per phase only, "
                         "no per-message figure")
        out.pop("message_bytes", None)
    return out


def per_message(counts: dict[str, dict[str, Any]], messages: int | None,
                message_bytes: int) -> dict[str, Any]:
    steady, idle = counts.get("steady"), counts.get("idle")
    out: dict[str, Any] = {"bytes_per_message": None, "packets_per_message": None,
                           "overhead": None, "setup_bytes": counts["setup"]["bytes"],
                           "idle_bytes_per_s": None}
    if steady is not None and messages:
        out["bytes_per_message"] = round(steady["bytes"] / messages, 3)
        out["packets_per_message"] = round(steady["packets"] / messages, 4)
        out["overhead"] = round(steady["bytes"] / messages / message_bytes, 4)
    if idle is not None and idle["seconds"]:
        out["idle_bytes_per_s"] = round(idle["bytes"] / idle["seconds"], 1)
    return out


def headline(links: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of the first wire (with --link alone: the one wire between the agents):
    per message each way, setup bytes and idle bytes/s both ways."""
    first = next((link for link in links if "up" in link), None)
    if first is None:
        return {}
    up, down = first["up"], first["down"]
    idle = [d["idle_bytes_per_s"] for d in (up, down) if d["idle_bytes_per_s"] is not None]
    return {"up_bytes_per_message": up["bytes_per_message"],
            "down_bytes_per_message": down["bytes_per_message"],
            "setup_bytes": up["setup_bytes"] + down["setup_bytes"],
            "idle_bytes_per_s": round(sum(idle), 1) if idle else None}
