"""A bridge-crossing probe in raw MQTT 3.1.1 (QoS 0): subscribe at one broker, publish at the
other, wait for the message. The mosquitto bridge is healthy when a probe crosses each way."""

import secrets
import socket
import time

TIMEOUT_S = 0.5


def _length(n: int) -> bytes:
    """MQTT's variable-length 'remaining length'."""
    out = bytearray()
    while True:
        byte, n = n % 128, n // 128
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _string(text: str) -> bytes:
    raw = text.encode()
    return len(raw).to_bytes(2, "big") + raw


def _packet(kind: int, body: bytes) -> bytes:
    return bytes([kind]) + _length(len(body)) + body


def _connect(host: str, port: int) -> socket.socket:
    sock = socket.create_connection((host, port), timeout=TIMEOUT_S)
    sock.settimeout(TIMEOUT_S)
    client = f"mwperf-probe-{secrets.token_hex(4)}"
    sock.sendall(_packet(0x10, _string("MQTT") + bytes([4, 0x02, 0, 0]) + _string(client)))
    if _read(sock)[0] != 0x20:
        sock.close()
        raise OSError("no CONNACK")
    return sock


def _read(sock: socket.socket) -> tuple[int, bytes]:
    """One packet: (first byte, body)."""
    head = sock.recv(1)
    if not head:
        raise OSError("connection closed")
    size, shift = 0, 0
    while True:
        byte = sock.recv(1)[0]
        size |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            break
    body = b""
    while len(body) < size:
        chunk = sock.recv(size - len(body))
        if not chunk:
            raise OSError("connection closed")
        body += chunk
    return head[0], body


def crosses(source: tuple[str, int], target: tuple[str, int], topic: str,
            wait_s: float = TIMEOUT_S) -> bool:
    """True when a message published at ``source`` on ``topic`` arrives at ``target``."""
    payload = secrets.token_bytes(8)
    try:
        with _connect(*target) as sub, _connect(*source) as pub:
            sub.sendall(_packet(0x82, (1).to_bytes(2, "big") + _string(topic) + b"\x00"))
            if _read(sub)[0] != 0x90:
                return False
            deadline = time.monotonic() + wait_s
            while time.monotonic() < deadline:
                pub.sendall(_packet(0x30, _string(topic) + payload))
                try:
                    kind, body = _read(sub)
                except TimeoutError:
                    continue
                if kind >> 4 == 3 and body.endswith(payload):
                    return True
    except OSError:
        return False
    return False
