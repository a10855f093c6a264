"""The ros2 transport's rclpy service server (``--mode service --opt client=rclpy``): a real
rclpy node (python/mwperf/ros2/service_server.py) under the chosen distribution's Python and
environment, serving ``/mwperf/<base>`` as the agent's server does. Ready once it printed
``ready`` (its service exists; the client then waits for discovery). Stopped, it prints its own
counts into its log, and the Fast DDS shared-memory files that appeared while it ran go with it
(fastdds_shm.py)."""

import re
from pathlib import Path

from .. import fastdds_shm
from ..ros2 import Distribution, wheels
from .base import DaemonProcess, DaemonSpec

NAME = "rclpy-server"
SCRIPT = Path(__file__).resolve().parent.parent / "ros2" / "service_server.py"
_READY = re.compile(r"^ready$", re.MULTILINE)


def spec(dist: Distribution, env: dict[str, str], base: str, flags: list[str]) -> DaemonSpec:
    """The server of service ``/mwperf/<base>``; ``env`` is the distribution's (on top of
    mwperf's), ``flags`` the server's own (--reply-payload, --server-work-ns, --executor)."""
    def ready(daemon: DaemonProcess) -> bool:
        return bool(_READY.search(daemon.log_text()))

    before = fastdds_shm.entries()
    return DaemonSpec(name=NAME, argv=[str(dist.python), str(SCRIPT), "--service",
                                       f"/mwperf/{base}", *flags],
                      package=f"rclpy of ROS 2 {dist.name} ({wheels.install_command(dist.name)})",
                      env=env, ready=ready, ready_timeout_s=30.0,
                      after=lambda: fastdds_shm.remove_orphaned(before))
