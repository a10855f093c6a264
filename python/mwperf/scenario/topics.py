"""Multi-topic points ranked by topic: which topic waits longest (seed 001: with a single
executor topic 3 waits for the callbacks of topics 1 and 2). Points with several subscribers
are ranked the same way by subscriber (seed 000: a TCPROS publisher serves its subscribers in
turn, so the last one waits longest).

Per point (repetitions combined by their median), the topics ordered by response-time p50,
fastest first (topics without any reply last), with each topic's p50, p99 and loss, and the
slowest topic's p50 as a multiple of the fastest's.
"""

import statistics
from dataclasses import dataclass

from ..durations import format_ns
from ..topicnames import label as topic_label
from .observe import Observation


@dataclass(frozen=True)
class TopicStat:
    """One topic of a point."""

    topic: int
    p50_ns: float | None
    """None: no reply was received on this topic (e.g. 100 % loss)"""
    p99_ns: float | None
    loss_pct: float | None
    name: str | None = None
    """the topic's name (a replay's recorded topic); None for a subscriber"""


@dataclass(frozen=True)
class TopicRanking:
    """A multi-topic point's topics, fastest p50 first."""

    point: str
    topics: tuple[TopicStat, ...]
    unit: str = "topic"
    """what is ranked: ``topic`` or ``subscriber``"""

    @property
    def spread(self) -> float | None:
        """Slowest p50 / fastest p50 (of the topics with replies)."""
        measured = [t.p50_ns for t in self.topics if t.p50_ns is not None]
        return measured[-1] / measured[0] if len(measured) > 1 and measured[0] else None

    def line(self) -> str:
        """'udp ... topics=3: topic 0 p50 2.2 ms p99 ... loss 0.00% < topic 1 ... (x2.8)'."""
        parts = [(topic_label(t.name, t.topic) if t.name else f"{self.unit} {t.topic}") + " "
                 + (f"p50 {format_ns(t.p50_ns)} p99 {format_ns(t.p99_ns)}"
                    if t.p50_ns is not None else "no replies")
                 + (f" loss {t.loss_pct:.2f}%" if t.loss_pct is not None else "")
                 for t in self.topics]
        spread = f" (slowest/fastest p50 x{self.spread:.2f})" if self.spread else ""
        return f"{self.point}: " + " < ".join(parts) + spread

    def to_dict(self) -> dict[str, object]:
        """As JSON."""
        return {"point": self.point, "spread": self.spread,
                f"{self.unit}s": [t.__dict__ for t in self.topics]}


def rank_subscribers(observations: list[Observation]) -> list[TopicRanking]:
    """A ranking for every point measured with several subscribers."""
    return rank_topics(observations, "per_subscriber", "subscriber")


def rank_topics(observations: list[Observation], attr: str = "per_topic",
                unit: str = "topic") -> list[TopicRanking]:
    """A ranking for every point measured with several topics (``attr``: or subscribers)."""
    by_point: dict[str, list[Observation]] = {}
    for obs in observations:
        if len(getattr(obs, attr)) > 1:
            name = obs.point.label().split(" (rep ")[0]
            by_point.setdefault(name, []).append(obs)
    rankings = []
    for name, found in by_point.items():
        per_topic: dict[int, list[dict[str, object]]] = {}
        for obs in found:
            for topic in getattr(obs, attr):
                per_topic.setdefault(int(topic["topic"]), []).append(topic)
        stats = [_stat(topic, measured) for topic, measured in per_topic.items()]
        rankings.append(TopicRanking(name, tuple(sorted(
            stats, key=lambda s: (s.p50_ns is None, s.p50_ns or 0.0, s.topic))), unit))
    return rankings


def _stat(topic: int, measured: list[dict[str, object]]) -> TopicStat:
    def loss(m: dict[str, object]) -> float | None:
        acc = m["accounting"]
        return 100 * acc["lost"] / acc["sent"] if acc["sent"] else None  # type: ignore[index]

    losses = [x for x in (loss(m) for m in measured) if x is not None]
    replied = [m["response"] for m in measured
               if m["response"]["p50_ns"] is not None]  # type: ignore[index]
    names = [str(m["name"]) for m in measured if m.get("name")]
    return TopicStat(topic,
                     statistics.median(r["p50_ns"] for r in replied) if replied else None,  # type: ignore
                     statistics.median(r["p99_ns"] for r in replied) if replied else None,  # type: ignore
                     statistics.median(losses) if losses else None, names[0] if names else None)
