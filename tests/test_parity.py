"""Parity of parts × run kinds (issue 38, step 1 of docs/one-path-plan.md): every part's flag
tried on one point of every run kind, built as `mwperf run` builds it (config.build_point; a
replay through bags/replay_point), and the answer (accepted, or refused with a usage error
before anything starts) held to the table below. The rows are the parts of the registry
(parts.PARTS): a part added without a row fails here, and so does a cell the code no longer
matches. docs/one-path-plan.md carries the same table between its parity markers (checked
below; `python3 tests/test_parity.py` rewrites it). What a part refuses later, when the point
runs (its ``check``: e.g. clock sync with a service's client), is not in this table."""

import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from mwperf.bags import replay_point
from mwperf.config import build_point
from mwperf.errors import UsageError
from mwperf.parts import PARTS

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "one-path-plan.md"
START, END = "<!-- parity:start -->", "<!-- parity:end -->"
BAG = str(Path(__file__).parent / "fixtures" / "bags" / "small.bag")

KINDS = {"RT": {}, "1W": {"mode": "oneway", "subscribers": "3"}, "SV": {"mode": "service"},
         "TP": {"mode": "throughput", "rate": "0"}, "TOP": {"topics": "3"},
         "RP": {"replay": BAG}, "G": {"graph": "sierra_nevada"}}
"""the run kinds: round trip, one way with 3 subscribers, service, throughput, several topics,
a replay, a graph"""
RESTART_TARGET = {"RT": "pong", "1W": "sub", "SV": "server", "TP": "sub", "TOP": "pong",
                  "RP": "pong", "G": "montreal"}
FLAGS: dict[str, Any] = {
    "wire bytes": {"wire_bytes": True}, "count allocs": {"count_allocs": True},
    "alloc sites": {"alloc_sites": True}, "profile": {"profile": True},
    "restarts": lambda kind: {"restart": (f"{RESTART_TARGET[kind]}@1s",)},
    "resources": {"gates": ("p99<=1s",)}, "layers": {"layers": True},
    "clock sync": {"clock_sync": True}, "bridge": {"bridge": "direct"},
    "samples": {"samples": True}, "keep awake": {"keep_awake": True},
    "secure": {"secure": "wireguard", "link": "delay=1ms"}}
"""each part's flag (a function of the run kind where its value depends on it)"""
NOT_A_FLAG = {"ros2": "the ros2 transport's environment",
              "fastdds-distro": "the fastdds transport's --opt distro (its environment)", "calls": "the service run kind",
              "sizes": "every point", "resilience": "every point",
              "throughput": "the throughput run kind",
              "rclpy sub": "the ros2 transport's --opt client=rclpy on a one-way stream"}
"""parts no flag turns on: a transport, a run kind, or every point"""

Y, R = "yes", "refused"
TABLE = {
    "wire bytes": (Y, Y, Y, Y, Y, Y, Y),
    "count allocs": (Y, Y, Y, Y, Y, Y, Y),
    "alloc sites": (Y, Y, Y, Y, Y, Y, Y),
    "profile": (Y, Y, Y, Y, Y, Y, Y),
    "restarts": (Y, R, R, R, Y, R, Y),
    "resources": (Y, Y, Y, Y, Y, Y, Y),
    "layers": (Y, Y, R, R, Y, Y, Y),
    "clock sync": (Y, Y, Y, Y, Y, Y, Y),
    "bridge": (Y, Y, R, Y, Y, Y, Y),
    "samples": (Y, R, Y, Y, Y, Y, Y),
    "keep awake": (Y, Y, Y, Y, Y, Y, Y),
    "secure": (Y, Y, Y, Y, Y, Y, Y),
}


class Catalogue:
    def transports(self) -> list[str]:
        return ["udp", "tcp", "uds"]

    def payloads(self) -> dict[str, int]:
        return {"Array1k": 1024, "Array32": 32}


def answer(part: str, kind: str) -> str:
    flag = FLAGS[part]
    options = {"transport": "udp", **KINDS[kind], **(flag(kind) if callable(flag) else flag)}
    try:
        with tempfile.TemporaryDirectory() as folder:
            if options.get("replay"):
                replay_point.build(options, replay_point.written_into(Path(folder)),
                                   lambda o: build_point(o, Catalogue))
            else:
                build_point(options, Catalogue)
    except UsageError:
        return R
    return Y


def rendered() -> str:
    head = "| part | " + " | ".join(KINDS) + " |"
    rule = "|---" * (len(KINDS) + 1) + "|"
    rows = [f"| {part} | " + " | ".join(cells) + " |" for part, cells in TABLE.items()]
    return "\n".join([START, head, rule, *rows, END])


def test_every_part_has_a_row_or_a_reason() -> None:
    names = {p.name for p in PARTS}
    assert names == set(TABLE) | set(NOT_A_FLAG), (
        f"parts without a parity row: {sorted(names - set(TABLE) - set(NOT_A_FLAG))}; "
        f"rows without a part: {sorted(set(TABLE) | set(NOT_A_FLAG) - names)}")
    assert set(TABLE) == set(FLAGS)


@pytest.mark.parametrize("part", list(TABLE))
def test_each_cell_matches_the_code(part: str) -> None:
    found = tuple(answer(part, kind) for kind in KINDS)
    assert found == TABLE[part], dict(zip(KINDS, found))


def test_the_plans_table_is_this_one() -> None:
    text = DOC.read_text(encoding="utf-8")
    block = text[text.index(START):text.index(END) + len(END)]
    assert block == rendered(), "docs/one-path-plan.md's parity table is stale: run " \
                                "'python3 tests/test_parity.py'"


if __name__ == "__main__":  # rewrite the plan's table from TABLE
    text = DOC.read_text(encoding="utf-8")
    if START in text:
        text = text[:text.index(START)] + rendered() + text[text.index(END) + len(END):]
    else:
        sys.exit(f"{DOC}: no {START} marker")
    DOC.write_text(text, encoding="utf-8")
