"""Plot: the ROS 2 tax (the ``ros2-tax`` scenario). The same stream — payload, rate, QoS, mode —
over three stacks of one Fast DDS: raw Fast DDS (``--transport fastdds --opt distro=X``: the
Fast DDS of distribution X's RMW), rcl + rmw_fastrtps_cpp (``--transport ros2``), and an rclpy
node on the path (``--transport ros2 --pong relay``). Each stack's latency as a ratio to raw Fast
DDS of the same distribution, stream and round: a round is one repetition of an interleaved
sweep (its points ran one after the other, so each ratio compares figures measured minutes
apart at most, never across a change of the machine's load); the ratio shown is the median over
the rounds, with the lowest and highest as its spread. A stack without a raw Fast DDS point of
the same round has no ratio."""

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..durations import format_ns
from ..sizes import format_bytes
from .data import Point, Run
from .section import Section
from .ratios import median as _median, ratio_chart, ratio_point, spread as _spread
from .svg import Axis

RAW = "raw Fast DDS"
STACKS = (RAW, "rcl + rmw_fastrtps_cpp", "rclpy echo")
"""the stacks, cheapest first; the first is what the others are divided by"""
STREAM = ("mode", "rate", "payload_bytes", "reliability", "history", "depth", "durability")
"""the catalogue columns that make two points the same stream"""


def stack(point: Point) -> str | None:
    """Which stack ``point`` measured (None: not one of the tax's)."""
    transport, pong = point.get("transport"), point.get("pong") or "agent"
    if transport == "fastdds" and distro(point) is not None and pong == "agent":
        return RAW
    if transport == "ros2":
        return STACKS[1] if pong == "agent" else STACKS[2] if pong == "relay" else None
    return None


def distro(point: Point) -> str | None:
    """The ``--opt distro`` of ``point`` (the catalogue keeps the options as a JSON list)."""
    try:
        opts = json.loads(point.get("opts") or "[]")
    except ValueError:
        return None
    found = [o.split("=", 1)[1] for o in opts if isinstance(o, str) and o.startswith("distro=")]
    return found[-1] if found else None


@dataclass
class Ratio:
    """One stack of one stream: its p50s and p99s per round, and their ratios to raw Fast DDS."""

    distro: str
    stream: tuple[Any, ...]
    stack: str
    p50_ns: list[float]
    p99_ns: list[float]
    p50_ratios: list[float]
    p99_ratios: list[float]
    points: list[str]
    rounds: list[tuple[str, int]]
    """(run id, repetition) of each p50, in the same order"""

    @property
    def payload_bytes(self) -> int:
        return int(self.stream[STREAM.index("payload_bytes")] or 0)

    @property
    def rate(self) -> float:
        return float(self.stream[STREAM.index("rate")] or 0)


def ratios(runs: Sequence[Run]) -> list[Ratio]:
    """Every (distribution, stream, stack) of the tax in ``runs``, raw Fast DDS included (its
    ratios are 1), ordered by distribution, payload, rate and stack."""
    rounds: dict[tuple[Any, ...], dict[str, Point]] = {}
    for run in runs:
        for point in run.points:
            kind = stack(point)
            name = distro(point)
            if kind is None or name is None or point.status == "failed" \
                    or point.get("latency_p50_ns") is None:
                continue
            key = (name, tuple(point.get(c) for c in STREAM), run.run_id,
                   point.get("repetition") or 1)
            rounds.setdefault(key, {})[kind] = point
    found: dict[tuple[str, tuple[Any, ...], str], Ratio] = {}
    for (name, stream, run_id, rep), members in rounds.items():
        raw = members.get(RAW)
        for kind, point in members.items():
            entry = found.setdefault((name, stream, kind),
                                     Ratio(name, stream, kind, [], [], [], [], [], []))
            entry.rounds.append((run_id, rep))
            entry.p50_ns.append(float(point.get("latency_p50_ns")))
            entry.p99_ns.append(float(point.get("latency_p99_ns") or 0))
            entry.points.append(point.point_id)
            if raw is not None and raw.get("latency_p50_ns"):
                entry.p50_ratios.append(point.get("latency_p50_ns") / raw.get("latency_p50_ns"))
                if raw.get("latency_p99_ns") and point.get("latency_p99_ns") is not None:
                    entry.p99_ratios.append(point.get("latency_p99_ns")
                                            / raw.get("latency_p99_ns"))
    return sorted(found.values(), key=lambda r: (r.distro, r.payload_bytes, r.rate,
                                                  STACKS.index(r.stack)))


Pair = tuple[tuple[str, str], Ratio, Ratio, list[float]]


def distributions(found: Sequence[Ratio]) -> list[Pair]:
    """Each pair of distributions (the first name alphabetically, the second), per stack and
    stream: the second's p50 divided by the first's, round by round (round r of both in one
    run: the same sweep measured them minutes apart)."""
    out: list[Pair] = []
    names = sorted({r.distro for r in found})
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            for a in (r for r in found if r.distro == first):
                b = next((r for r in found if r.distro == second and r.stream == a.stream
                          and r.stack == a.stack), None)
                if b is None:
                    continue
                theirs = dict(zip(b.rounds, b.p50_ns))
                ratio = [theirs[r] / x for r, x in zip(a.rounds, a.p50_ns) if r in theirs and x]
                if ratio:
                    out.append(((first, second), a, b, ratio))
    return out


def section(runs: Sequence[Run]) -> Section:
    """The ROS 2 tax section (empty without a stack other than raw Fast DDS)."""
    out = Section("ros2-tax", "The ROS 2 tax: rcl and rclpy over raw Fast DDS (same Fast DDS)")
    found = ratios(runs)
    if not any(r.stack != RAW for r in found):
        return out
    for name in sorted({r.distro for r in found}):
        members = [r for r in found if r.distro == name]
        streams = sorted({(r.payload_bytes, r.rate) for r in members})
        ticks = [(float(i), f"{format_bytes(p)} @ {rate:g} Hz" if rate else format_bytes(p))
                 for i, (p, rate) in enumerate(streams)]
        chart = ratio_chart(f"ROS 2 {name}: round-trip p50 as a ratio to raw Fast DDS of {name}",
                            Axis("stream", ticks=ticks), "raw Fast DDS", f"ros2-tax-{name}",
                            STACKS)
        for r in members:
            if not r.p50_ratios:
                continue
            x = streams.index((r.payload_bytes, r.rate)) - 0.3 + 0.3 * STACKS.index(r.stack)
            middle = statistics.median(r.p50_ratios)
            tip = (f"{name} {format_bytes(r.payload_bytes)} {r.stack}: p50 x"
                   f"{middle:.2f} of raw Fast DDS over {len(r.p50_ratios)} rounds "
                   f"(median p50 {format_ns(_median(r.p50_ns))})")
            ratio_point(chart, x, r.p50_ratios, STACKS.index(r.stack), tip)
        out.add(chart)
    if any(r.stack != RAW and not r.p50_ratios for r in found):
        out.note = ("Some stacks have no raw Fast DDS point of the same distribution, stream and "
                    "round, so no ratio: run them in one sweep (the 'ros2-tax' scenario).")
    return out


def markdown(runs: Sequence[Run]) -> str:
    """The tax as a Markdown table ("" without a stack other than raw Fast DDS)."""
    found = ratios(runs)
    if not any(r.stack != RAW for r in found):
        return ""
    lines = ["", "The ROS 2 tax (ratio to raw Fast DDS of the same distribution, stream and round;"
             " median over rounds, lowest\u2013highest in brackets):", "",
             "| distro | payload | rate | stack | rounds | p50 (median) | p50 / raw | p99 (median) "
             "| p99 / raw |", "|" + "---|" * 9]
    for r in found:
        lines.append(
            f"| {r.distro} | {format_bytes(r.payload_bytes)} | {r.rate:g} Hz | {r.stack} | "
            f"{len(r.p50_ns)} | {format_ns(_median(r.p50_ns))} | {_spread(r.p50_ratios)} | "
            f"{format_ns(_median(r.p99_ns))} | {_spread(r.p99_ratios)} |")
    pairs = distributions(found)
    if pairs:
        lines += ["", "Between distributions (the second's p50 / the first's, round by round; "
                  "median, lowest\u2013highest):", "",
                  "| distros | payload | rate | stack | p50 first | p50 second | second / first |",
                  "|" + "---|" * 7]
        for (first, second), a, b, ratio in pairs:
            lines.append(f"| {first} \u2192 {second} | {format_bytes(a.payload_bytes)} | "
                         f"{a.rate:g} Hz | {a.stack} | {format_ns(_median(a.p50_ns))} | "
                         f"{format_ns(_median(b.p50_ns))} | {_spread(ratio)} |")
    return "\n".join(lines) + "\n"
