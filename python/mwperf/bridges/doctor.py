"""What ``mwperf doctor`` says about the bridges (none is needed by the default suite)."""

import os
import shutil

from ..daemons import mosquitto
from ..doctor.finding import Finding
from .build import missing_tools, binary_path


def check_bridges() -> list[Finding]:
    found = []
    if shutil.which(mosquitto.PROGRAM):
        found.append(Finding("bridge mqtt-bridge", "ok", f"{mosquitto.PROGRAM} (two brokers "
                             "joined by mosquitto's bridge)"))
    else:
        found.append(Finding("bridge mqtt-bridge", "missing", f"{mosquitto.PROGRAM} not found",
                             f"apt-get install {mosquitto.PACKAGE}"))
    path = binary_path()
    if path.is_file() and os.access(path, os.X_OK):
        found.append(Finding("bridge zenoh-ros2dds", "ok", f"{path}"))
    else:
        tools = missing_tools()
        found.append(Finding(
            "bridge zenoh-ros2dds", "warn",
            f"{path} not built yet (the first run that needs it builds it, for minutes)"
            + (f"; its build needs {', '.join(tools)}" if tools else ""),
            "make bridges"))
    return found
