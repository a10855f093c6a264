"""The real managed ROS 2 environments (make setup installs them; missing, these tests fail
saying how to install them): what mwperf.ros2 finds in them, a child process on their
environment importing rclpy and the message packages on rmw_fastrtps_cpp, and the installer
doing nothing when they are there."""

import json
import subprocess
import sys

import pytest

from mwperf import ros2
from mwperf.errors import UsageError

EXPECTED = {"kilted": ("libfastdds", "3."), "jazzy": ("libfastrtps", "2.14.")}
"""each managed distribution's Fast DDS: its library and major version (REFERENCE-3 §1)"""


def managed(name: str) -> ros2.Distribution:
    try:
        dist = ros2.pick(name, env={})
    except UsageError as exc:
        pytest.fail(f"{exc} (make setup installs it)")
    assert dist.origin == "managed"
    return dist


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_managed_distribution_has_its_rmw_and_fast_dds(name: str) -> None:
    dist = managed(name)
    library, version = EXPECTED[name]
    [rmw] = dist.rmws
    assert (rmw.name, rmw.middleware) == ("rmw_fastrtps_cpp", "Fast DDS")
    assert rmw.version is not None and rmw.version.startswith(version)
    assert any(f.name == f"{library}.so.{rmw.version}" for d in dist.lib_dirs if d.is_dir()
               for f in d.iterdir())
    assert {"std_msgs", "sensor_msgs", "geometry_msgs"} <= set(dist.messages)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_child_on_its_environment_imports_rclpy_on_the_rmw(name: str) -> None:
    dist = managed(name)
    code = ("import json, rclpy\nfrom rclpy.utilities import get_rmw_implementation_identifier"
            "\nfrom sensor_msgs.msg import Imu\nfrom std_msgs.msg import String\n"
            "print(json.dumps({'rmw': get_rmw_implementation_identifier(), 'prefix': __import__"
            "('sys').prefix}))")
    done = subprocess.run([str(dist.python), "-c", code], env=dist.child_env(base={}),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"rmw": "rmw_fastrtps_cpp", "prefix": str(dist.prefix)}


def test_the_installer_does_nothing_when_they_are_there() -> None:
    done = subprocess.run([sys.executable, "-m", "mwperf.ros2.install", *EXPECTED],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout == "" and done.stderr == "", done.stderr
