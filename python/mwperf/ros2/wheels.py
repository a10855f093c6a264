"""The ROS 2 distributions mwperf installs itself from PyPI (the ros-python-wheels project's
manylinux wheels for CPython 3.11), one virtual environment each: the two conflict (Jazzy's
rclpy pins an older ``ros-rclpy``). Standard library only: the installer runs before anything
else is installed."""

from pathlib import Path

from ..usercache import cache_dir

DEFAULT = "kilted"
"""the distribution picked when none is asked for and no ROS 2 is sourced"""

PACKAGES: dict[str, tuple[str, ...]] = {
    # Kilted Kaiju: unprefixed names; rmw_fastrtps_cpp on Fast DDS 3.2
    "kilted": ("ros-rclpy[fastrtps]", "ros-std-msgs", "ros-sensor-msgs", "ros-geometry-msgs",
               "ros-tracetools"),
    # Jazzy Jalisco: ros-jazzy-*; rmw_fastrtps_cpp on Fast DDS 2.14
    "jazzy": ("ros-jazzy-rclpy[fastrtps]", "ros-jazzy-std-msgs", "ros-jazzy-sensor-msgs",
              "ros-jazzy-geometry-msgs", "ros-jazzy-tracetools"),
}
"""each managed distribution's pip requirements (REFERENCE: the wheels' names and contents)"""

PYTHON = (3, 11)
"""the CPython the wheels are built for (cp311)"""

STAMP = "mwperf-ros2.json"
"""the file in a managed environment saying what was installed into it (written last)"""


def root() -> Path:
    """Where the managed environments live: <user cache>/ros2/."""
    return cache_dir() / "ros2"


def venv_dir(distro: str) -> Path:
    """The managed environment of ``distro``."""
    return root() / distro


def install_command(distro: str = DEFAULT) -> str:
    """The command a person runs to install ``distro``'s managed environment."""
    return f"python3 -m mwperf.ros2.install {distro}   (or: make setup)"
