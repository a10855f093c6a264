"""The per-message rows a graph node writes with ``--layers-out`` (crates/mwperf-agent/src/
layers/rows.rs, ``NODE_COLUMNS``): the point's columns (layers_rows.py) with which side of the
node the row is (``pub``: a publisher or a chain stage's outlet sent it, ``sub``: a subscription
received it), the publishing node's index (the publishers of one topic — a graph's copies —
each number their messages from 0, so topic and seq alone do not name a message) and, for a
stage's message, the one it received and published on. Times are on the graph's reference
clock in ns; an empty cell is a moment the node did not see."""

from dataclasses import dataclass, field
from pathlib import Path

from ..layers_rows import Row, RowsError, csv_lines, numbers

__all__ = ["COLUMNS", "Key", "NodeRows", "RowsError", "read_node_rows"]

COLUMNS = ("side", "topic", "source", "seq", "intended", "write", "send_first", "send_last",
           "recv_first", "recv_last", "take", "callback", "cause_topic", "cause_source",
           "cause_seq")

Key = tuple[int, int, int]
"""(topic id, publishing node's index, seq): one message of a graph"""


@dataclass
class NodeRows:
    """One node's rows by message."""

    sent: dict[Key, Row] = field(default_factory=dict)
    """what its publishers and stages sent"""
    received: dict[Key, Row] = field(default_factory=dict)
    """what its subscriptions received (the first delivery of a duplicated message)"""
    cause: dict[Key, Key] = field(default_factory=dict)
    """a stage's message -> the message it was published on"""


def read_node_rows(path: Path) -> NodeRows:
    """The rows of ``path``; RowsError says what is wrong with the file."""
    out = NodeRows()
    for number, cells in csv_lines(path, COLUMNS):
        if len(cells) != len(COLUMNS) or cells[0] not in ("pub", "sub"):
            raise RowsError(f"{path.name} line {number}: expected {len(COLUMNS)} cells "
                            f"starting with pub or sub, got {','.join(cells)!r}")
        values = numbers(path, number, cells[1:])
        topic, source, seq = values[0], values[1], values[2]
        if topic is None or source is None or seq is None:
            raise RowsError(f"{path.name} line {number}: no topic, source or seq")
        key = (topic, source, seq)
        row = Row(topic, seq, *values[3:11])
        if cells[0] == "sub":
            out.received.setdefault(key, row)
            continue
        out.sent.setdefault(key, row)
        c_topic, c_source, c_seq = values[11:14]
        if c_topic is not None and c_source is not None and c_seq is not None:
            out.cause[key] = (c_topic, c_source, c_seq)
    return out
