"""Restarts (``--restart TARGET@T``): which processes of a point may be restarted, and what each
restart cost, worked out from the run's own records.

A restart kills the target (SIGKILL, its whole process group) at T after the sender's measured
phase began (the sender prints ``MEASURING <ns>``, the intended time of its first measured
message, with ``--reopen``) and starts it again at once with the same arguments, on the same
address and port (a pong: the one its READY line printed; the zenoh router: the port it had
chosen). The targets: a round trip's ``pong`` (the ping measures and stays), and the daemons
the point starts (``mosquitto``, ``zenohd`` = the zenoh router of ``--opt mode=client``,
``rosmaster``, ROS 1's ``relay``, ``foxglove-server``, and a bridge's ``bridge-a``/``bridge-b``);
a one-way point's ``sub`` and daemons (one topic, one subscriber: the sub opens its endpoint
again when a restarted broker, router or server closed it). The ping is refused: its own counts
would die with it. A sub is measured all the same because it writes every arrival out as it
records it (``--reopen``: one write per message), so the killed sub's arrivals survive it on disk
(``samples.killed-N.csv``); the restarted sub writes ``samples.csv`` afresh, and the pub, run
with ``--reopen``, keeps to its schedule throughout and counts every message it sent. The point's
measurement is then merged (``merge_sub_samples``): ``accounting.received``/``lost`` over both
subs' samples against the pub's count, ``duplicated`` = the survivor's + messages both subs
got; what only the killed sub knew (its duplicates, reordering, corruption, warm-up arrivals and
latency distribution) died with it, so the latency figures, series and throughput are the
restarted sub's alone: said in the restart's notes and warning ``restart-survivor-only``.

Per restart (the result's ``restarts``), from the ping's raw samples (``--samples`` is implied:
one row per measured message that came back, with the ping's send and receive times):

- ``first_message_after_ns``: the earliest arrival of a message sent at or after the kill;
  ``rediscovery_ns`` = that - the kill (the restarted process's own start-up included; its
  ``ready_ns`` is given too);
- ``lost``: the sequence numbers between the last one that arrived before the kill and the first
  after recovery that never arrived (the ping's sequence numbers are consecutive: every one was
  sent); ``sent_in_gap`` is how many were sent in between;
- ``recovered``: ``session`` when messages flowed again while the surviving agents kept their
  endpoints, ``rebuilt`` when a survivor had to open its endpoint again (it prints ``REOPENED
  <ns>``: a closed TCP connection, a broker gone), ``no`` when nothing sent after the kill came
  back before the run ended;
- ``duplicates``: the ping's duplicate count over the whole run (0 in a run without a restart).
"""

import csv
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .durations import format_ns, parse_duration
from .errors import UsageError
from .result_types import Accounting

PEER_TIMEOUT_NS = 5_000_000_000
"""a ping with a restart waits this long for a silent peer before it gives up (at least)"""
READY_TIMEOUT_S = 20.0
"""how long a restarted process gets to be ready again (its READY line, its readiness check)"""
DAEMON_ALIASES = {"zenohd": "zenoh-router"}
"""the names users know a daemon by -> its name among the point's daemons"""
MEASURING = {"ping": "it measures the round trips", "pub": "it sends the stream",
             "sub": "only a one-way point's sub is restarted, with one topic and one "
                    "subscriber (--topics 1 --subscribers 1)",
             "client": "it measures the calls", "server": "services are not restarted (yet)"}
_LINE = re.compile(r"^(MEASURING|REOPENED) (\d+)\s*$", re.MULTILINE)


def parse_restarts(values: Iterable[str] | str | None) -> tuple[tuple[str, int], ...]:
    """``--restart`` values (repeatable; a scenario's: comma-separated) as (target, at ns)."""
    if values is None:
        return ()
    items = [values] if isinstance(values, str) else list(values)
    found: list[tuple[str, int]] = []
    for item in (part.strip() for value in items for part in str(value).split(",")):
        if not item:
            continue
        target, at, when = item.partition("@")
        try:
            at_ns = parse_duration(when) if at else -1
        except ValueError:
            at_ns = -1
        if not target.strip() or at_ns <= 0:
            raise UsageError(f"--restart {item}: expected TARGET@TIME, e.g. pong@5s or "
                             f"mosquitto@2500ms (TIME after the measured phase starts, > 0)")
        found.append((target.strip(), at_ns))
    return tuple(found)


def daemon_targets(transport: str, mode: str, option: Any, pong: str, bridge: str | None
                   ) -> list[str]:
    """The daemons this point starts, by the names ``--restart`` takes."""
    names: list[str] = []
    if bridge not in (None, "direct"):
        names += ["bridge-a", "bridge-b"] if bridge == "mqtt-bridge" else ["bridge-a"]
        if bridge == "zenoh-ros2dds":
            names.append("bridge-b")
        return names
    if transport == "mqtt":
        names.append("mosquitto")
    if transport == "zenoh" and option("mode") == "client":
        names.append("zenohd")
    if transport == "ros1":
        names.append("rosmaster")
        if pong == "relay":
            names.append("relay")
    if transport == "foxglove":
        names.append("foxglove-server")
    return names


def allowed_targets(cfg: Any) -> list[str]:
    """Every target ``--restart`` accepts for the point ``cfg`` (config.PointConfig)."""
    if cfg.mode == "oneway":  # one sub's samples: one topic, one subscriber
        single = getattr(cfg, "topics", 1) == 1 and getattr(cfg, "subscribers", 1) == 1
        if not single:
            return []
        subs = ["sub"] if cfg.bridge in (None, "direct") else []
        return subs + daemon_targets(cfg.transport, cfg.mode, cfg.option, cfg.pong, cfg.bridge)
    agents = ["pong"] if cfg.mode == "roundtrip" and cfg.pong == "agent" else []
    return agents + daemon_targets(cfg.transport, cfg.mode, cfg.option, cfg.pong, cfg.bridge)


def measured_ns(cfg: Any) -> int | None:
    """How long the measured phase lasts as planned (None: unknown, rate 0 with --count)."""
    if cfg.duration_ns is not None:
        return cfg.measure_ns
    if cfg.count is not None and cfg.rate > 0:
        return int(cfg.count / cfg.rate * 1e9)
    return None


def check(cfg: Any) -> None:
    """A usage error naming ``--restart`` for what cannot be restarted in this point."""
    allowed = allowed_targets(cfg)
    listed = ", ".join(allowed) or "none"
    for target, at_ns in cfg.restarts:
        item = f"--restart {target}@{_as_typed(at_ns)}"
        if cfg.remote is not None:
            raise UsageError(f"{item}: not with --host (yet): restarts run on this machine and "
                             "its emulated hosts")
        if cfg.mode not in ("roundtrip", "oneway"):
            raise UsageError(f"{item}: only round trips (--mode roundtrip, targets pong and "
                             "daemons) and one-way points (--mode oneway, targets sub and daemons) "
                             "are restarted")
        if target in MEASURING and target not in allowed:
            raise UsageError(f"{item}: cannot restart the {target}: {MEASURING[target]}; "
                             f"allowed targets of this point: {listed}")
        if target not in allowed:
            raise UsageError(f"{item}: not a process of this point; allowed targets: {listed} "
                             f"(daemons: mosquitto with mqtt, zenohd with zenoh --opt "
                             f"mode=client, rosmaster with ros1, foxglove-server with foxglove, "
                             f"bridge-a/bridge-b with --bridge)")
        planned = measured_ns(cfg)
        if planned is not None and at_ns >= planned:
            raise UsageError(f"{item}: at or beyond the end of the measured phase "
                             f"({format_ns(planned)}): give a time inside it, e.g. "
                             f"{target}@{_as_typed(planned // 2)}")
    if len({at for _, at in cfg.restarts}) != len(cfg.restarts):
        raise UsageError("--restart: two restarts at the same time; give each its own")


def _as_typed(ns: int) -> str:
    """A duration as a user would type it: 5s, 2500ms, 750us, 12ns."""
    for unit, scale in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns % scale == 0:
            return f"{ns // scale}{unit}"
    return f"{ns}ns"


def agent_lines(text: str) -> dict[str, list[int]]:
    """The ``MEASURING`` (every sender) and ``REOPENED`` (``--reopen``) lines an agent printed."""
    found: dict[str, list[int]] = {"MEASURING": [], "REOPENED": []}
    for word, ns in _LINE.findall(text):
        found[word].append(int(ns))
    return found


def read_samples(path: Path | None) -> list[tuple[int, int, int]]:
    """(seq, sent_ns, recv_ns) of every row of a samples file (empty when there is none; a row
    a kill cut short is left out)."""
    if path is None or not path.is_file():
        return []
    rows = []
    with open(path, encoding="utf-8", newline="") as handle:
        for r in csv.DictReader(handle):
            try:
                rows.append((int(r["seq"]), int(r["sent_ns"]), int(r["recv_ns"])))
            except (TypeError, ValueError):
                continue
    return rows


def analyse(events: Sequence[Mapping[str, Any]], rows: Sequence[tuple[int, int, int]],
            sent: int | None, duplicates: int | None,
            reopened: Mapping[str, Sequence[int]],
            restarted: Sequence[Sequence[tuple[int, int, int]]] | None = None
            ) -> list[dict[str, Any]]:
    """Each restart's entry of the result's ``restarts`` (see the module docstring).

    ``events``: what the restart part recorded (target, at_ns, killed_ns, started_ns, ready_ns,
    notes); ``rows``: the measuring agent's samples (a restarted sub: all its incarnations'
    rows); ``sent``: the sender's measured messages sent; ``reopened``: each surviving agent's
    REOPENED times; ``restarted`` (a sub's restarts): the rows of the incarnation each restart
    started, whose earliest arrival is the first message after it (a restarted sub gets nothing
    that was not sent to it).
    """
    received = {seq for seq, _, _ in rows}
    by_recv = sorted(rows, key=lambda r: r[2])
    kills = [e["killed_ns"] for e in events if e.get("killed_ns") is not None]
    out: list[dict[str, Any]] = []
    for index, event in enumerate(events):
        notes = list(event.get("notes", []))
        entry: dict[str, Any] = {
            "target": event["target"], "at_ns": event["at_ns"],
            "killed_ns": event.get("killed_ns"), "started_ns": event.get("started_ns"),
            "ready_ns": event.get("ready_ns"), "first_message_after_ns": None,
            "rediscovery_ns": None, "sent_in_gap": None, "lost": None,
            "duplicates": duplicates if index == 0 else None, "recovered": "no",
            "reopened_by": [], "notes": notes}
        killed = event.get("killed_ns")
        if killed is None:
            out.append(entry)
            continue
        following = [k for k in kills if k > killed]
        until = following[0] if following else None
        before = [seq for seq, _, recv in rows if recv < killed]
        last_before = max(before) if before else -1
        if restarted is not None:
            own = restarted[index] if index < len(restarted) else ()
            first = min(own, key=lambda r: r[2]) if own else None
        else:
            first = next((r for r in by_recv
                          if r[1] >= killed and (until is None or r[1] < until)), None)
        if first is None:
            end = sent if sent is not None else (max(received) + 1 if received else 0)
            gap = range(last_before + 1, end)
            notes.append("nothing sent after the kill came back before the run ended")
        else:
            gap = range(last_before + 1, first[0])
            entry["first_message_after_ns"] = first[2]
            entry["rediscovery_ns"] = first[2] - killed
            by = sorted(name for name, times in reopened.items()
                        if any(killed <= t <= first[2] for t in times))
            entry["reopened_by"] = by
            entry["recovered"] = "rebuilt" if by else "session"
        entry["sent_in_gap"] = len(gap)
        entry["lost"] = sum(1 for seq in gap if seq not in received)
        if index > 0:
            notes.append("duplicates: counted over the whole run (see the first restart's)")
        out.append(entry)
    return out


def analyse_topics(events: Sequence[Mapping[str, Any]],
                   topics: Sequence[tuple[str, Sequence[tuple[int, int, int]], int | None,
                                          int | None]],
                   reopened: Mapping[str, Sequence[int]]) -> list[dict[str, Any]]:
    """Each restart's entry over several topics (--topics, --replay): every topic analysed on its
    own samples (``topics``: name, rows, its measured sent, its duplicates), then one entry per
    restart: lost and sent in the gap summed, the first message after the kill when every topic
    had one (the rediscovery is the slowest topic's), recovered 'no' if any topic did not; each
    topic's own figures in the notes."""
    each = [(name, analyse(events, rows, sent, dups, reopened))
            for name, rows, sent, dups in topics]
    out: list[dict[str, Any]] = []
    for index in range(len(events)):
        found = [(name, entries[index]) for name, entries in each]
        entry = dict(found[0][1])
        afters = [e["first_message_after_ns"] for _, e in found]
        after = None if None in afters else max(afters)
        entry["first_message_after_ns"] = after
        entry["rediscovery_ns"] = (None if after is None or entry["killed_ns"] is None
                                   else after - entry["killed_ns"])
        for key in ("sent_in_gap", "lost", "duplicates"):
            values = [e[key] for _, e in found]
            entry[key] = None if None in values else sum(values)
        recovered = {e["recovered"] for _, e in found}
        entry["recovered"] = ("no" if "no" in recovered else
                              "rebuilt" if "rebuilt" in recovered else "session")
        entry["reopened_by"] = sorted({n for _, e in found for n in e["reopened_by"]})
        notes = list(dict.fromkeys(n for _, e in found for n in e["notes"]))
        if entry["killed_ns"] is not None:
            notes.append(f"{len(found)} topics, each on its own samples (lost and sent_in_gap "
                         "summed; first message after and rediscovery: when every topic had "
                         "one): " + "; ".join(
                             f"{name}: lost {e['lost']}, rediscovery {format_ns(e['rediscovery_ns'])}"
                             for name, e in found))
        entry["notes"] = notes
        out.append(entry)
    return out


def merge_sub_samples(incarnations: Sequence[Sequence[tuple[int, int, int]]]
                      ) -> tuple[list[tuple[int, int, int]], int]:
    """A restarted sub's samples, one list per incarnation (the killed ones first, the survivor
    last), as one: each sequence number's first arrival (by receive time), and how many
    arrived at more than one incarnation (duplicates across the restart)."""
    first: dict[int, tuple[int, int, int]] = {}
    across = 0
    for rows in incarnations:
        seen = set()
        for row in rows:
            if row[0] in seen:
                continue
            seen.add(row[0])
            if row[0] in first:
                across += 1
                if row[2] < first[row[0]][2]:
                    first[row[0]] = row
            else:
                first[row[0]] = row
    return sorted(first.values(), key=lambda r: r[2]), across


def write_merged_samples(path: Path, rows: Sequence[tuple[int, int, int]],
                         sources: Sequence[Path]) -> None:
    """``path`` (a samples file) as every incarnation's rows, each sequence number's first
    arrival once, by receive time (the full rows of the files ``sources``)."""
    keep = {(seq, recv) for seq, _, recv in rows}
    lines: list[tuple[int, str]] = []
    header = ""
    for source in sources:
        with open(source, encoding="utf-8") as handle:
            header = handle.readline() or header
            for line in handle:
                fields = line.split(",")
                if len(fields) < 5 or not line.endswith("\n"):
                    continue  # a row the kill cut short
                key = (int(fields[0]), int(fields[4]))
                if key in keep:
                    keep.discard(key)
                    lines.append((key[1], line))
    lines.sort()
    tmp = path.with_name(path.name + ".merging")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(header)
        handle.writelines(line for _, line in lines)
    os.replace(tmp, path)


def survivor_accounting(accounting: "Accounting", survivor_seqs: set[int],
                        all_seqs: set[int], across: int) -> "Accounting":
    """The point's accounting after a sub restart: the survivor's (already counted against the
    pub's ``sent``: merge.py) with the arrivals only the killed subs recorded added to
    ``received`` and taken from ``lost``, and the duplicates across the restart added."""
    killed_only = len(all_seqs - survivor_seqs)
    merged = accounting.copy()
    merged["received"] = accounting["received"] + killed_only
    merged["lost"] = max(0, accounting["lost"] - killed_only)
    merged["duplicated"] = accounting["duplicated"] + across
    return merged


def summary_line(entry: Mapping[str, Any]) -> str:
    """One line for people: ``pong@5s: lost 3, rediscovery 12.1 ms, session``."""
    return (f"{entry['target']}@{format_ns(entry['at_ns'])}: lost {entry['lost']}, "
            f"rediscovery {format_ns(entry['rediscovery_ns'])}, recovered {entry['recovered']}"
            f", duplicates {entry['duplicates']}")
