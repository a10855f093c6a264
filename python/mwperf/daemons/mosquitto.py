"""The MQTT broker: Debian's mosquitto on a free loopback port, with a generated configuration."""

import re
import socket
from pathlib import Path

from .base import DaemonProcess, DaemonSpec, free_port, package_version

PROGRAM = "/usr/sbin/mosquitto"
PACKAGE = "mosquitto"
CONNECT_TIMEOUT_S = 0.5
# MQTT 3.1.1 CONNECT: protocol "MQTT" level 4, clean session, keep-alive 0, client id "mwperf-ready"
_CONNECT = bytes([0x10, 24, 0, 4]) + b"MQTT" + bytes([4, 0x02, 0, 0, 0, 12]) + b"mwperf-ready"
_CONNACK_OK = bytes([0x20, 0x02, 0x00, 0x00])
_DISCONNECT = bytes([0xE0, 0x00])


def config_text(port: int, max_queued: int) -> str:
    """The broker configuration: loopback only, anonymous, no persistence, Nagle off.

    ``max_queued`` (0 = unlimited) is the per-client queue, i.e. the run's history depth.
    """
    return "\n".join([
        f"listener {port} 127.0.0.1",
        "allow_anonymous true",
        "persistence false",
        "log_dest stderr",
        "log_type error",
        "log_type warning",
        "log_type notice",
        "set_tcp_nodelay true",  # otherwise the broker's own sockets keep Nagle on
        f"max_queued_messages {max_queued}",
        "max_inflight_messages 20",
        "",
    ])


def spec(folder: Path, max_queued: int) -> DaemonSpec:
    """mosquitto on a new free port; its address is ``127.0.0.1:<port>``."""
    port = free_port()
    conf = folder / "daemons" / "mosquitto.conf"

    def ready(daemon: DaemonProcess) -> bool:
        if connack(port):
            daemon.address = f"127.0.0.1:{port}"
            return True
        return False

    return DaemonSpec(name="mosquitto", argv=[PROGRAM, "-c", str(conf)], package=PACKAGE,
                      ready=ready, version=_version, files={str(conf): config_text(port, max_queued)})


def connack(port: int) -> bool:
    """True when a raw MQTT CONNECT to 127.0.0.1:``port`` is accepted (CONNACK, code 0)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=CONNECT_TIMEOUT_S) as sock:
            sock.settimeout(CONNECT_TIMEOUT_S)
            sock.sendall(_CONNECT)
            answer = b""
            while len(answer) < 4:
                chunk = sock.recv(4 - len(answer))
                if not chunk:
                    return False
                answer += chunk
            sock.sendall(_DISCONNECT)
            return answer == _CONNACK_OK
    except OSError:
        return False


def _version(daemon: DaemonProcess) -> str | None:
    found = re.search(r"mosquitto version (\S+)", daemon.log_text())
    return found.group(1) if found else package_version(PACKAGE)
