"""The ros2 transport's foreign echo (``--pong relay``): a real rclpy relay node
(python/mwperf/ros2/relay.py) under the chosen distribution's Python and environment, from
``/mwperf/<base>/ping`` to ``/mwperf/<base>/pong`` in the point's type and QoS. Ready once it
printed ``ready`` (its subscription and publisher exist; the ping then waits for discovery).
Stopped, it may leave Fast DDS shared-memory files that nobody maps: those that appeared while
it ran go with it (fastdds_shm.py)."""

import re
from pathlib import Path

from .. import fastdds_shm
from ..ros2 import Distribution, wheels
from .base import DaemonProcess, DaemonSpec

NAME = "rclpy-relay"
SCRIPT = Path(__file__).resolve().parent.parent / "ros2" / "relay.py"
_READY = re.compile(r"^ready$", re.MULTILINE)


def spec(dist: Distribution, env: dict[str, str], bases: list[str], message_type: str,
         flags: list[str]) -> DaemonSpec:
    """The relay of each base's topics; ``env`` is the distribution's (on top of mwperf's),
    ``flags`` the relay's own (--reliability, --durability, --depth, --executor,
    --busy-loop-ms)."""
    def ready(daemon: DaemonProcess) -> bool:
        return bool(_READY.search(daemon.log_text()))

    before = fastdds_shm.entries()

    pairs = [arg for base in bases for arg in ("--from", f"/mwperf/{base}/ping",
                                               "--to", f"/mwperf/{base}/pong")]
    return DaemonSpec(name=NAME, argv=[str(dist.python), str(SCRIPT), *pairs,
                                       "--type", message_type, *flags],
                      package=f"rclpy of ROS 2 {dist.name} ({wheels.install_command(dist.name)})",
                      env=env, ready=ready, ready_timeout_s=30.0,
                      after=lambda: fastdds_shm.remove_orphaned(before))
