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
    from ..bags.recording import check_topics, messages, open_reader, topics_of
    from ..bags.example import example_bag

    path = example_bag() if spec == "example" else Path(spec)
    if not path.exists():
        raise UsageError(f"{what}: recording '{spec}' does not exist (a .bag, an .mcap, a "
                         "rosbag2 folder, or 'example')")
    sizes: list[int] = []
    try:
        with open_reader(path) as reader:
            wanted = check_topics(path, topics_of(reader), [topic], flag=f"{what}: topic")
            for _, _, raw in messages(path, reader, wanted):
                sizes.append(len(raw))
                if len(sizes) >= MAX_SEQUENCE:
                    break
    except UsageError:
        raise
    except Exception as exc:  # a foreign file: say which and why, in one line
        raise UsageError(f"{what}: cannot read recording '{spec}': {exc}") from None
    if not sizes:
        raise UsageError(f"{what}: topic '{topic}' of recording '{spec}' has no messages")
    return tuple(sizes)
