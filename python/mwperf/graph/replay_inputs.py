"""``mwperf run --graph G --replay FILE [--replay-topics A,B]``: a recording drives the graph's
publishers (ros2_benchmark's playback node, e.g. into a node under test): each timer publisher
whose topic the recording has (those of ``--replay-topics`` only, when given) publishes that
topic as recorded, its messages' sizes and log times, looped, exactly as the graph file's
``replay: {recording: FILE, topic: SAME}`` on it would (parse.py; its rate and payload give
way). Other publishers keep their rates. A recording topic of another name: the graph file's
``replay:`` key names it."""

from dataclasses import replace
from pathlib import Path

from ..errors import UsageError
from .model import Graph, Publisher
from .sizes import replayed

FLAG = "--replay"
NOT_WITH = ("replay_rate", "replay_window", "replay_loop")
"""the stream replay's options a graph has no use for: its replayed publishers loop for the
run's --duration, and --rate-scale scales their times"""


def refuse(options: dict[str, object]) -> None:
    """The stream replay's options beside ``--graph``: a usage error naming the flag."""
    for name in NOT_WITH:
        if options.get(name) not in (None, False, "", ()):
            flag = "--" + name.replace("_", "-")
            raise UsageError(f"{flag}: not with --graph (a graph's replayed publishers loop for "
                             "the run's --duration; --rate-scale scales their times)")
    if options.get("replay_topics") and not options.get("replay"):
        raise UsageError("--replay-topics: only with --replay FILE")


def replay_inputs(graph: Graph, recording: str, topics_text: str | None
                  ) -> tuple[Graph, tuple[str, ...]]:
    """``graph`` with its publishers of the recording's topics replaying them, and those
    topics."""
    wanted = [t.strip() for t in (topics_text or "").split(",") if t.strip()] or None
    timers = {p.topic for n in graph.nodes for p in n.publishers}
    if wanted:
        missing = [t for t in wanted if t not in timers]
        if missing:
            raise UsageError(f"--replay-topics: '{missing[0]}' is no publisher's topic in graph "
                             f"'{graph.name}' (its publishers: {', '.join(sorted(timers))})")
        recorded = set(_topics(recording))
        absent = [t for t in wanted if t not in recorded]
        if absent:
            raise UsageError(f"--replay-topics: '{absent[0]}' is not in recording "
                             f"'{recording}' (it has: {', '.join(sorted(recorded))})")
        chosen = set(wanted)
    else:
        recorded = set(_topics(recording))
        chosen = timers & recorded
        if not chosen:
            raise UsageError(f"{FLAG} {recording}: none of graph '{graph.name}''s publishers' "
                             f"topics ({', '.join(sorted(timers)) or 'none'}) is in the "
                             f"recording (it has: {', '.join(sorted(recorded))}); name a "
                             "recording topic in the graph file (replay: {recording: FILE, "
                             "topic: NAME})")
    found: dict[str, tuple[tuple[int, ...], tuple[int, ...], int]] = {}
    for topic in sorted(chosen):
        found[topic] = replayed(recording, topic, FLAG)
    nodes = []
    for node in graph.nodes:
        publishers = tuple(_replaying(p, found[p.topic]) if p.topic in found else p
                           for p in node.publishers)
        nodes.append(replace(node, publishers=publishers))
    return replace(graph, nodes=tuple(nodes)), tuple(sorted(found))


def _replaying(p: Publisher, trace: tuple[tuple[int, ...], tuple[int, ...], int]) -> Publisher:
    sizes, offsets, period_ns = trace
    return Publisher(p.topic, period_ns, max(sizes), p.qos, sizes, offsets)


def _topics(recording: str) -> list[str]:
    """The topics recording ``recording`` (a file, or ``example``) has."""
    from ..bags.example import example_bag
    from ..bags.recording import open_reader, topics_of

    path = example_bag() if recording == "example" else Path(recording)
    if not path.exists():
        raise UsageError(f"{FLAG}: recording '{recording}' does not exist (a .bag, an .mcap, a "
                         "rosbag2 folder, or 'example')")
    try:
        with open_reader(path) as reader:
            return [t.name for t in topics_of(reader)]
    except UsageError:
        raise
    except Exception as exc:  # a foreign file: say which and why, in one line
        raise UsageError(f"{FLAG}: cannot read recording '{recording}': {exc}") from None
