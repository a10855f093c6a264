"""``mwperf run --replay``: turn a recording into the agent's per-topic traces.

One streaming pass over the recording (rosbags): topic i's messages go to ``DIR/topic-<i>.trace``
(format in crates/mwperf-agent/src/replay.rs: magic, the topic's median period, then
``<offset_ns u64><len u32><bytes>`` records), offsets measured from the window's start and divided
by ``--replay-rate``. Memory: one message at a time plus 16 bytes per message for the periods.
"""

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..durations import parse_duration
from ..errors import UsageError
from .info import nearest_rank
from .recording import check_topics, detect_format, messages, open_reader, topics_of

MAGIC = b"MWPTRC01"


@dataclass(frozen=True)
class ReplaySpec:
    """What to replay: the recording, its topics (None = all), speed, window (ns, of the
    recording's time from its first message; length None = to the end)."""

    path: Path
    topics: list[str] | None = None
    rate: float = 1.0
    window_start_ns: int = 0
    window_length_ns: int | None = None
    loop: bool = False
    """--replay-loop: start over at the end until --duration"""


@dataclass
class ReplayPlan:
    """What the traces hold: per topic its name, type, count, largest message and period."""

    topics: list[str] = field(default_factory=list)
    msgtypes: list[str] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    max_bytes: list[int] = field(default_factory=list)
    periods_ns: list[int] = field(default_factory=list)
    duration_ns: int = 0

    def loop_span_ns(self) -> int:
        """One pass of --replay-loop: the replayed length plus the fastest topic's period (so a
        pass's first message does not land on the previous pass's last)."""
        periods = [p for p in self.periods_ns if p > 0]
        return self.duration_ns + (min(periods) if periods else 1_000_000)

    def config(self, spec: ReplaySpec) -> dict[str, Any]:
        """The result's config.replay section."""
        return {"file": str(spec.path), "rate": spec.rate, "window_start_ns": spec.window_start_ns,
                "window_length_ns": spec.window_length_ns, "topics": self.topics,
                "msgtypes": self.msgtypes, "counts": self.counts, "duration_ns": self.duration_ns,
                **({"loop_span_ns": self.loop_span_ns()} if spec.loop else {})}


def parse_spec(options: dict[str, Any]) -> ReplaySpec | None:
    """The --replay* flags checked (UsageError naming the flag); None without --replay."""
    given = {k: options.get(k) for k in ("replay", "replay_topics", "replay_rate",
                                         "replay_window", "replay_loop")}
    if options.get("replay") is None:
        extra = [k for k, v in given.items() if v is not None]
        if extra:
            raise UsageError(f"--{extra[0].replace('_', '-')}: only with --replay FILE")
        return None
    path = Path(str(options["replay"]))
    detect_format(path)  # missing, unknown: one line naming the file
    rate = 1.0
    if given["replay_rate"] is not None:
        try:
            rate = float(str(given["replay_rate"]))
        except ValueError:
            rate = float("nan")
        if not rate > 0 or rate == float("inf"):
            raise UsageError(f"--replay-rate: must be a number > 0 (1 = recorded speed, 2 = twice "
                             f"as fast), got {given['replay_rate']!r}")
    start, length = 0, None
    if given["replay_window"] is not None:
        start, length = _window(str(given["replay_window"]))
    topics = None
    if given["replay_topics"]:
        topics = [t.strip() for t in str(given["replay_topics"]).split(",") if t.strip()]
    for flag in ("count", "min_samples", "rate", "payload", "topics"):
        if options.get(flag) is not None:
            raise UsageError(f"--{flag.replace('_', '-')}: not with --replay (the recording sets "
                             f"the messages, their times, sizes and topics); use "
                             f"--replay-rate/--replay-window")
    loop = bool(given["replay_loop"])
    if loop and options.get("duration") is None:
        raise UsageError("--replay-loop: give --duration (how long to keep replaying the "
                         "recording)")
    if not loop and options.get("duration") is not None:
        raise UsageError("--duration: with --replay the recording's length sets it; add "
                         "--replay-loop to replay it for --duration")
    return ReplaySpec(path, topics, rate, start, length, loop)


def _window(text: str) -> tuple[int, int | None]:
    start_text, _, length_text = text.partition("+")
    try:
        start = parse_duration(start_text) if start_text.strip() else 0
        length = parse_duration(length_text) if length_text.strip() else None
    except ValueError:
        raise UsageError(f"--replay-window: expected START+LENGTH such as 10s+60s (or START+ "
                         f"for the rest), got {text!r}") from None
    if length == 0:
        raise UsageError(f"--replay-window: the length must be > 0, got {text!r}")
    return start, length


def write_traces(spec: ReplaySpec, folder: Path) -> ReplayPlan:
    """Write folder/topic-<i>.trace for each replayed topic; UsageError when the window holds no
    message of some topic."""
    plan = ReplayPlan()
    with open_reader(spec.path) as reader:
        topics = check_topics(spec.path, topics_of(reader), spec.topics, flag="--replay-topics")
        index = {t.name: i for i, t in enumerate(topics)}
        plan.topics, plan.msgtypes = [t.name for t in topics], [t.msgtype for t in topics]
        files = [(folder / f"topic-{i}.trace").open("wb") for i in range(len(topics))]
        last = [None] * len(topics)  # type: list[int | None]
        gaps: list[list[int]] = [[] for _ in topics]
        plan.counts, plan.max_bytes = [0] * len(topics), [0] * len(topics)
        first = None
        try:
            for f in files:
                f.write(MAGIC + struct.pack("<Q", 0))  # the period is filled in at the end
            for topic, log_time, raw in messages(spec.path, reader, topics):
                first = log_time if first is None else first
                rel = log_time - first - spec.window_start_ns
                if rel < 0:
                    continue
                if spec.window_length_ns is not None and rel >= spec.window_length_ns:
                    break
                i = index[topic]
                offset = int(rel / spec.rate)
                files[i].write(struct.pack("<QI", offset, len(raw)))
                files[i].write(raw)
                if last[i] is not None:
                    gaps[i].append(offset - last[i])
                last[i] = offset
                plan.counts[i] += 1
                plan.max_bytes[i] = max(plan.max_bytes[i], len(raw))
                plan.duration_ns = max(plan.duration_ns, offset)
            for i, f in enumerate(files):
                plan.periods_ns.append(nearest_rank(sorted(gaps[i]), 0.5) if gaps[i] else 0)
                f.seek(len(MAGIC))
                f.write(struct.pack("<Q", plan.periods_ns[i]))
        finally:
            for f in files:
                f.close()
    empty = [name for name, n in zip(plan.topics, plan.counts) if n == 0]
    if empty:
        raise UsageError(f"--replay-window: no message of {empty[0]} in the window of "
                         f"{spec.path}")
    return plan
