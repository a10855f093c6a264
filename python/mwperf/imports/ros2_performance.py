"""Importing iRobot ros2-performance results: ``latency_all.txt`` (one line per subscription:
node, topic, size[b], received[#], late[#], too_late[#], lost[#], mean[us], sd[us], min[us],
max[us], freq[hz]; then the same columns for publishers) and ``latency_total.txt`` (one
header line and one line of totals: received[#], mean[us], late[#], late[%], too_late[#],
too_late[%], lost[#], lost[%]), as written by stat_logger.cpp of
github.com/irobot-ros/ros2-performance (read for the layout and units; no code taken).

Columns are whitespace separated and located by their header names, so a column added or
moved by another version is tolerated; a missing required one is an error naming the file
and line. One import = one point: the subscriptions become its topics, the totals (or the
subscriptions pooled, when only latency_all.txt exists) its measurement.
"""

from pathlib import Path

from ..errors import UsageError
from .summary import Imported, Interval, config, pooled

ALL_NAME = "latency_all.txt"
TOTAL_NAME = "latency_total.txt"
SUBSCRIPTIONS = "subscriptions and clients stats:"
PUBLISHERS = "publishers stats:"
NEEDED_ALL = ("topic", "size[b]", "received[#]", "lost[#]", "mean[us]")
NEEDED_TOTAL = ("received[#]", "mean[us]", "lost[#]")


def files_of(target: Path) -> tuple[Path | None, Path | None]:
    """(latency_all.txt, latency_total.txt) of a folder, or the one file given."""
    if target.is_dir():
        found = (target / ALL_NAME, target / TOTAL_NAME)
        if not any(p.is_file() for p in found):
            raise UsageError(f"{target}: holds neither {ALL_NAME} nor {TOTAL_NAME}")
        return tuple(p if p.is_file() else None for p in found)  # type: ignore[return-value]
    if not target.is_file():
        raise UsageError(f"{target}: no such file or folder")
    if target.name == TOTAL_NAME or _first_word(target) == "received[#]":
        return None, target
    return target, None


def load(target: Path) -> Imported:
    """The ros2-performance results in ``target`` (a folder or one of the two files)."""
    all_file, total_file = files_of(target)
    topics = _subscriptions(all_file) if all_file else []
    if total_file:
        intervals = [_totals(total_file)]
    else:
        intervals = [pooled([t for _, t in topics])]
    rows = _sizes(all_file)
    sizes = {size for size, _, _ in rows}
    freqs = {freq for _, _, freq in rows}
    size = sizes.pop() if len(sizes) == 1 else None
    cfg = config(transport="ros2-performance", mode="oneway",
                 rate=freqs.pop() if len(freqs) == 1 else 0.0,
                 payload=f"{size}B" if size is not None else "mixed",
                 payload_bytes=size or 0, topics=max(1, len(topics)))
    shown = target.name if target.is_file() else f"{target.name}/"
    return Imported({"tool": "ros2-performance", "format": "txt", "file": shown}, cfg,
                    intervals, topics=[(name, t) for name, t in topics])


def _subscriptions(path: Path) -> list[tuple[str, Interval]]:
    found = []
    for number, header, cells in _section_rows(path, SUBSCRIPTIONS):
        record = dict(zip(header, cells))
        try:
            mean = float(record["mean[us]"]) * 1e3
            sd = float(record["sd[us]"]) * 1e3 if "sd[us]" in record else None
            n = int(record["received[#]"])
            found.append((f"{record.get('node', '?')}/{record['topic']}", Interval(
                received=n, lost=int(record["lost[#]"]),
                sent=n + int(record["lost[#]"]),
                min_ns=float(record["min[us]"]) * 1e3 if "min[us]" in record else None,
                max_ns=float(record["max[us]"]) * 1e3 if "max[us]" in record else None,
                mean_ns=mean, m2_ns2=sd * sd * n if sd is not None else None)))
        except (KeyError, ValueError) as exc:
            raise UsageError(f"{path}:{number}: cannot read this line ({exc})") from None
    if not found:
        raise UsageError(f"{path}: no subscription lines (expected a '{SUBSCRIPTIONS[:-1]}' "
                         f"section with the columns {', '.join(NEEDED_ALL)})")
    return found


def _sizes(path: Path | None) -> list[tuple[int, int, float]]:
    """(size, received, frequency) of each subscription line."""
    if path is None:
        return []
    rows = []
    for _, header, cells in _section_rows(path, SUBSCRIPTIONS):
        record = dict(zip(header, cells))
        rows.append((int(record["size[b]"]), int(record["received[#]"]),
                     float(record.get("freq[hz]", 0) or 0)))
    return rows


def _section_rows(path: Path, section: str) -> list[tuple[int, list[str], list[str]]]:
    """(line number, header, cells) of each data line in ``section`` of latency_all.txt."""
    lines = _read(path).splitlines()
    rows: list[tuple[int, list[str], list[str]]] = []
    inside = False
    header: list[str] = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            continue
        if text.lower() in (SUBSCRIPTIONS, PUBLISHERS):
            inside, header = text.lower() == section, []
            continue
        if not inside:
            continue
        if not header:
            header = text.split()
            missing = [c for c in NEEDED_ALL if c not in header]
            if missing:
                raise UsageError(f"{path}:{number}: header lacks {', '.join(missing)} (found: "
                                 f"{' '.join(header)})")
            continue
        cells = text.split()
        if len(cells) != len(header):
            raise UsageError(f"{path}:{number}: {len(cells)} values, the header has "
                             f"{len(header)}")
        rows.append((number, header, cells))
    return rows


def _totals(path: Path) -> Interval:
    lines = [line for line in _read(path).splitlines() if line.strip()]
    if len(lines) < 2:
        raise UsageError(f"{path}: expected a header line and a line of totals")
    header, cells = lines[0].split(), lines[1].split()
    missing = [c for c in NEEDED_TOTAL if c not in header]
    if missing:
        raise UsageError(f"{path}:1: header lacks {', '.join(missing)} (found: "
                         f"{' '.join(header)})")
    if len(cells) != len(header):
        raise UsageError(f"{path}:2: {len(cells)} values, the header has {len(header)}")
    record = dict(zip(header, cells))
    try:
        n, lost = int(record["received[#]"]), int(record["lost[#]"])
        return Interval(received=n, lost=lost, sent=n + lost,
                        mean_ns=float(record["mean[us]"]) * 1e3)
    except ValueError as exc:
        raise UsageError(f"{path}:2: not a number ({exc})") from None


def _read(path: Path) -> str:
    try:
        return path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {exc}") from None


def _first_word(path: Path) -> str:
    text = _read(path).split()
    return text[0] if text else ""
