"""Where each message's time goes (``--layers``, docs/layers.md): the rows of both sides
(layers_rows.py) and the link emulator's timestamps (layers_link.py) joined per message into a
chain of moments, each gap between two seen moments one layer, and the result's ``layers``
section.

A message's chain (one way; a round trip is the forward chain then the echo's):

    intended -> write -> send syscall -> [link read -> link release] -> receive syscall (last
    bytes) -> sample taken -> callback (a pong: its echo's write)

Consecutive moments are on one clock (one host's CLOCK_MONOTONIC: the agents of an emulated
network share it), so per message the layers add up to the measured latency exactly. A moment
nobody saw (no system call carries a shared-memory message; the last fragment of a message
split over datagrams is not recognisable) merges the two layers around it into one, named
``a+b`` — never a made-up split. The figures are over the messages that share the most common
pattern of seen moments; the others are counted as unsplit.
"""

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .layer_names import LAYERS as NAMED, PARTS as NAMED_PARTS, ROS2_PARTS
from .layers_rows import Row

LAYERS = ("app_send", "middleware_send", "kernel_network", "middleware_receive",
          "executor_callback")
LABELS = dict(NAMED + NAMED_PARTS + ROS2_PARTS)
MERGED_TRANSPORT = "middleware_send+kernel_network+middleware_receive"
"""all three middle layers in one: no system call carries the message (shared memory)"""
QUANTILES = (0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1)
NOT_SEEN = {
    "middleware_send": "the sender's system call carrying the message was not seen",
    "kernel_network": "a system call carrying the message was not seen on one side",
    "middleware_receive": "the receive system call that completed the message was not seen",
}

Link = dict[tuple[int, int, bool], tuple[int, int]]
"""(topic, seq, echo) -> (emulator read, emulator release), CLOCK_MONOTONIC ns"""


@dataclass(frozen=True)
class Moment:
    """One point of a message's chain: the layer that ENDS here, and when (None: not seen).
    A ``cut`` is no layer's end but a moment inside one (ROS 2's tracepoints, named by
    ``layer``): it splits that layer into parts (:data:`CUT_PARTS`)."""

    layer: str
    at: int | None
    direction: str
    cut: bool = False


CUT_PARTS: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {
    ("middleware_send", ("rcl_publish", "rmw_publish")):
        ("ros2_client_send", "ros2_rcl_send", "ros2_dds_send"),
    ("middleware_receive", ("rmw_take", "rcl_take")):
        ("ros2_dds_receive", "ros2_rmw_receive", "ros2_client_receive"),
    ("middleware_transport", ("rcl_publish", "rmw_publish", "rmw_take", "rcl_take")):
        ("ros2_client_send", "ros2_rcl_send", "ros2_dds", "ros2_rmw_receive",
         "ros2_client_receive"),
}
"""(layer, the cuts seen inside it in path order) -> its parts (layer_names.ROS2_PARTS); a
layer cut otherwise (a moment missing) is not split into parts"""


def _cuts(row: Row, names: tuple[str, ...], direction: str) -> list[Moment]:
    return [Moment(n, getattr(row, n), direction, cut=True) for n in names
            if getattr(row, n) is not None]


def one_way(sender: Row, receiver: Row, link: tuple[int, int] | None,
            direction: str = "forward", start: int | None = None) -> list[Moment]:
    """The chain of one direction, from ``start`` (the first moment: the sender's intended
    time, or for an echo the pong's write) to the receiver's callback."""
    chain = [Moment("", sender.intended if start is None else start, direction)]
    if start is None:
        chain.append(Moment("app_send", sender.write, direction))
    chain += _cuts(sender, ("rcl_publish", "rmw_publish"), direction)
    chain.append(Moment("middleware_send", sender.send_first, direction))
    if link is not None and sender.send_first is not None and receiver.recv_last is not None:
        chain += [Moment("sender_kernel", link[0], direction), Moment("link", link[1], direction),
                  Moment("receiver_kernel", receiver.recv_last, direction)]
    else:
        chain.append(Moment("kernel_network", receiver.recv_last, direction))
    chain += _cuts(receiver, ("rmw_take", "rcl_take"), direction)
    chain.append(Moment("middleware_receive", receiver.take, direction))
    return chain


def round_trip(ping: Row, pong: Row, links: Link) -> list[Moment]:
    """ping intended ... pong's callback and its echo's write ... ping's take (= its callback)."""
    forward = one_way(ping, pong, links.get((ping.topic, ping.seq, False)))
    forward.append(Moment("executor_callback", pong.write, "forward"))
    back = one_way(pong, ping, links.get((ping.topic, ping.seq, True)), "return", pong.write)
    back.append(Moment("executor_callback", ping.callback, "return"))
    return forward + back[1:]


def oneway_chain(pub: Row, sub: Row, links: Link) -> list[Moment]:
    chain = one_way(pub, sub, links.get((pub.topic, pub.seq, False)))
    chain.append(Moment("executor_callback", sub.callback, "forward"))
    return chain


Segments = list[tuple[str, str, int]]
"""(direction, layer, ns) of one message, in chain order"""


Parts = list[tuple[str, str, str, int]]
"""(direction, layer, part, ns) of one message: its layers cut by ROS 2's moments"""


def segments(chain: Sequence[Moment]) -> tuple[tuple[bool, ...], Segments] | None:
    """The message's layers between its seen moments, and which moments were seen (its
    pattern); None when the chain's ends are missing or time runs backwards between two seen
    moments (rows that do not belong together)."""
    split = split_chain(chain)
    return None if split is None else split[:2]


def split_chain(chain: Sequence[Moment]) -> tuple[tuple[bool, ...], Segments, Parts] | None:
    """:func:`segments`, and the parts of the layers that cut moments split (a layer whose cuts
    are missing or out of order has none: never a made-up split)."""
    layers = [m for m in chain if not m.cut]
    if layers[0].at is None or layers[-1].at is None:
        return None
    out: Segments = []
    parts: Parts = []
    pending: list[str] = []
    cuts: list[Moment] = []
    last = layers[0].at
    for m in chain[1:]:
        if m.cut:
            cuts.append(m)
            continue
        pending.append(m.layer)
        if m.at is None:
            continue
        if m.at < last:
            return None
        name = _merged(pending)
        out.append((m.direction, name, m.at - last))
        parts += _parts(m.direction, name, last, m.at, cuts)
        pending, cuts, last = [], [], m.at
    return tuple(m.at is not None for m in layers), out, parts


def _parts(direction: str, layer: str, start: int, end: int, cuts: list[Moment]) -> Parts:
    names = CUT_PARTS.get((layer, tuple(c.layer for c in cuts)))
    if names is None:
        return []
    bounds = [start, *(c.at for c in cuts if c.at is not None), end]
    if any(b < a for a, b in zip(bounds, bounds[1:])):
        return []
    return [(direction, layer, name, b - a) for name, a, b in zip(names, bounds, bounds[1:])]


def _merged(names: list[str]) -> str:
    """One layer's name for the layers between two seen moments (the link's parts are only
    in a chain whose kernel_network ends were both seen: they never merge)."""
    unique = list(dict.fromkeys(names))
    name = "+".join(unique)
    return "middleware_transport" if name == MERGED_TRANSPORT else name


def _components(name: str) -> list[str]:
    """The named layers a (possibly merged) layer stands for."""
    return (MERGED_TRANSPORT if name == "middleware_transport" else name).split("+")


def quantile(ordered: Sequence[int], q: float) -> int:
    """Nearest rank of the sorted ``ordered`` (q=0 the minimum, q=1 the maximum)."""
    if q <= 0:
        return ordered[0]
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


def figures(values: Iterable[int]) -> dict[str, Any]:
    ordered = sorted(values)
    if not ordered:
        return {"p50_ns": None, "p90_ns": None, "p99_ns": None, "max_ns": None, "mean_ns": None,
                "q_ns": None}
    return {"p50_ns": quantile(ordered, 0.5), "p90_ns": quantile(ordered, 0.9),
            "p99_ns": quantile(ordered, 0.99), "max_ns": ordered[-1],
            "mean_ns": sum(ordered) / len(ordered), "q_ns": [quantile(ordered, q) for q in QUANTILES]}


PARTS = ("sender_kernel", "link", "receiver_kernel")


def _layer(name: str, values: list[int], total_mean: float, notes: dict[str, str],
           parts: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    f = figures(values)
    return {"name": name, "label": LABELS.get(name, _label(name)), "observable": True,
            "note": notes.get(name), **f,
            "share": f["mean_ns"] / total_mean if total_mean > 0 else None, "parts": parts}


def _label(name: str) -> str:
    return " + ".join(LABELS.get(n, n) for n in name.split("+")) + " (not split)"


def _unseen(name: str, why: str) -> dict[str, Any]:
    return {"name": name, "label": LABELS[name], "observable": False, "note": why,
            "p50_ns": None, "p90_ns": None, "p99_ns": None, "max_ns": None, "mean_ns": None,
            "q_ns": None, "share": None, "parts": None}


def layer_list(messages: list[Segments], direction: str | None, why: dict[str, str],
               notes: dict[str, str], cut: list[Parts] | None = None) -> list[dict[str, Any]]:
    """The layers of ``messages`` (all one pattern), each summed over the message's directions
    (or of one ``direction``), in chain order; the five named layers a merge swallowed are
    listed as not observable, with ``why``. A layer that ``cut`` (each message's parts, in
    step with ``messages``) splits for every message gets those parts."""
    names: list[str] = []
    per: list[dict[str, int]] = []
    for segs in messages:
        sums: dict[str, int] = {}
        for d, name, ns in segs:
            if direction is not None and d != direction:
                continue
            top = "kernel_network" if name in PARTS else name
            if top not in names:
                names.append(top)
            sums[top] = sums.get(top, 0) + ns
            if name in PARTS:
                sums[name] = sums.get(name, 0) + ns
        per.append(sums)
    totals = [sum(v for k, v in m.items() if k not in PARTS) for m in per]
    total_mean = sum(totals) / len(totals) if totals else 0.0
    out = []
    swallowed = {n for name in names if "+" in name for n in name.split("+")}
    if "middleware_transport" in names:
        swallowed |= set(MERGED_TRANSPORT.split("+"))
    for name in LAYERS:
        if name in swallowed:
            out.append(_unseen(name, why.get(name, NOT_SEEN.get(name, "not seen"))))
    for name in names:
        parts: list[dict[str, Any]] | None = None
        if name == "kernel_network" and any("link" in m for m in per):
            parts = [_layer(p, [m.get(p, 0) for m in per], total_mean, notes) for p in PARTS]
        parts = parts or _cut_parts(name, direction, cut, total_mean, notes)
        out.append(_layer(name, [m.get(name, 0) for m in per], total_mean, notes, parts))
    order = {n: i for i, n in enumerate(LAYERS)}
    out.sort(key=lambda layer: order.get(layer["name"].split("+")[0],
                                         2 if layer["name"] == "middleware_transport" else 9))
    for layer in out:
        if not layer["observable"]:
            for other in out:
                if other["observable"] and layer["name"] in _components(other["name"]):
                    layer["note"] = f"{layer['note']}: counted in '{other['name']}'"
    return out


def _cut_parts(layer: str, direction: str | None, cut: list[Parts] | None, total_mean: float,
               notes: dict[str, str]) -> list[dict[str, Any]] | None:
    """The parts of ``layer`` (summed over the directions, or of one), if every message has
    them all."""
    if not cut:
        return None
    sums: list[dict[str, int]] = []
    order: list[str] = []
    for message in cut:
        got: dict[str, int] = {}
        for d, name, part, ns in message:
            if name == layer and (direction is None or d == direction):
                got[part] = got.get(part, 0) + ns
                if part not in order:
                    order.append(part)
        sums.append(got)
    if not order or any(set(got) != set(order) for got in sums):
        return None
    return [_layer(p, [got[p] for got in sums], total_mean, notes) for p in order]


def section(kind: str, chains: list[list[Moment]], why: dict[str, str],
            agents: list[dict[str, Any]], notes: list[str], unsplit: dict[str, int],
            per_topic: dict[str, list[list[Moment]]] | None = None) -> dict[str, Any]:
    """The result's ``layers`` section over ``chains`` (one per measured message delivered)."""
    body = _body(kind, chains, why, unsplit)
    body.update({"method": "ld_preload", "why_none": None, "kind": kind, "agents": agents,
                 "notes": notes, "quantiles": list(QUANTILES), "per_topic": None})
    if per_topic and len(per_topic) > 1:
        body["per_topic"] = [{"topic": name, **{k: v for k, v in _body(kind, c, why, {}).items()
                                                 if k not in ("directions", "unsplit")}}
                             for name, c in per_topic.items()]
    return body


def _body(kind: str, chains: list[list[Moment]], why: dict[str, str],
          unsplit: dict[str, int]) -> dict[str, Any]:
    split = [s for s in (split_chain(c) for c in chains) if s is not None]
    broken = len(chains) - len(split)
    patterns = Counter(p for p, _, _ in split)
    common = patterns.most_common(1)[0][0] if patterns else None
    kept = [segs for p, segs, _ in split if p == common]
    cut = [parts for p, _, parts in split if p == common]
    counts = dict(unsplit)
    counts["other_pattern"] = len(split) - len(kept)
    counts["inconsistent"] = broken
    totals = [sum(ns for _, _, ns in segs) for segs in kept]
    return {
        "messages": len(chains) + sum(unsplit.values()), "split": len(kept), "unsplit": counts,
        "total": figures(totals),
        "layers": layer_list(kept, None, why, {}, cut),
        "directions": ({"forward": layer_list(kept, "forward", why, {}, cut),
                        "return": layer_list(kept, "return", why, {}, cut)}
                       if kind == "roundtrip" else None),
    }


def none(why: str) -> dict[str, Any]:
    """The section when nothing could be seen (the run went on without layers)."""
    return {"method": "none", "why_none": why, "kind": None, "messages": 0, "split": 0,
            "unsplit": {}, "quantiles": list(QUANTILES), "total": figures([]), "layers": [],
            "directions": None, "per_topic": None, "agents": [], "notes": []}
