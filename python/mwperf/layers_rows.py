"""The per-message rows an agent writes with ``--layers-out`` (crates/mwperf-agent/src/layers/
rows.rs): its own stamps of each measured message and the system calls that carried it, all on
its host's CLOCK_MONOTONIC in ns; an empty cell is a moment this agent did not see."""

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

COLUMNS = ("topic", "seq", "intended", "write", "send_first", "send_last", "recv_first",
           "recv_last", "take", "callback", "rcl_publish", "rmw_publish", "rmw_take", "rcl_take")


@dataclass(frozen=True)
class Row:
    """One measured message as one agent handled it."""

    topic: int
    seq: int
    intended: int | None
    """when the schedule wanted it sent (ping, pub)"""
    write: int | None
    """the agent called the middleware's write (a pong: for the echo)"""
    send_first: int | None
    """entry of the first system call carrying its header (what this agent sent)"""
    send_last: int | None
    """entry of the call that completed its bytes"""
    recv_first: int | None
    """return of the first receive system call carrying its header (what this agent received)"""
    recv_last: int | None
    """return of the receive call that completed its bytes (None: split over datagrams)"""
    take: int | None
    """the agent's receive returned the sample"""
    callback: int | None
    """the callback started (after waiting for the executor)"""
    rcl_publish: int | None = None
    """ROS 2 only (ROS 2's tracepoints, libmwperf_layers.so's ros2.rs): rcl's publish of what
    this agent sent was entered"""
    rmw_publish: int | None = None
    """... the RMW handed it to DDS (before the DataWriter's write)"""
    rmw_take: int | None = None
    """... the RMW took what this agent received from DDS"""
    rcl_take: int | None = None
    """... rcl's take was about to return it"""


class RowsError(ValueError):
    """A rows file that is not what the agent writes."""


def read_rows(path: Path) -> dict[tuple[int, int], Row]:
    """The rows of ``path`` by (topic, seq), the first of a duplicated message kept (a sub
    that got a message twice records the first delivery, as its statistics do)."""
    out: dict[tuple[int, int], Row] = {}
    for number, cells in csv_lines(path, COLUMNS):
        if len(cells) != len(COLUMNS):
            raise RowsError(f"{path.name} line {number}: {len(cells)} cells, "
                            f"expected {len(COLUMNS)}")
        values = numbers(path, number, cells)
        topic, seq = values[0], values[1]
        if topic is None or seq is None:
            raise RowsError(f"{path.name} line {number}: no topic or seq")
        out.setdefault((topic, seq), Row(topic, seq, *values[2:]))
    return out


def csv_lines(path: Path, columns: tuple[str, ...]) -> Iterator[tuple[int, list[str]]]:
    """(line number, cells) of every row of the CSV at ``path`` after its header, which must be
    ``columns`` (RowsError otherwise)."""
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        head = next(reader, None)
        if head is None or tuple(head) != columns:
            raise RowsError(f"{path.name}: header {head!r}, expected {','.join(columns)}")
        yield from enumerate(reader, start=2)


def numbers(path: Path, number: int, cells: list[str]) -> list[int | None]:
    """The cells as integers (an empty cell: None); RowsError naming the line otherwise."""
    try:
        return [int(c) if c else None for c in cells]
    except ValueError as exc:
        raise RowsError(f"{path.name} line {number}: {exc}") from None
