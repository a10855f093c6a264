"""Daemons a middleware needs beside the agents (a broker, a master, a router, a foreign echo).

``base`` is the generic part (start on a free port, readiness with a deadline, log file, CPU and
peak RSS, stop SIGTERM -> wait -> SIGKILL); the other modules describe concrete daemons.
"""

from .base import DaemonProcess, DaemonSet, DaemonSpec, free_port

__all__ = ["DaemonProcess", "DaemonSet", "DaemonSpec", "free_port"]
