"""The user's program of ``--pong-cmd`` (python/mwperf/pong_command.py) as a daemon: started
with its fields replaced, in the transport's environment, before the ping. It is taken as ready
once started: what it does with the topics only the ping can tell (a program that never echoes
leaves the ping without a reply, and the point names the program and its exit). Stopped with
its whole process group; Fast DDS shared-memory files that appeared while it ran and that nobody
maps go with it (fastdds_shm.py)."""

from .. import fastdds_shm
from .base import DaemonProcess, DaemonSpec

NAME = "pong-cmd"


def spec(argv: list[str], env: dict[str, str], package: str) -> DaemonSpec:
    """The daemon running ``argv`` (fields replaced) in ``env``; ``package``: what provides its
    program, for the error when it is missing."""
    before = fastdds_shm.entries()

    def ready(daemon: DaemonProcess) -> bool:
        return True

    return DaemonSpec(name=NAME, argv=argv, package=package, env=env, ready=ready,
                      ready_timeout_s=5.0, after=lambda: fastdds_shm.remove_orphaned(before))
