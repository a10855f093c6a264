"""The ros2 transport's control plane (python/mwperf/transports/ros2.py) on fake installations:
the distribution ``--opt distro`` picks, the environment every agent gets (the managed prefix and
name the agent compiles its rcl shim against, its libraries, the RMW), and the usage errors
(exit 2) naming the flag and what is installed, or the install command when nothing is. The real
thing: tests/test_ros2_transport_e2e.py."""

from dataclasses import dataclass

import pytest

from mwperf.errors import UsageError
from mwperf.parts.ros2 import Ros2
from mwperf.transports import ros2 as transport
from test_ros2_distributions import KILTED_LIBS, cache, fake_venv  # noqa: F401 (fixture)


class Cfg:
    """What the hooks read of a point: its transport options."""

    transport = "ros2"

    def __init__(self, payload: str = "Array1k", **opts: str) -> None:
        self.payload, self.opts = payload, opts

    def option(self, key: str) -> str | None:
        return self.opts.get(key)


def test_the_agents_get_the_managed_distributions_environment() -> None:
    venv = fake_venv("kilted", KILTED_LIBS)
    env = transport.agent_environment(Cfg())
    assert env["MWPERF_ROS2_PREFIX"] == str(venv) and env["MWPERF_ROS2_DISTRO"] == "kilted"
    assert env["LD_LIBRARY_PATH"].startswith(f"{venv}/lib:")
    assert env["RMW_IMPLEMENTATION"] == "rmw_fastrtps_cpp"
    assert transport.distribution(Cfg(distro="kilted")).prefix == venv


def test_no_ros2_names_the_install_command() -> None:
    with pytest.raises(UsageError) as caught:
        transport.agent_environment(Cfg())
    text = str(caught.value)
    assert caught.value.exit_code == 2 and "\n" not in text
    assert text.startswith("--transport ros2: no ROS 2 environment")
    assert "python3 -m mwperf.ros2.install kilted" in text


def test_a_distribution_not_installed_lists_what_is() -> None:
    fake_venv("kilted", KILTED_LIBS)
    with pytest.raises(UsageError) as caught:
        transport.agent_environment(Cfg(distro="jazzy"))
    text = str(caught.value)
    assert text.startswith("--opt distro=jazzy: ROS 2 distribution 'jazzy' is not installed")
    assert "installed: kilted (managed," in text
    assert "python3 -m mwperf.ros2.install jazzy" in text


def test_an_rmw_not_installed_lists_what_is(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_venv("kilted", KILTED_LIBS)
    monkeypatch.setenv("RMW_IMPLEMENTATION", "rmw_zenoh_cpp")
    with pytest.raises(UsageError) as caught:
        transport.agent_environment(Cfg())
    text = str(caught.value)
    assert text.startswith("--transport ros2: $RMW_IMPLEMENTATION=rmw_zenoh_cpp: not installed")
    assert text.endswith("it has: rmw_fastrtps_cpp")


def test_point_clouds_travel_as_point_clouds() -> None:
    assert transport.message_type(Cfg("PointCloud512k")) == "sensor_msgs/msg/PointCloud2"
    assert transport.message_type(Cfg("Array1k")) is None  # the agent's UInt8MultiArray
    assert transport.message_type(Cfg("PointCloud1m", type="sensor_msgs/msg/Image")) is None


@dataclass(frozen=True)
class Point:
    """The fields of a point the ros2 part reads and changes."""

    payload: str
    opts: tuple[str, ...] = ()
    transport: str = "ros2"

    def option(self, key: str) -> str | None:
        found = [o.split("=", 1)[1] for o in self.opts if o.startswith(f"{key}=")]
        return found[-1] if found else None


def test_the_part_gives_the_agents_the_payloads_type() -> None:
    given = Ros2().given(None, Point("PointCloud4m"))  # type: ignore[arg-type]
    assert given.opts == ("type=sensor_msgs/msg/PointCloud2",)
    assert Ros2().given(None, Point("Struct256")).opts == ()  # type: ignore[arg-type]
