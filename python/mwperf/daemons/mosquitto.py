"""The MQTT broker: Debian's mosquitto on a free loopback port, with a generated configuration."""

import re
import socket
from pathlib import Path

from .base import DaemonProcess, DaemonSpec, free_port, package_version

PROGRAM = "/usr/sbin/mosquitto"
PACKAGE = "mosquitto"
CONNECT_TIMEOUT_S = 0.5
LOOPBACK = "127.0.0.1"
# MQTT 3.1.1 CONNECT: protocol "MQTT" level 4, clean session, keep-alive 0, client id "mwperf-ready"
_CONNECT = bytes([0x10, 24, 0, 4]) + b"MQTT" + bytes([4, 0x02, 0, 0, 0, 12]) + b"mwperf-ready"
_CONNACK_OK = bytes([0x20, 0x02, 0x00, 0x00])
_DISCONNECT = bytes([0xE0, 0x00])


def config_text(port: int, max_queued: int, host: str = LOOPBACK) -> str:
    """The broker configuration: listening on ``host`` only (loopback, or its emulated host's
    address), anonymous, no persistence, Nagle off.

    ``max_queued`` (0 = unlimited) is the per-client queue, i.e. the run's history depth.
    """
    return "\n".join([
        f"listener {port} {host}",
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


def spec(folder: Path, max_queued: int, host: str = LOOPBACK,
         netns: Path | None = None) -> DaemonSpec:
    """mosquitto on a new free port of ``host`` (in namespace ``netns``, an emulated host's);
    its address is ``<host>:<port>``."""
    port = free_port()
    conf = folder / "daemons" / "mosquitto.conf"

    def ready(daemon: DaemonProcess) -> bool:
        if connack(port, host):
            daemon.address = f"{host}:{port}"
            return True
        return False

    return DaemonSpec(name="mosquitto", argv=[PROGRAM, "-c", str(conf)], package=PACKAGE,
                      ready=ready, version=_version, netns=netns,
                      files={str(conf): config_text(port, max_queued, host)})


def connack(port: int, host: str = LOOPBACK) -> bool:
    """True when a raw MQTT CONNECT to ``host``:``port`` is accepted (CONNACK, code 0)."""
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S) as sock:
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
