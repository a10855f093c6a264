"""mwperf's 56-byte wire header in Python, for tests that put mwperf messages on a socket
without an agent (crates/mwperf-core/src/wire.rs is the reference; keep the two alike)."""

import struct

MASK = (1 << 64) - 1
LAYOUT = struct.Struct("<4sBBHIHHQQQQI")
"""magic, version, flags, header_len, run_id, topic, reserved, seq, intended, sent, peer_rx,
payload_len: the first 52 bytes; the checksum follows"""
HEADER_LEN = 56
FLAG_WARMUP = 0x01
FLAG_FIN = 0x02
FLAG_ECHO = 0x04


def checksum(first52: bytes) -> int:
    """wire.rs ``checksum``: a multiply-xor chain over 8-byte words, folded to 32 bits."""
    h = 0xCBF29CE484222325
    whole = len(first52) - len(first52) % 8
    for at in range(0, whole, 8):
        h = ((h ^ int.from_bytes(first52[at:at + 8], "little")) * 0x100000001B3) & MASK
        h = ((h << 29) | (h >> 35)) & MASK
    tail = int.from_bytes(first52[whole:].ljust(8, b"\0"), "little")
    h = ((h ^ tail) * 0x9E3779B97F4A7C15) & MASK
    return (h ^ (h >> 32)) & 0xFFFFFFFF


def encode(run_id: int, topic: int, seq: int, flags: int = 0, payload: bytes = b"",
           intended: int = 0, sent: int = 0) -> bytes:
    """A whole message: the header (checksum included; ``intended``/``sent``: the sender's
    CLOCK_MONOTONIC ns) and ``payload``."""
    first = LAYOUT.pack(b"MWPF", 1, flags, HEADER_LEN, run_id, topic, 0, seq, intended, sent, 0,
                        len(payload))
    return first + struct.pack("<I", checksum(first)) + payload


def pattern(seq: int, length: int) -> bytes:
    """wire.rs ``fill_payload``: the payload of message ``seq`` that the receiver checks."""
    words = []
    for k in range((length + 7) // 8):
        w = ((((seq ^ 0x6D77_7065_7266_0001) * 0x9E37_79B9_7F4A_7C15) & MASK)
             ^ ((k * 0xD6E8_FEB8_6659_FD93) & MASK))
        words.append(w.to_bytes(8, "little"))
    return b"".join(words)[:length]
