"""What security costs (the ``security`` scenario, ``--secure``): each transport's secured
points against its plain one of the same stream and round. A round is one repetition of an
interleaved sweep (plain and secured measured minutes apart at most, never across a change of
the machine's load); each figure is the median over the rounds, with the lowest and highest
ratio as its spread. Per transport, stream (payload, rate, mode, QoS, link) and mode: round-trip
p50 and p99 and their ratios to plain, the sender's opening of its endpoints (a TLS handshake with
the broker or router, a DDS participant with its security plugins), the time from that start to
the first echo (opening, discovery with DDS-Security's handshakes, first echo), bytes on the wire
per message (``--wire-bytes``: the link's IP bytes, WireGuard's encapsulation included) and CPU
per message (every agent's, plus the tunnel's wireguard-go: the encryption that runs outside the
agents), each as a ratio to plain, and the WireGuard handshake. A mode without a plain point of
the same round has no ratio."""

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..durations import format_ns
from ..sizes import format_bytes
from .data import Point, Run
from .section import Section
from .ratios import median as _median, ratio_chart, ratio_point, spread as _spread
from .svg import Axis

PLAIN = "plain"
ORDER = (PLAIN, "auth", "sign", "encrypt", "tls", "mtls", "tls+quic", "mtls+quic", "wireguard")
"""the modes, plain first: what the others are divided by (security/modes.py's, and plain)"""
STREAM = ("transport", "mode", "rate", "payload_bytes", "reliability", "history", "depth",
          "durability", "link")
"""what makes two points the same stream: catalogue columns, and the link they crossed (from
the result: not a column)"""
AGENT_CPU = ("ping_cpu_s", "pong_cpu_s", "pub_cpu_s", "sub_cpu_s", "client_cpu_s",
             "server_cpu_s")


def secure_mode(point: Point) -> str:
    """``plain`` or the point's ``--secure`` mode (from its result's configuration)."""
    return (point.security or {}).get("mode") or PLAIN


def cpu_per_message_us(point: Point) -> float | None:
    """The agents' CPU (and a tunnel's wireguard-go) over the whole run, start-up and
    handshake included, per measured message sent, in µs: a short point's figure is mostly its
    start-up (a longer one dilutes it), so compare it only between points of equal length."""
    sent = point.get("sent")
    if not sent:
        return None
    used = [point.get(c) for c in AGENT_CPU if point.get(c) is not None]
    if not used:
        return None
    tunnel = (point.security or {}).get("tunnel_cpu_s") or 0.0
    return (sum(used) + tunnel) / sent * 1e6


@dataclass
class Cost:
    """One mode of one stream: its figures per round, and their ratios to plain."""

    stream: tuple[Any, ...]
    secure: str
    p50_ns: list[float] = field(default_factory=list)
    p99_ns: list[float] = field(default_factory=list)
    open_ns: list[float] = field(default_factory=list)
    first_ns: list[float] = field(default_factory=list)
    wire_bytes: list[float] = field(default_factory=list)
    cpu_us: list[float] = field(default_factory=list)
    handshake_ms: list[float] = field(default_factory=list)
    ratios: dict[str, list[float]] = field(default_factory=dict)
    """figure -> its ratio to plain, round by round (p50, p99, wire, cpu)"""

    def of(self, column: str) -> Any:
        return self.stream[STREAM.index(column)]


def _stream(point: Point) -> tuple[Any, ...]:
    return tuple(point.link if c == "link" else point.get(c) for c in STREAM)


def _figures(point: Point) -> dict[str, float | None]:
    return {"p50": point.get("latency_p50_ns"), "p99": point.get("latency_p99_ns"),
            "wire": point.get("wire_up_bytes_per_msg"), "cpu": cpu_per_message_us(point)}


def costs(runs: Sequence[Run]) -> list[Cost]:
    """Every (stream, mode) of the runs' points whose stream has a secured point, plain
    included, ordered by transport, payload, rate and mode."""
    rounds: dict[tuple[Any, ...], dict[str, Point]] = {}
    for run in runs:
        for point in run.points:
            if point.status == "failed" or point.get("latency_p50_ns") is None:
                continue
            key = (_stream(point), run.run_id, point.get("repetition") or 1)
            rounds.setdefault(key, {})[secure_mode(point)] = point
    found: dict[tuple[tuple[Any, ...], str], Cost] = {}
    secured = {key[0] for key, members in rounds.items() if set(members) - {PLAIN}}
    for (stream, _, _), members in rounds.items():
        if stream not in secured:
            continue
        plain = _figures(members[PLAIN]) if PLAIN in members else None
        for mode, point in members.items():
            cost = found.setdefault((stream, mode), Cost(stream, mode))
            figures = _figures(point)
            cost.p50_ns.append(float(point.get("latency_p50_ns")))
            _add(cost.p99_ns, figures["p99"])
            _add(cost.open_ns, point.get("discovery_open_ns"))
            _add(cost.first_ns, point.get("time_to_connect_ns"))
            _add(cost.wire_bytes, figures["wire"])
            _add(cost.cpu_us, figures["cpu"])
            _add(cost.handshake_ms, (point.security or {}).get("handshake_ms"))
            for name, value in figures.items():
                base = plain.get(name) if plain is not None else None
                if value is not None and base:
                    cost.ratios.setdefault(name, []).append(value / base)
    return sorted(found.values(), key=lambda c: (
        str(c.of("transport")), int(c.of("payload_bytes") or 0), float(c.of("rate") or 0),
        ORDER.index(c.secure) if c.secure in ORDER else len(ORDER)))


def _add(values: list[float], value: Any) -> None:
    if value is not None:
        values.append(float(value))


def _number(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def markdown(runs: Sequence[Run]) -> str:
    """The costs as a Markdown table ("" without a secured point)."""
    found = costs(runs)
    if not found:
        return ""
    lines = ["", "What security costs (each mode against plain of the same stream and round; "
             "median over rounds, lowest\u2013highest ratio in brackets; CPU: the agents' and a "
             "tunnel's wireguard-go over the whole run, start-up included, per measured "
             "message):", "",
             "| transport | payload | rate | secure | rounds | p50 | p50 / plain | p99 "
             "| p99 / plain | open | first echo | B/msg up | B/msg / plain | CPU µs/msg "
             "| CPU / plain | handshake ms |", "|" + "---|" * 16]
    for c in found:
        rate = float(c.of("rate") or 0)
        lines.append(
            f"| {c.of('transport')} | {format_bytes(int(c.of('payload_bytes') or 0))} | "
            f"{f'{rate:g} Hz' if rate else 'max'} | {c.secure} | {len(c.p50_ns)} | "
            f"{format_ns(_median(c.p50_ns))} | {_spread(c.ratios.get('p50'))} | "
            f"{format_ns(_median(c.p99_ns))} | {_spread(c.ratios.get('p99'))} | "
            f"{format_ns(_median(c.open_ns)) if c.open_ns else '-'} | "
            f"{format_ns(_median(c.first_ns)) if c.first_ns else '-'} | "
            f"{_number(_median(c.wire_bytes), '.0f')} | {_spread(c.ratios.get('wire'))} | "
            f"{_number(_median(c.cpu_us), '.1f')} | {_spread(c.ratios.get('cpu'))} | "
            f"{_number(_median(c.handshake_ms), '.2f')} |")
    return "\n".join(lines) + "\n"


def section(runs: Sequence[Run]) -> Section:
    """The security section: per payload, each transport's modes' p50 as a ratio to plain."""
    out = Section("security", "What security costs: each mode against plain")
    every = costs(runs)
    if any(c.secure != PLAIN and not c.ratios.get("p50") for c in every):
        out.note = ("Some modes have no plain point of the same stream and round, so no ratio: "
                    "run plain and secured in one sweep (the 'security' scenario).")
    found = [c for c in every if c.secure != PLAIN and c.ratios.get("p50")]
    if not found:
        return out
    modes = [m for m in ORDER if m != PLAIN and any(c.secure == m for c in found)]
    for payload in sorted({int(c.of("payload_bytes") or 0) for c in found}):
        members = [c for c in found if int(c.of("payload_bytes") or 0) == payload]
        transports = sorted({str(c.of("transport")) for c in members})
        chart = ratio_chart(f"{format_bytes(payload)}: round-trip p50 as a ratio to plain",
                            Axis("transport",
                                 ticks=[(float(i), t) for i, t in enumerate(transports)]),
                            "plain", f"security-{payload}", modes)
        for c in members:
            ratios = c.ratios["p50"]
            k = modes.index(c.secure)
            x = transports.index(str(c.of("transport"))) - 0.3 + 0.6 * k / max(1, len(modes) - 1)
            tip = (f"{c.of('transport')} {format_bytes(payload)} {c.secure}: p50 "
                   f"x{statistics.median(ratios):.2f} of plain over {len(ratios)} rounds "
                   f"(median p50 {format_ns(_median(c.p50_ns))})")
            ratio_point(chart, x, ratios, k, tip)
        out.add(chart)
    return out
