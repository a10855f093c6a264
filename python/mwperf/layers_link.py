"""The link emulator's part of per-layer latency (``--layers`` across ``--link``): when
mwperf-linkem read each message's packet from the sender's side and released it to the
receiver's (crates/mwperf-linkem/src/layerlog.rs).

With ``layer_log`` (emulation/userspace.py ``Forwarder.start``), each emulator writes
``<label>-up.layers.csv`` and ``<label>-down.layers.csv`` into the point's folder when it stops
(``up``: from the wire's first host to its second; with ``--link`` alone ``linkem-up`` carries
ping → pong and ``linkem-down`` pong → ping). Rows: ``run_id,topic,seq,flags,read_ns,
release_ns``, absolute CLOCK_MONOTONIC ns, the agents' clock (not virtualised by network
namespaces), so ``read - send syscall`` is the sender's kernel, ``release - read`` the link and
``receive syscall return - release`` the receiver's kernel.

A message appears once per packet that carried its header: a duplicated packet twice, a TCP
retransmission again, a lost packet never. The first passage counts (the one the receiver can
have got first); a header split across two packets (a TCP segment boundary) is not logged, and
that message's kernel time is then not split.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

FLAG_WARMUP = 0x01
FLAG_FIN = 0x02
FLAG_ECHO = 0x04
"""the header's echo flag (crates/mwperf-core wire.rs): the pong's answer, not the ping"""
FLAG_PROBE = 0x08
NOT_MEASURED = FLAG_WARMUP | FLAG_FIN | FLAG_PROBE
"""rows left out: warm-up messages and first-contact probes number their seqs from 0 like the
measured messages, and a FIN carries the sent count as its seq; none is a measured message, and
each would take a measured message's key"""
COLUMNS = ("run_id", "topic", "seq", "flags", "read_ns", "release_ns")

LinkKey = tuple[int, int, bool]
"""(topic, seq, echo)"""


def read_link_layers(path: Path, run_id: int | None = None
                     ) -> dict[LinkKey, tuple[int, int]]:
    """(topic, seq, echo) → (read_ns, release_ns) from one layer log; only ``run_id``'s messages
    (None: every run's), measured messages only (no warm-up, probe or FIN: ``NOT_MEASURED``).
    The first row of a key wins. A missing file gives {} (the emulator
    wrote none: it was stopped hard, or is an older build; the caller says so); a damaged row
    is skipped."""
    try:
        handle = open(path, newline="")
    except FileNotFoundError:
        return {}
    found: dict[LinkKey, tuple[int, int]] = {}
    with handle:
        rows = csv.reader(handle)
        if next(rows, None) != list(COLUMNS):
            return {}
        for row in rows:
            try:
                run, topic, seq, flags, read_ns, release_ns = (int(v) for v in row)
            except ValueError:
                continue
            if (run_id is not None and run != run_id) or flags & NOT_MEASURED:
                continue
            found.setdefault((topic, seq, bool(flags & FLAG_ECHO)), (read_ns, release_ns))
    return found


def read_many(paths: Iterable[Path], run_id: int | None = None
              ) -> dict[LinkKey, tuple[int, int]]:
    """Several layer logs as one (e.g. both directions of one wire: the echo flag keeps a
    ping and its pong apart); a key seen in an earlier file wins. Not for a path of several
    wires in a row: the same message passes each, and only the first file's passage is kept."""
    merged: dict[LinkKey, tuple[int, int]] = {}
    for path in paths:
        for key, times in read_link_layers(path, run_id).items():
            merged.setdefault(key, times)
    return merged


def layer_log_paths(report: Mapping[str, Any] | None) -> dict[str, Path]:
    """``{"up": path, "down": path}`` of the layer logs one emulator's stop report names (its
    ``layer_log`` section); a direction it could not write is missing, and so is everything
    for a report without one (netem, no report, not asked)."""
    logs = (report or {}).get("layer_log") or {}
    return {way: Path(entry["path"]) for way, entry in logs.items()
            if isinstance(entry, dict) and entry.get("path")}


def truncated(report: Mapping[str, Any] | None) -> int:
    """Messages the emulator forwarded but could not log (its log was full): the caller warns."""
    logs = (report or {}).get("layer_log") or {}
    return sum(int(entry.get("truncated") or 0) for entry in logs.values()
               if isinstance(entry, dict))
