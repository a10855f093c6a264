"""ROS 1: Debian's rosmaster on a free port, and topic_tools' relay as a foreign pong.

rosmaster and relay are started as they are (rosmaster has its own /usr/bin/python3 shebang,
so whatever Python runs mwperf does not matter); ROS_HOME and ROS_LOG_DIR point into the work
directory so nothing is written to ~/.ros.
"""

import http.client
import xmlrpc.client
from pathlib import Path

from .base import DaemonProcess, DaemonSpec, free_port, package_version

MASTER_PROGRAM = "rosmaster"
MASTER_PACKAGE = "python3-rosmaster"
RELAY_PROGRAM = "/usr/lib/topic_tools/relay"
RELAY_PACKAGE = "topic-tools"
CALL_TIMEOUT_S = 1.0
CALLER_ID = "/mwperf"
LOOPBACK = "127.0.0.1"
PYTHON_ENV = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
"""rosmaster runs on Debian's /usr/bin/python3 (its shebang): whatever Python mwperf runs in,
these must not leak into it"""


def ros_env(master_uri: str, folder: Path, host: str = LOOPBACK) -> dict[str, str]:
    """What every ROS 1 process of a run needs: the master, its own address (``host``: loopback,
    or its emulated host's), logs in the run."""
    home = folder / "ros"
    return {"ROS_MASTER_URI": master_uri, "ROS_IP": host, "ROS_HOSTNAME": host,
            "ROS_HOME": str(home), "ROS_LOG_DIR": str(home / "log")}


def master_spec(folder: Path, host: str = LOOPBACK, netns: Path | None = None) -> DaemonSpec:
    """rosmaster on a new free port of ``host`` (in namespace ``netns``, an emulated host's);
    its address is ``http://<host>:<port>/``. It binds every interface unless ``host`` is
    loopback (rosgraph's rule)."""
    port = free_port()
    uri = f"http://{host}:{port}/"

    def ready(daemon: DaemonProcess) -> bool:
        code, _, _ = master(uri).getPid(CALLER_ID)
        if code == 1:
            daemon.address = uri
            return True
        return False

    return DaemonSpec(name="rosmaster", argv=[MASTER_PROGRAM, "--core", "-p", str(port), "-w", "3"],
                      package=MASTER_PACKAGE, env=ros_env(uri, folder, host), unset=PYTHON_ENV,
                      ready=ready, ready_timeout_s=15.0, netns=netns,
                      version=lambda d: package_version(MASTER_PACKAGE))


def relay_spec(folder: Path, master_uri: str, base: str, host: str = LOOPBACK,
               netns: Path | None = None) -> DaemonSpec:
    """topic_tools relay /mwperf/<base>/ping -> /mwperf/<base>/pong, a pong mwperf did not write.

    Ready once the master lists it as a subscriber of the ping topic.
    """
    ping, pong = f"/mwperf/{base}/ping", f"/mwperf/{base}/pong"

    def ready(daemon: DaemonProcess) -> bool:
        return subscribed(master_uri, ping)

    return DaemonSpec(name="relay", argv=[RELAY_PROGRAM, ping, pong], package=RELAY_PACKAGE,
                      env=ros_env(master_uri, folder, host), unset=PYTHON_ENV, ready=ready,
                      netns=netns, version=lambda d: package_version(RELAY_PACKAGE))


def subscribed(master_uri: str, topic: str) -> bool:
    """True when the master's getSystemState shows a subscriber of ``topic``."""
    code, _, state = master(master_uri).getSystemState(CALLER_ID)
    if code != 1:
        return False
    _publishers, subscribers, _services = state
    return any(name == topic and nodes for name, nodes in subscribers)


def master(uri: str) -> xmlrpc.client.ServerProxy:
    """An XML-RPC proxy to the master whose calls give up after CALL_TIMEOUT_S."""
    return xmlrpc.client.ServerProxy(uri, transport=_TimeoutTransport())


class _TimeoutTransport(xmlrpc.client.Transport):
    """The stdlib transport has no timeout: a master that accepts but never answers would hang."""

    def make_connection(self, host: object) -> http.client.HTTPConnection:
        connection = super().make_connection(host)
        connection.timeout = CALL_TIMEOUT_S
        return connection

