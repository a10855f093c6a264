"""Throughput (``--mode throughput``, docs/throughput.md): how much each middleware carries.

A table of the throughput points (transport, payload, delivery, subscribers, offered rate,
delivered msgs/s and MB/s, loss, the share of the sending time the middleware held the sender
back, CPU per message of the publisher and of the subscribers) and a log-log chart of
the delivered payload bytes/s against the payload size, one line per transport + delivery +
subscribers (and run, with several runs; a transport's colour is the same in every chart,
best-effort dashed, several subscribers wider). Each line's saturation point — the smallest size
whose bytes/s is within ``SATURATION`` of that line's best — is marked ◆ on the chart and named
in the table. Figures are summed over the subscribers (what the middleware delivered);
repetitions of a size count by their median. MB = 10^6 bytes of payload.
"""

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from ..sizes import format_bytes
from ..show.table import format_rate
from .data import Point, Run
from .labels import run_tags
from .section import Section
from .summary import numbering
from .svg import Axis, Chart, colour

SATURATION = 0.10
"""a line saturates at the smallest size whose bytes/s is at least (1 - SATURATION) x its best"""
MAX_LINES = 10
"""more lines than this: one chart per delivery and subscriber count"""
MAX_TICKS = 10
"""payload sizes named on the x axis (the measured ones; thinned beyond this)"""
DIAMOND = "\u25c6"


@dataclass(frozen=True)
class Line:
    """One line of the chart: a transport's points of one delivery and subscriber count (in one
    run when the report has several), by payload size."""

    tag: str
    transport: str
    delivery: str
    subscribers: int
    points: tuple[Point, ...]

    @property
    def name(self) -> str:
        text = f"{self.transport} {self.delivery}"
        if self.subscribers != 1:
            text += f" \u00d7{self.subscribers} subs"
        return f"{self.tag}: {text}" if self.tag else text

    def sizes(self) -> list[tuple[int, float]]:
        """(payload bytes, delivered payload bytes/s: the median of its repetitions), by size."""
        by_size: dict[int, list[float]] = {}
        for point in self.points:
            value = bytes_per_s(point)
            if value is not None and point.get("payload_bytes") is not None:
                by_size.setdefault(int(point.get("payload_bytes")), []).append(value)
        return [(size, statistics.median(values)) for size, values in sorted(by_size.items())]

    def saturation(self) -> tuple[int, float, float] | None:
        """(size, its bytes/s, the line's best bytes/s) of the saturation point; None without
        a measured size."""
        sizes = self.sizes()
        if not sizes:
            return None
        best = max(value for _, value in sizes)
        size, value = next((s, v) for s, v in sizes if v >= (1 - SATURATION) * best)
        return size, value, best


def is_throughput(point: Point) -> bool:
    """A measured ``--mode throughput`` point."""
    return point.get("mode") == "throughput" and point.get("msgs_per_s") is not None


def bytes_per_s(point: Point) -> float | None:
    """Delivered payload bytes per second (summed over the subscribers)."""
    value = point.get("payload_bytes_per_s")
    if value is None and point.get("msgs_per_s") is not None \
            and point.get("payload_bytes") is not None:
        value = point.get("msgs_per_s") * point.get("payload_bytes")
    return None if value is None else float(value)


def blocked_pct(point: Point) -> float | None:
    """The share of the sender's sending time the middleware held it back (flow control)."""
    blocked, sending = point.get("blocked_s"), point.get("sending_s")
    return None if blocked is None or not sending else 100.0 * blocked / sending


def delivery(point: Point) -> str:
    return str(point.get("delivery") or point.get("reliability") or "?")


def lines(runs: Sequence[Run]) -> list[Line]:
    """The throughput points as chart lines, in the order they were measured."""
    tags = run_tags(runs)
    found: dict[tuple[str, str, str, int], list[Point]] = {}
    for run in runs:
        for point in run.points:
            if is_throughput(point):
                key = (tags[run.run_id], str(point.get("transport")), delivery(point),
                       int(point.get("subscribers") or 1))
                found.setdefault(key, []).append(point)
    return [Line(*key, tuple(points)) for key, points in found.items()]


def rate_text(value: float | None) -> str:
    """Bytes per second for people, in decimal units (MB = 10^6 bytes)."""
    if value is None:
        return "\u2014"
    for size, unit in ((1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s")):
        if value >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.3g} B/s"


def _num(value: float | None, fmt: str) -> str:
    return "\u2014" if value is None else format(value, fmt)


def rows(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """One row per throughput point (raw values: msgs/s, bytes/s, %, µs), numbered as in the
    summary table, ``saturation`` true on the point that is its line's saturation point (for
    repetitions: each repetition of that size)."""
    numbers = numbering(runs)
    out = []
    for line in lines(runs):
        saturated = line.saturation()
        for point in sorted(line.points, key=lambda p: (p.get("payload_bytes") or 0,
                                                         numbers[p.point_id])):
            out.append({
                "number": numbers[point.point_id], "point_id": point.point_id,
                "line": line.name, "transport": line.transport,
                "payload_bytes": point.get("payload_bytes"), "delivery": line.delivery,
                "subscribers": line.subscribers, "offered_per_s": point.get("offered_per_s"),
                "msgs_per_s": point.get("msgs_per_s"), "payload_bytes_per_s": bytes_per_s(point),
                "wire_bytes_per_s": point.get("wire_bytes_per_s"),
                "loss_pct": point.get("loss_pct"), "blocked_pct": blocked_pct(point),
                "refused": point.get("refused"),
                "pub_cpu_per_msg_us": point.get("pub_cpu_per_msg_us"),
                "sub_cpu_per_msg_us": point.get("sub_cpu_per_msg_us"),
                "pub_cpu_per_mb_ms": point.get("pub_cpu_per_mb_ms"),
                "sub_cpu_per_mb_ms": point.get("sub_cpu_per_mb_ms"),
                "checked_every": point.get("checked_every"), "status": point.status,
                "saturation": bool(saturated) and point.get("payload_bytes") == saturated[0]})
    return out


HEAD = ("#", "transport", "payload", "delivery", "subscribers", "offered", "msgs/s", "MB/s",
        "loss %", "sender blocked %", "CPU/msg pub", "CPU/msg sub", "saturation")


def _cells(row: dict[str, Any], lines_by_name: dict[str, Line]) -> list[str]:
    saturation = ""
    if row["saturation"]:
        found = lines_by_name[row["line"]].saturation()
        assert found is not None
        saturation = (f"{DIAMOND} saturates here (\u2265 {100 * (1 - SATURATION):.0f} % of its "
                      f"best, {rate_text(found[2])})")
    offered = row["offered_per_s"]
    return [f"#{row['number']}", row["transport"],
            format_bytes(row["payload_bytes"]) if row["payload_bytes"] is not None else "?",
            row["delivery"], str(row["subscribers"]),
            "max" if offered is None else format_rate(float(offered)),
            _count(row["msgs_per_s"]),
            _num(None if row["payload_bytes_per_s"] is None else row["payload_bytes_per_s"] / 1e6,
                 ".4g"),
            _num(row["loss_pct"], ".3g"), _num(row["blocked_pct"], ".3g"),
            _us(row["pub_cpu_per_msg_us"]), _us(row["sub_cpu_per_msg_us"]),
            saturation + ("" if row["status"] == "complete" else f" ({row['status']})")]


def _us(value: float | None) -> str:
    if value is None:
        return "\u2014"
    return f"{value / 1000:.3g} ms" if value >= 1000 else f"{value:.3g} \u00b5s"


def _count(value: float | None) -> str:
    """Messages per second: whole ones with thousands separated (30,518), below 100 three
    significant digits."""
    if value is None:
        return "\u2014"
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def section(runs: Sequence[Run]) -> Section:
    """The throughput section (empty without throughput points)."""
    out = Section("throughput", "Throughput: what each middleware carries")
    found = lines(runs)
    if not found:
        return out
    groups: dict[tuple[str, int] | None, list[Line]] = {}
    for line in found:
        split = len(found) > MAX_LINES
        groups.setdefault((line.delivery, line.subscribers) if split else None, []).append(line)
    transports = list(dict.fromkeys(line.transport for line in found))
    for key, members in groups.items():
        out.add(_chart(members, key, transports))
    by_name = {line.name: line for line in found}
    table = rows(runs)
    numeric = ' class="num"'
    body = "".join(
        "<tr>" + "".join(f"<td{numeric if 4 <= i <= 11 else ''}>{escape(c)}</td>"
                         for i, c in enumerate(_cells(row, by_name))) + "</tr>"
        for row in table)
    out.charts.append(
        '<div class="wide"><p class="note">Delivered over the receive window, summed over the '
        "subscribers; MB = 10<sup>6</sup> bytes of payload; sender blocked = the share of its "
        "sending time the middleware held it back (flow control); CPU per message in the steady "
        "state (pub: per accepted message; sub: summed over the subscribers, per delivered "
        "message). "
        f"{DIAMOND} = the line's saturation point: the smallest size within "
        f"{100 * SATURATION:.0f} % of its best bytes/s.</p>"
        '<table class="throughput"><tr>' + "".join(f"<th>{escape(h)}</th>" for h in HEAD)
        + "</tr>" + body + "</table></div>")
    return out


def _chart(members: list[Line], key: tuple[str, int] | None, transports: list[str]) -> Chart:
    """One chart of ``members``: a transport keeps its colour in every chart (``transports``:
    the report's, in order); best-effort lines are dashed, several subscribers' drawn wider."""
    suffix = ""
    name = "throughput"
    if key is not None:
        suffix = f" ({key[0]}, {key[1]} subscriber{'s' if key[1] != 1 else ''})"
        name = f"throughput-{key[0]}-{key[1]}"
    sizes = sorted({size for line in members for size, _ in line.sizes()})
    every = -(-len(sizes) // MAX_TICKS) if sizes else 1
    chart = Chart(f"Delivered payload bytes/s vs payload size{suffix} ({DIAMOND} saturation)",
                  Axis("payload size", log=True,
                       ticks=[(float(s), format_bytes(s)) for s in sizes[::every]]),
                  Axis("delivered payload bytes/s", log=True, fmt=rate_text), name)
    for line in members:
        col = colour(transports.index(line.transport))
        sizes = line.sizes()
        chart.line([(float(s), v) for s, v in sizes], col, line.name,
                   dash=line.delivery == "best-effort", width=2.8 if line.subscribers > 1 else 1.8)
        for size, value in sizes:
            chart.marker(float(size), value, col,
                         f"{line.name} {format_bytes(size)}: {rate_text(value)}")
        saturated = line.saturation()
        if saturated is not None:
            size, value, best = saturated
            chart.marker(float(size), value, col,
                         f"{line.name} saturates at {format_bytes(size)}: {rate_text(value)} "
                         f"(best {rate_text(best)})", shape="diamond")
        chart.legend(line.name, col)
    return chart


def markdown(runs: Sequence[Run]) -> str:
    """The throughput points as a Markdown table, and each line's saturation point ("" without
    throughput points)."""
    found = lines(runs)
    if not found:
        return ""
    by_name = {line.name: line for line in found}
    table = ["", "| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    table += ["| " + " | ".join(c.replace("|", "\\|") for c in _cells(row, by_name)) + " |"
              for row in rows(runs)]
    table += ["", f"Saturation (the smallest size within {100 * SATURATION:.0f} % of the line's "
                  "best delivered bytes/s):", ""]
    for line in found:
        saturated = line.saturation()
        if saturated is not None:
            size, value, best = saturated
            table.append(f"- {line.name}: {format_bytes(size)} ({rate_text(value)}; best "
                         f"{rate_text(best)})")
    return "\n".join(table) + "\n"
