"""A publisher's message sizes: fixed (``payload: 4KiB``), a distribution (``payload: {uniform:
[1KiB, 300KiB]}``), a list cycled through (``payload: {sizes: [64, 1500, 64]}``), or a
recording's topic (``payload: {recording: FILE|example, topic: /scan}``: that topic's message
sizes in their recorded order, cycled). A varying size is a sequence the publisher's agent
cycles through, message k taking entry k mod its length (warm-up included), the same in every
run: a distribution is drawn once from a generator seeded by the node and the topic."""

import random
import zlib
from pathlib import Path

from ..errors import UsageError

UNIFORM_DRAWS = 1000
"""a distribution's sequence: this many draws, cycled"""
MAX_SEQUENCE = 100_000
"""a recording's topic: at most this many sizes (its first ones)"""


def uniform(node: str, topic: str, low: int, high: int) -> tuple[int, ...]:
    """UNIFORM_DRAWS sizes uniform in [low, high], seeded by node and topic."""
    rng = random.Random(zlib.crc32(f"{node}\0{topic}".encode()))
    return tuple(rng.randint(low, high) for _ in range(UNIFORM_DRAWS))


def recorded(spec: str, topic: str, what: str) -> tuple[int, ...]:
    """The message sizes of ``topic`` in recording ``spec`` (a file, or ``example``), in order."""
    return tuple(size for _, size in _recorded(spec, topic, what))


def replayed(spec: str, topic: str, what: str) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """A recording's topic to replay (a graph publisher's ``replay:``): its messages' sizes and
    log times from the first (ns), and its mean interval (span / (count - 1)), the period
    after which the times loop; a topic of fewer than two messages is refused."""
    found = _recorded(spec, topic, what)
    if len(found) < 2:
        raise UsageError(f"{what}: topic '{topic}' of recording '{spec}' has {len(found)} "
                         "message(s); replaying times needs at least two")
    first = found[0][0]
    offsets = tuple(t - first for t, _ in found)
    if any(b < a for a, b in zip(offsets, offsets[1:])):
        raise UsageError(f"{what}: topic '{topic}' of recording '{spec}' is not in log-time "
                         "order")
    period = max(1, round(offsets[-1] / (len(offsets) - 1)))
    return tuple(size for _, size in found), offsets, period


def _recorded(spec: str, topic: str, what: str) -> list[tuple[int, int]]:
    """(log time ns, size) of ``topic``'s messages in recording ``spec``, in order."""
    from ..bags.recording import check_topics, messages, open_reader, topics_of
    from ..bags.example import example_bag

    path = example_bag() if spec == "example" else Path(spec)
    if not path.exists():
        raise UsageError(f"{what}: recording '{spec}' does not exist (a .bag, an .mcap, a "
                         "rosbag2 folder, or 'example')")
    sizes: list[tuple[int, int]] = []
    try:
        with open_reader(path) as reader:
            wanted = check_topics(path, topics_of(reader), [topic], flag=f"{what}: topic")
            for _, log_time, raw in messages(path, reader, wanted):
                sizes.append((log_time, len(raw)))
                if len(sizes) >= MAX_SEQUENCE:
                    break
    except UsageError:
        raise
    except Exception as exc:  # a foreign file: say which and why, in one line
        raise UsageError(f"{what}: cannot read recording '{spec}': {exc}") from None
    if not sizes:
        raise UsageError(f"{what}: topic '{topic}' of recording '{spec}' has no messages")
    return sizes
