"""The Foxglove WebSocket server: mwperf's foxglove-sdk server (bridges/foxglove_server.py) on a
free port, as the relay of the ``foxglove`` transport or, with a DDS domain, as the
``--bridge foxglove`` bridge. It runs under this Python (it needs the foxglove-sdk package,
and for the bridge the cyclonedds package)."""

import re
import sys
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from .base import DaemonProcess, DaemonSpec, free_port

if TYPE_CHECKING:
    from ..security.tls import TlsIdentity

NAME = "foxglove-server"
SCRIPT = Path(__file__).resolve().parent.parent / "bridges" / "foxglove_server.py"
PACKAGE = "foxglove-sdk"
LOOPBACK = "127.0.0.1"
_READY = re.compile(r"^ready (\S+)$", re.MULTILINE)


def sdk_version() -> str | None:
    """The installed foxglove-sdk's version (None when it is not installed)."""
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return None


def spec(host: str = LOOPBACK, netns: Path | None = None, name: str = NAME,
         bridge: tuple[str, ...] = (), env: dict[str, str] | None = None,
         tls: "TlsIdentity | None" = None) -> DaemonSpec:
    """The server on a new free port of ``host`` (in namespace ``netns``); ``bridge`` adds the
    DDS bridge's arguments (``--dds-domain N ...``); ``tls``: it serves wss with that identity's
    certificate (``--secure tls``). Its address is ``<host>:<port>``."""
    port = free_port()

    def ready(daemon: DaemonProcess) -> bool:
        found = _READY.search(daemon.log_text())
        if found:
            daemon.address = found.group(1)
            return True
        return False

    served = [] if tls is None else ["--tls-cert", str(tls.cert), "--tls-key", str(tls.key)]
    return DaemonSpec(name=name, argv=[sys.executable, str(SCRIPT), "--host", host,
                                       "--port", str(port), *bridge, *served],
                      package=f"python3 (pip install {PACKAGE})", ready=ready,
                      version=lambda daemon: sdk_version(), netns=netns, ready_timeout_s=20.0,
                      env=env)
