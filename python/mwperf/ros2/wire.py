"""mwperf's 56-byte wire header and payload pattern in Python, for the rclpy node
(rclpy_node.py) that publishes and receives mwperf messages inside ROS 2 messages.
crates/mwperf-core/src/wire.rs is the reference (layout, checksum, pattern); this module keeps
to it and tests/test_ros2_wire.py checks the two agree through the agent. Standard library
only: the ROS 2 distribution's own Python runs it."""

import struct
from dataclasses import dataclass

MASK = (1 << 64) - 1
MAGIC = b"MWPF"
VERSION = 1
HEADER_LEN = 56
LAYOUT = struct.Struct("<4sBBHIHHQQQQI")
"""magic, version, flags, header_len, run_id, topic, reserved, seq, intended_ns, sent_ns,
peer_rx_ns, payload_len: the first 52 bytes; the checksum follows"""
FLAG_WARMUP = 0x01
FLAG_FIN = 0x02
FLAG_ECHO = 0x04
FLAG_PROBE = 0x08
_PATTERN_SEQ = 0x6D77_7065_7266_0001
_PATTERN_MUL = 0x9E37_79B9_7F4A_7C15
_PATTERN_K = 0xD6E8_FEB8_6659_FD93


@dataclass
class Header:
    flags: int
    run_id: int
    topic: int
    seq: int
    intended_ns: int
    sent_ns: int
    peer_rx_ns: int
    payload_len: int


def checksum(first52: bytes) -> int:
    """wire.rs ``checksum``: a multiply-xor chain over 8-byte words, folded to 32 bits."""
    h = 0xCBF29CE484222325
    whole = len(first52) - len(first52) % 8
    for at in range(0, whole, 8):
        h = ((h ^ int.from_bytes(first52[at:at + 8], "little")) * 0x100000001B3) & MASK
        h = ((h << 29) | (h >> 35)) & MASK
    tail = int.from_bytes(first52[whole:].ljust(8, b"\0"), "little")
    h = ((h ^ tail) * _PATTERN_MUL) & MASK
    return (h ^ (h >> 32)) & 0xFFFFFFFF


def encode(h: Header) -> bytes:
    """The header's 56 bytes, checksum included."""
    first = LAYOUT.pack(MAGIC, VERSION, h.flags, HEADER_LEN, h.run_id, h.topic, 0, h.seq,
                        h.intended_ns, h.sent_ns, h.peer_rx_ns, h.payload_len)
    return first + struct.pack("<I", checksum(first))


def decode(msg: bytes) -> Header | None:
    """The header of a whole, intact mwperf message; None for anything else (the agent's
    collector counts and classifies what this passes over: this only decides what a chain
    stage forwards)."""
    if len(msg) < HEADER_LEN or msg[:4] != MAGIC:
        return None
    fields = LAYOUT.unpack_from(msg)
    if fields[1] != VERSION or fields[3] != HEADER_LEN or \
            struct.unpack_from("<I", msg, 52)[0] != checksum(msg[:52]):
        return None
    h = Header(fields[2], fields[4], fields[5], *fields[7:12])
    return h if len(msg) == HEADER_LEN + h.payload_len else None


class Pattern:
    """wire.rs ``fill_payload`` for one payload size: word k of message seq is
    (seq ^ C1) * C2 ^ k * C3 (mod 2^64). The k part is computed once; a message's payload is
    then one XOR of two integers as long as the payload (CPython does it in C), so the
    callback's cost does not grow with Python loops over the payload."""

    def __init__(self, length: int) -> None:
        self.length = length
        self.words = (length + 7) // 8
        self.k_part = int.from_bytes(b"".join(((k * _PATTERN_K) & MASK).to_bytes(8, "little")
                                              for k in range(self.words)), "little")

    def payload(self, seq: int) -> bytes:
        word = (((seq ^ _PATTERN_SEQ) * _PATTERN_MUL) & MASK).to_bytes(8, "little")
        mixed = int.from_bytes(word * self.words, "little") ^ self.k_part
        return mixed.to_bytes(self.words * 8, "little")[:self.length]
