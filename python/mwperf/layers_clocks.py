"""Layers across two clocks (``--layers`` with an agent on a real host, docs/layers.md).

Each agent stamps on its own host's CLOCK_MONOTONIC. A layer between two stamps of one agent is
exact on any host; kernel_network runs from the sender's system call to the receiver's, one
stamp on each clock, so on its own it carries the offset between the two clocks (two machines
booted at different times: seconds to days).

Round trip: the forward kernel_network is off by +θ and the return one by −θ (θ: the pong's
clock minus the ping's), so their sum — the section's kernel_network, both directions summed —
is clock-free: ping's (recv_last − send_first) minus pong's (send_first − recv_last); so is each
message's total, the measured RTT. ``aligned_pong`` moves the pong's stamps by the offset that
cuts that sum in two equal halves (NTP's assumption) only so that the chain (layers.py) is built
as on one clock; the sums do not depend on that offset, each direction's kernel_network does,
and ``unknown_across`` reports those as not observable rather than a made-up split.

One way: a sub on another clock measures the pub's clock (``--clock-sync``, on by itself across
real hosts; clocksync.py) and moves its receive times onto the pub's clock with the fit of its
report (``offset_ns`` at ``t0_ns``, ``drift_ppm``); ``on_pub_clock`` moves all of a sub's stamps
the same way, so the layers add up to the sub's measured latency and kernel_network is known
within the estimate's ``error_bound_ns`` (the section's ``clock_bound_ns``). Without a usable
estimate kernel_network and the total are not known: ``aligned_sub`` only lines the sub up so
the chain can be built, and ``unknown_across`` withholds the figures that depend on it.
"""

from dataclasses import replace
from collections.abc import Callable
from typing import Any

from .layers import LABELS, MERGED_TRANSPORT
from .layers_rows import Row

STAMPS = ("intended", "write", "send_first", "send_last", "recv_first", "recv_last", "take",
          "callback", "rcl_publish", "rmw_publish", "rmw_take", "rcl_take")
"""a row's fields on its agent's clock (every field but topic and seq)"""
CROSSING = "kernel_network"
"""the layer between two agents' stamps: the one that crosses from one clock to the other"""


def two_clocks_why(where: str) -> str:
    """A crossing layer's note for one direction of a round trip (``where``: the hosts)."""
    return (f"two clocks ({where}): each direction's kernel and network time is not known "
            "without a clock offset; both directions' sum is (the section's)")


def _moved(row: Row, move: Callable[[int], int]) -> Row:
    """``row`` with every stamp passed through ``move``."""
    return replace(row, **{f: move(v) for f in STAMPS if (v := getattr(row, f)) is not None})


def _first(*stamps: int | None) -> int | None:
    return next((s for s in stamps if s is not None), None)


def aligned_pong(ping: Row, pong: Row) -> Row:
    """The pong's row moved onto the ping's clock by the offset that makes both directions'
    crossings equal (module doc); unchanged when a side has no stamp around a crossing (the
    chain is then unsplit anyway)."""
    ping_out = _first(ping.send_first, ping.write, ping.intended)  # the last before the pong
    ping_in = _first(ping.recv_last, ping.take, ping.callback)  # the first after it
    pong_in = _first(pong.recv_last, pong.take, pong.write, pong.send_first)
    pong_out = _first(pong.send_first, pong.write, pong.take, pong.recv_last)
    if ping_out is None or ping_in is None or pong_in is None or pong_out is None:
        return pong
    theta = (ping_out + ping_in - pong_in - pong_out) // 2
    return _moved(pong, lambda t: t + theta)


def sync_of(report: dict[str, Any] | None) -> dict[str, Any] | None:
    """A sub report's clock-sync estimate (``measurement.clock_sync``) if it has a fit."""
    sync = ((report or {}).get("measurement") or {}).get("clock_sync") or {}
    if sync.get("status") != "ok" or sync.get("offset_ns") is None or sync.get("t0_ns") is None:
        return None
    return sync


def on_pub_clock(sub: Row, sync: dict[str, Any]) -> Row:
    """The sub's row on the pub's clock: each stamp t + offset + drift·(t − t0), rounded, as the
    sub moves its receive times (crates/mwperf-core clocksync/fit.rs ``to_server``)."""
    offset, t0 = float(sync["offset_ns"]), int(sync["t0_ns"])
    drift = float(sync.get("drift_ppm") or 0.0) * 1e-6
    return _moved(sub, lambda t: t + round(offset + drift * (t - t0)))


def aligned_sub(pub: Row, sub: Row) -> Row:
    """Without an estimate: the sub's row moved so that kernel_network is 0, only so the chain
    builds; every figure that depends on it is withheld (``unknown_across``)."""
    pub_out = _first(pub.send_first, pub.write, pub.intended)
    sub_in = _first(sub.recv_last, sub.take, sub.callback)
    if pub_out is None or sub_in is None:
        return sub
    return _moved(sub, lambda t: t + pub_out - sub_in)


def unknown_across(layers: list[dict[str, Any]], why: str) -> list[dict[str, Any]]:
    """``layers`` (a list of the section) with the crossing layer — kernel_network, or a layer
    merged with it — not observable for ``why``, and every share null: the list's total is not
    known either."""
    out = []
    for layer in layers:
        names = (MERGED_TRANSPORT if layer["name"] == "middleware_transport"
                 else layer["name"]).split("+")
        if CROSSING in names and layer["observable"]:
            layer = {**layer, "observable": False, "note": why, "p50_ns": None, "p90_ns": None,
                     "p99_ns": None, "max_ns": None, "mean_ns": None, "q_ns": None,
                     "parts": None, "label": layer.get("label") or LABELS.get(layer["name"])}
        out.append({**layer, "share": None})
    return out

