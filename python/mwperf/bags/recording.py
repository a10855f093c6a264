"""Open a recording (ROS 1 .bag, ROS 2 .mcap, rosbag2 folder) with the maintained ``rosbags``
reader, which needs no ROS installed; and stream its messages as (topic, offset, raw bytes).

Every failure to open is a UsageError naming the path and what is wrong: missing, unknown
format (judged by the file's magic bytes, not its name), truncated or unreadable; a topic asked
for that the recording does not hold is named with the topics it does hold.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError

BAG_MAGIC = b"#ROSBAG V2.0\n"
MCAP_MAGIC = b"\x89MCAP0\r\n"


@dataclass(frozen=True)
class Topic:
    """One recorded topic: its name, message type (ROS 2 spelling, pkg/msg/Name) and count."""

    name: str
    msgtype: str
    count: int


def detect_format(path: Path) -> str:
    """Return 'ros1-bag', 'mcap' or 'rosbag2' for ``path``; raise UsageError otherwise."""
    if not path.exists():
        raise UsageError(f"{path}: no such file or folder")
    if path.is_dir():
        if (path / "metadata.yaml").is_file():
            return "rosbag2"
        raise UsageError(f"{path}: a folder without metadata.yaml is not a rosbag2 recording")
    with path.open("rb") as f:
        head = f.read(len(BAG_MAGIC))
    if head.startswith(MCAP_MAGIC):
        return "mcap"
    if head == BAG_MAGIC:
        return "ros1-bag"
    raise UsageError(f"{path}: unknown format (expected a ROS 1 .bag, an .mcap file or a rosbag2 "
                     f"folder; the file starts with {head[:8]!r})")


@contextmanager
def open_reader(path: Path):  # type: ignore[no-untyped-def]
    """Yield an opened ``rosbags`` AnyReader for ``path`` (checked with detect_format)."""
    from rosbags.highlevel import AnyReader  # imported here: 'mwperf --help' stays fast

    kind = detect_format(path)
    try:
        reader = AnyReader([path])
        reader.open()
    except Exception as exc:  # rosbags raises its own error types per format
        raise UsageError(f"{path}: cannot read this {kind} recording ({_short(exc)}); "
                         f"is it truncated or still being written?") from None
    try:
        yield reader
    finally:
        reader.close()


def topics_of(reader) -> list[Topic]:  # type: ignore[no-untyped-def]
    """The recording's topics in name order (connections of one topic merged)."""
    merged: dict[str, Topic] = {}
    for conn in reader.connections:
        old = merged.get(conn.topic)
        count = conn.msgcount + (old.count if old else 0)
        merged[conn.topic] = Topic(conn.topic, conn.msgtype, count)
    return [merged[name] for name in sorted(merged)]


def check_topics(path: Path, available: list[Topic], wanted: list[str] | None,
                 flag: str = "--replay-topics") -> list[Topic]:
    """The topics ``wanted`` (all when None); UsageError naming the first one not recorded."""
    if not wanted:
        return available
    by_name = {t.name: t for t in available}
    for name in wanted:
        if name not in by_name:
            raise UsageError(f"{flag}: topic {name!r} is not in {path} (it has: "
                             f"{', '.join(by_name) or 'no topics'})")
    return [by_name[name] for name in wanted]


def messages(path: Path, reader, topics: list[Topic]) -> Iterator[tuple[str, int, bytes]]:  # type: ignore[no-untyped-def]
    """Stream (topic, log time ns, raw serialized bytes) in log-time order, one at a time."""
    wanted = {t.name for t in topics}
    conns = [c for c in reader.connections if c.topic in wanted]
    try:
        for conn, log_time, raw in reader.messages(connections=conns):
            yield conn.topic, log_time, bytes(raw)
    except UsageError:
        raise
    except Exception as exc:
        raise UsageError(f"{path}: the recording is damaged part way through ({_short(exc)}); "
                         f"is it truncated?") from None


def stamp_offsets(reader) -> dict[str, tuple[int, str]]:  # type: ignore[no-untyped-def]
    """Per topic whose type begins with a std_msgs/Header: where header.stamp (sec u32/i32,
    nanosec u32) sits in the raw bytes and its byte order. ROS 1: after the u32 seq, little
    endian. ROS 2 CDR: after the 4-byte encapsulation header, whose second byte says the order."""
    found: dict[str, tuple[int, str]] = {}
    for conn in reader.connections:
        fields = reader.typestore.fielddefs.get(conn.msgtype, ((), ()))[1]
        if not fields or fields[0][1][1:] != ("std_msgs/msg/Header",):
            continue
        found[conn.topic] = (4, "ros1" if type(conn.ext).__name__ == "ConnectionExtRosbag1"
                             else "cdr")
    return found


def header_stamp(raw: bytes, layout: tuple[int, str]) -> int | None:
    """header.stamp in ns from a message's raw bytes laid out as ``layout`` (stamp_offsets)."""
    offset, kind = layout
    if len(raw) < offset + 8:
        return None
    order = "little" if kind == "ros1" or raw[1] & 1 else "big"
    sec = int.from_bytes(raw[offset:offset + 4], order)
    nsec = int.from_bytes(raw[offset + 4:offset + 8], order)
    return sec * 1_000_000_000 + nsec


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."
