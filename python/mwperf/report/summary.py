"""The report's summary table: one row per point, numbered (#) across the report, with the
numbers behind every plot. The same rows feed the HTML table and ``--format markdown|csv|json``
(raw values in CSV/JSON: nanoseconds, percent, KiB; formatted for people in Markdown/HTML,
where a p99.9 on fewer than 10 samples beyond it is marked ``*`` with a footnote: ``THIN_NOTE``)."""

import csv
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..durations import format_ns
from ..roles import ONE_WAY
from ..sizes import format_bytes
from ..show.table import THIN_MARK, THIN_NOTE, first_message_ns, format_rate, thin_p999
from .data import Point, Run
from .labels import run_tags

Formatter = Callable[[Any], str]


def _num(fmt: str) -> Formatter:
    return lambda v: "\u2014" if v is None else format(v, fmt)


def _bytes(v: Any) -> str:
    return "\u2014" if v is None else format_bytes(int(v))


def _kib(v: Any) -> str:
    return "\u2014" if v is None else format_bytes(int(v) * 1024)


@dataclass(frozen=True)
class Column:
    """A summary column: its key (CSV/JSON name), heading, and how people see a value."""

    key: str
    heading: str
    show: Formatter = lambda v: "\u2014" if v is None else str(v)


COLUMNS = (
    Column("number", "#"), Column("run", "run"), Column("point_id", "point"),
    Column("status", "status"), Column("transport", "transport"), Column("mode", "mode"),
    Column("rate", "rate", lambda v: "\u2014" if v is None else format_rate(float(v))),
    Column("payload", "payload"), Column("payload_bytes", "payload bytes", _bytes),
    Column("message_bytes", "msg bytes", _bytes),
    Column("topics", "topics"), Column("executor", "executor"),
    Column("busy_loop_ns", "busy loop", format_ns), Column("reliability", "reliability"),
    Column("count", "count"),
    Column("p50_ns", "p50", format_ns), Column("p90_ns", "p90", format_ns),
    Column("p99_ns", "p99", format_ns), Column("p999_ns", "p99.9", format_ns),
    Column("max_ns", "max", format_ns), Column("stddev_ns", "std dev", format_ns),
    Column("jitter_ns", "jitter", format_ns), Column("loss_pct", "loss %", _num(".3g")),
    Column("msgs_per_s", "msgs/s", _num(".4g")),
    Column("mib_per_s", "MiB/s", _num(".4g")),
    Column("sender_cpu_pct", "sender CPU %", _num(".3g")),
    Column("server_cpu_pct", "echo/sub CPU %", _num(".3g")),
    Column("agents_rss_kib", "agents RSS", _kib), Column("daemons_cpu_s", "daemons CPU s",
                                                          _num(".3g")),
    Column("daemons_rss_kib", "daemons RSS", _kib),
    Column("first_message_ns", "first message", format_ns), Column("warnings", "warnings"),
)


def numbering(runs: Sequence[Run]) -> dict[str, int]:
    """point id -> its number (#) in the report, counting across runs from 1."""
    return {p.point_id: i for i, p in enumerate((p for r in runs for p in r.points), start=1)}


def rows(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """The summary rows of ``runs`` (raw values, keyed by Column.key)."""
    numbers = numbering(runs)
    tags = run_tags(runs)
    return [_row(point, numbers[point.point_id], tags[run.run_id] or run.run_id)
            for run in runs for point in run.points]


def _row(point: Point, number: int, run: str) -> dict[str, Any]:
    sender, server = ("pub", "sub") if point.get("mode") in ONE_WAY else ("ping", "pong")
    rss = [point.get(f"{role}_rss_kib") for role in (sender, server)]
    return {
        "number": number, "run": run, "point_id": point.point_id, "status": point.status,
        "transport": point.get("transport"), "mode": point.get("mode"), "rate": point.get("rate"),
        "payload": point.get("payload"), "payload_bytes": point.get("payload_bytes"),
        "message_bytes": point.message_bytes,
        "topics": point.get("topics"), "executor": point.get("executor"),
        "busy_loop_ns": point.get("busy_loop_ns"), "reliability": point.get("reliability"),
        "count": point.get("latency_count"), "p50_ns": point.get("latency_p50_ns"),
        "p90_ns": point.get("latency_p90_ns"), "p99_ns": point.get("latency_p99_ns"),
        "p999_ns": point.get("latency_p999_ns"), "max_ns": point.get("latency_max_ns"),
        "stddev_ns": point.get("latency_stddev_ns"), "jitter_ns": point.get("jitter_rfc3550_ns"),
        "loss_pct": point.get("loss_pct"), "msgs_per_s": point.get("msgs_per_s"),
        "mib_per_s": (point.message_bytes_per_s / 2**20
                      if point.message_bytes_per_s is not None else None),
        "sender_cpu_pct": point.get(f"{sender}_cpu_pct"),
        "server_cpu_pct": point.get(f"{server}_cpu_pct"),
        "agents_rss_kib": sum(r for r in rss if r is not None) if any(rss) else None,
        "daemons_cpu_s": point.get("daemons_cpu_s"),
        "daemons_rss_kib": point.get("daemons_rss_kib"),
        "first_message_ns": _first_message(point), "warnings": len(point.warnings),
    }


def _first_message(point: Point) -> int | None:
    """Time to the first message: opening the endpoints, discovery (peer matched) and the first
    reply (show/table.py's first_message_ns, from the catalogue's columns)."""
    return first_message_ns(None if point.get("discovery_matched_ns") is None else {
        "open_ns": point.get("discovery_open_ns"), "matched_ns": point.get("discovery_matched_ns"),
        "first_reply_ns": point.get("discovery_first_reply_ns")})


def shown(row: dict[str, Any]) -> list[str]:
    """A row's cells as people read them (a thin p99.9 marked ``*``)."""
    return [column.show(row[column.key])
            + THIN_MARK * (column.key == "p999_ns" and thin_p999(row["count"], row["p999_ns"]))
            for column in COLUMNS]


def marked(table: list[dict[str, Any]]) -> bool:
    """Whether a row's p99.9 is marked (the table then needs its footnote, ``THIN_NOTE``)."""
    return any(thin_p999(row["count"], row["p999_ns"]) for row in table)


def render(table: list[dict[str, Any]], fmt: str) -> str:
    """The summary rows as Markdown, CSV or JSON text."""
    if fmt == "json":
        return json.dumps(table, indent=2, ensure_ascii=False) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, [c.key for c in COLUMNS], lineterminator="\n")
        writer.writeheader()
        writer.writerows(table)
        return out.getvalue()
    lines = ["| " + " | ".join(c.heading for c in COLUMNS) + " |",
             "|" + "|".join("---" for _ in COLUMNS) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in shown(row)) + " |"
              for row in table]
    return "\n".join(lines) + "\n" + (f"\n\\{THIN_NOTE}\n" if marked(table) else "")
