"""The MQTT broker: Debian's mosquitto on a free loopback port, with a generated configuration;
under ``--secure tls|mtls`` its one listener is TLS (no plain one is left to connect to), with
the run's server certificate, and under ``mtls`` it demands a client certificate the run's CA
signed (security/tls.py)."""

import os
import re
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ssl

    from ..security.tls import TlsIdentity

from .base import DaemonProcess, DaemonSpec, free_port, package_version

PROGRAM = "/usr/sbin/mosquitto"
PACKAGE = "mosquitto"
CONNECT_TIMEOUT_S = 0.5
LOOPBACK = "127.0.0.1"
# MQTT 3.1.1 CONNECT: protocol "MQTT" level 4, clean session, keep-alive 0, client id "mwperf-ready"
_CONNECT = bytes([0x10, 24, 0, 4]) + b"MQTT" + bytes([4, 0x02, 0, 0, 0, 12]) + b"mwperf-ready"
_CONNACK_OK = bytes([0x20, 0x02, 0x00, 0x00])
_DISCONNECT = bytes([0xE0, 0x00])


@dataclass(frozen=True)
class BrokerTls:
    """The broker's TLS: its identity (the run's CA, its certificate and key; under mTLS also
    what mwperf's readiness check presents) and whether clients must present theirs."""

    identity: "TlsIdentity"
    require_certificate: bool


def config_text(port: int, max_queued: int, host: str = LOOPBACK,
                tls: BrokerTls | None = None) -> str:
    """The broker configuration: listening on ``host`` only (loopback, or its emulated host's
    address), anonymous, no persistence, Nagle off; with ``tls`` that listener speaks TLS only.

    ``max_queued`` (0 = unlimited) is the per-client queue, i.e. the run's history depth.
    """
    secured = [] if tls is None else [
        # these belong to the listener line above them
        f"cafile {tls.identity.ca}",
        f"certfile {tls.identity.cert}",
        f"keyfile {tls.identity.key}",
        "tls_version tlsv1.2",  # the least it takes: it negotiates 1.3 with rustls and Python
        f"require_certificate {'true' if tls.require_certificate else 'false'}",
        # mosquitto 2 drops root's privileges after reading this file and before it loads the
        # certificates: as user mosquitto it could not read the key in the point's 0700 scratch
        # folder
        *(["user root"] if os.geteuid() == 0 else []),
    ]
    return "\n".join([
        f"listener {port} {host}",
        *secured,
        "allow_anonymous true",  # under mTLS the certificate is the authentication
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
         netns: Path | None = None, tls: BrokerTls | None = None) -> DaemonSpec:
    """mosquitto on a new free port of ``host`` (in namespace ``netns``, an emulated host's);
    its address is ``<host>:<port>`` (a TLS listener's with ``tls``)."""
    port = free_port()
    conf = folder / "daemons" / "mosquitto.conf"

    def ready(daemon: DaemonProcess) -> bool:
        if connack(port, host, tls):
            daemon.address = f"{host}:{port}"
            return True
        return False

    return DaemonSpec(name="mosquitto", argv=[PROGRAM, "-c", str(conf)], package=PACKAGE,
                      ready=ready, version=_version, netns=netns,
                      files={str(conf): config_text(port, max_queued, host, tls)})


def connack(port: int, host: str = LOOPBACK, tls: BrokerTls | None = None) -> bool:
    """True when a raw MQTT CONNECT to ``host``:``port`` is accepted (CONNACK, code 0); with
    ``tls`` over TLS, the broker's certificate checked against the run's CA and ``host`` (under
    mTLS presenting the broker's own identity, which serves both ends)."""
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S) as raw:
            sock = raw if tls is None else client_context(tls).wrap_socket(
                raw, server_hostname=host)
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


def client_context(tls: BrokerTls) -> "ssl.SSLContext":
    """A TLS client of the broker: the run's CA, the broker's name checked, and under mTLS a
    certificate to present."""
    import ssl  # only a secured run pays for it
    context = ssl.create_default_context(cafile=str(tls.identity.ca))
    if tls.require_certificate:
        context.load_cert_chain(str(tls.identity.cert), str(tls.identity.key))
    return context


def _version(daemon: DaemonProcess) -> str | None:
    found = re.search(r"mosquitto version (\S+)", daemon.log_text())
    return found.group(1) if found else package_version(PACKAGE)
