"""``mwperf bag info``: what a recording holds, per topic: type, count, sizes (p50/max), rate,
inter-arrival gaps (p50/p99/max) and gaps longer than ``GAP_FACTOR`` x the median period.

One streaming pass over the messages; per topic it keeps only the sizes and arrival times
(16 bytes a message), never the payloads, so a large recording's memory stays small.
Times are the recording's log times (when the recorder received each message).
"""

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..durations import format_ns
from ..sizes import format_bytes
from .recording import (Topic, check_topics, detect_format, header_stamp, messages, open_reader,
                        stamp_offsets, topics_of)

GAP_FACTOR = 3.0


@dataclass
class TopicInfo:
    """The summary of one topic; times in ns, sizes in bytes, rate in messages per second."""

    topic: str
    msgtype: str
    count: int
    bytes: int
    size_p50: int
    size_max: int
    rate_hz: float | None
    gap_p50_ns: int | None
    gap_p99_ns: int | None
    gap_max_ns: int | None
    gaps: int
    first_offset_ns: int
    last_offset_ns: int
    age_p50_ns: int | None = None
    """record time - header.stamp (types with a std_msgs/Header), p50 and max"""
    age_max_ns: int | None = None


@dataclass
class RecordingInfo:
    """The summary of a recording: its format, span and topics."""

    path: str
    format: str
    start_ns: int
    duration_ns: int
    count: int
    bytes: int
    topics: list[TopicInfo]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"gap_factor": GAP_FACTOR}


def nearest_rank(sorted_values: list[int], q: float) -> int:
    """The q-quantile by the nearest-rank method (a value that occurred, no interpolation)."""
    index = max(0, min(len(sorted_values) - 1, int(-(-q * len(sorted_values) // 1)) - 1))
    return sorted_values[index]


def summarise(name: str, msgtype: str, times: list[int], sizes: list[int],
              start_ns: int) -> TopicInfo:
    """One topic's summary from its log times (ns, in order) and message sizes."""
    gaps = sorted(b - a for a, b in zip(times, times[1:]))
    sizes_sorted = sorted(sizes)
    span = times[-1] - times[0] if len(times) > 1 else 0
    median_gap = nearest_rank(gaps, 0.5) if gaps else None
    return TopicInfo(
        topic=name, msgtype=msgtype, count=len(times), bytes=sum(sizes),
        size_p50=nearest_rank(sizes_sorted, 0.5) if sizes else 0,
        size_max=sizes_sorted[-1] if sizes else 0,
        rate_hz=(len(times) - 1) * 1e9 / span if span > 0 else None,
        gap_p50_ns=median_gap,
        gap_p99_ns=nearest_rank(gaps, 0.99) if gaps else None,
        gap_max_ns=gaps[-1] if gaps else None,
        gaps=sum(1 for g in gaps if median_gap and g > GAP_FACTOR * median_gap),
        first_offset_ns=times[0] - start_ns if times else 0,
        last_offset_ns=times[-1] - start_ns if times else 0)


def inspect(path: Path, wanted: list[str] | None = None) -> RecordingInfo:
    """Read ``path`` once and summarise it (only the ``wanted`` topics when given)."""
    kind = detect_format(path)
    with open_reader(path) as reader:
        topics: list[Topic] = check_topics(path, topics_of(reader), wanted, flag="--topics")
        times: dict[str, list[int]] = {t.name: [] for t in topics}
        sizes: dict[str, list[int]] = {t.name: [] for t in topics}
        ages: dict[str, list[int]] = {t.name: [] for t in topics}
        layouts = stamp_offsets(reader)
        for topic, log_time, raw in messages(path, reader, topics):
            times[topic].append(log_time)
            sizes[topic].append(len(raw))
            if topic in layouts:
                stamp = header_stamp(raw, layouts[topic])
                if stamp:
                    ages[topic].append(log_time - stamp)
        start = min((v[0] for v in times.values() if v), default=reader.start_time)
        end = max((v[-1] for v in times.values() if v), default=start)
    infos = [summarise(t.name, t.msgtype, times[t.name], sizes[t.name], start) for t in topics]
    for info in infos:
        age = sorted(ages[info.topic])
        if age:
            info.age_p50_ns, info.age_max_ns = nearest_rank(age, 0.5), age[-1]
    return RecordingInfo(path=str(path), format=kind, start_ns=start, duration_ns=end - start,
                         count=sum(i.count for i in infos), bytes=sum(i.bytes for i in infos),
                         topics=infos)


def render(info: RecordingInfo) -> str:
    """The human summary: one header line, then one table row per topic."""
    seconds = info.duration_ns / 1e9
    throughput = f", {format_bytes(int(info.bytes / seconds))}/s" if seconds > 0 else ""
    lines = [f"{info.path}: {info.format}, {format_ns(info.duration_ns)}, {info.count} messages, "
             f"{format_bytes(info.bytes)}{throughput}",
             ""]
    header = ["topic", "type", "count", "size p50", "size max", "rate", "gap p50", "gap p99",
              "gap max", f"gaps >{GAP_FACTOR:g}x", "age p50", "age max"]
    rows = [header] + [[
        t.topic, t.msgtype, str(t.count), format_bytes(t.size_p50), format_bytes(t.size_max),
        f"{t.rate_hz:.2f} Hz" if t.rate_hz else "-", format_ns(t.gap_p50_ns),
        format_ns(t.gap_p99_ns), format_ns(t.gap_max_ns), str(t.gaps), format_ns(t.age_p50_ns),
        format_ns(t.age_max_ns)] for t in info.topics]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for row in rows:
        lines.append("  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(row, widths))).rstrip())
    lines.append("")
    lines.append(f"Times are the recording's log times; a gap is an inter-arrival time longer "
                 f"than {GAP_FACTOR:g}x the topic's median; age = log time - header.stamp (the "
                 f"recorder's clock against the publisher's).")
    return "\n".join(lines) + "\n"
