"""WireGuard's configuration protocol, as wireguard-go serves it on a unix socket
(wireguard.com/xplatform): a request is ``set=1`` or ``get=1`` followed by ``key=value`` lines
and an empty line; the reply ends with ``errno=N`` and an empty line. Keys travel as 64 hex
digits (not the base64 the ``wg`` tool shows). Used by security/wireguard.py to configure and
read the tunnel without the ``wg`` tool."""

import os
import socket
from dataclasses import dataclass
from pathlib import Path

from ..errors import RunError

REPLY_LIMIT = 1 << 20
"""a reply longer than this is not wireguard-go's"""


@dataclass(frozen=True)
class Peer:
    """One peer of a device: its public key, where it is reached and what it may send."""

    public_key: bytes
    endpoint: str
    """``address:port`` on the link"""
    allowed_ip: str
    """its tunnel address with prefix, e.g. ``10.1.2.3/32``"""


def set_request(private_key: bytes, listen_port: int, peers: list[Peer]) -> bytes:
    """The ``set=1`` request giving a device its key, port and exactly ``peers``."""
    for key in (private_key, *(p.public_key for p in peers)):
        if len(key) != 32:
            raise ValueError(f"a WireGuard key is 32 bytes, got {len(key)}")
    lines = ["set=1", f"private_key={private_key.hex()}", f"listen_port={listen_port}",
             "replace_peers=true"]
    for peer in peers:
        lines += [f"public_key={peer.public_key.hex()}", f"endpoint={peer.endpoint}",
                  "replace_allowed_ips=true", f"allowed_ip={peer.allowed_ip}"]
    return ("\n".join(lines) + "\n\n").encode()


GET_REQUEST = b"get=1\n\n"


def parse_reply(text: str) -> list[dict[str, str]]:
    """A reply's sections: the device's keys first, then one dict per peer (each starts at
    ``public_key``); RunError when its ``errno`` is not 0 or it has none."""
    sections: list[dict[str, str]] = [{}]
    errno = None
    for line in text.splitlines():
        if not line:
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise RunError(f"WireGuard configuration reply: not key=value: {line!r}")
        if key == "errno":
            errno = value
        elif key == "public_key":
            sections.append({key: value})
        else:
            sections[-1][key] = value
    if errno != "0":
        raise RunError(f"WireGuard configuration refused (errno={errno})" if errno is not None
                       else "WireGuard configuration reply without errno")
    return sections


def exchange(path: Path, request: bytes, timeout_s: float) -> list[dict[str, str]]:
    """Send ``request`` to the socket at ``path`` and return its parsed reply. The path is
    reached through an open directory (``/proc/self/fd/N/``) so that a deep scratch folder
    does not exceed a unix socket address's 108 bytes."""

    folder = None
    try:
        folder = os.open(path.parent, os.O_PATH | os.O_DIRECTORY)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout_s)
            sock.connect(f"/proc/self/fd/{folder}/{path.name}")
            sock.sendall(request)
            reply = b""
            while not (reply.endswith(b"\n\n") and b"errno=" in reply):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                reply += chunk
                if len(reply) > REPLY_LIMIT:
                    raise RunError(f"{path}: a WireGuard reply longer than {REPLY_LIMIT} bytes")
    except OSError as exc:
        raise RunError(f"{path}: cannot talk to wireguard-go: {exc}") from None
    finally:
        if folder is not None:
            os.close(folder)
    return parse_reply(reply.decode(errors="replace"))
