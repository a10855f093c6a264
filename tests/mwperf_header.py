"""mwperf's 56-byte wire header in Python, for tests that put mwperf messages on a socket
without an agent: the test-side names of python/mwperf/ros2/wire.py (the product's Python copy
of crates/mwperf-core/src/wire.rs, which tests/test_graph_rclpy.py checks against the agent).
Standard library only, like wire.py: the ROS 2 peers' Python imports it too."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python" / "mwperf" / "ros2"))
import wire  # noqa: E402  (a sibling module of the rclpy node, not a package)

MASK = wire.MASK
LAYOUT = wire.LAYOUT
"""magic, version, flags, header_len, run_id, topic, reserved, seq, intended, sent, peer_rx,
payload_len: the first 52 bytes; the checksum follows"""
HEADER_LEN = wire.HEADER_LEN
FLAG_WARMUP = wire.FLAG_WARMUP
FLAG_FIN = wire.FLAG_FIN
FLAG_ECHO = wire.FLAG_ECHO
checksum = wire.checksum


def encode(run_id: int, topic: int, seq: int, flags: int = 0, payload: bytes = b"",
           intended: int = 0, sent: int = 0) -> bytes:
    """A whole message: the header (checksum included; ``intended``/``sent``: the sender's
    CLOCK_MONOTONIC ns) and ``payload``."""
    return wire.encode(wire.Header(flags, run_id, topic, seq, intended, sent, 0,
                                   len(payload))) + payload


def pattern(seq: int, length: int) -> bytes:
    """wire.rs ``fill_payload``: the payload of message ``seq`` that the receiver checks."""
    return wire.Pattern(length).payload(seq)
