"""mwperf.ros2 on fake installations in tmp folders (the real managed ones:
tests/test_ros2_managed_e2e.py): finding the managed venvs by their stamp and a sourced
/opt/ros/<distro> from AMENT_PREFIX_PATH/ROS_DISTRO (which wins), the RMWs and their middleware
versions from the library file names, RMW_IMPLEMENTATION, the child environment, the discovery
variables, the installer's stamp, and the errors: one line naming what is missing and the
install command, or listing what is installed."""

import json
import subprocess
from pathlib import Path

import pytest

from mwperf import ros2
from mwperf.errors import UsageError
from mwperf.ros2 import discovery, install, wheels
from mwperf.ros2 import stamp as stamps
from mwperf.ros2.rmw import find_rmws, message_packages

KILTED_LIBS = ["librcl.so", "librmw.so", "librmw_implementation.so", "librmw_fastrtps_cpp.so",
               "librmw_fastrtps_shared_cpp.so", "librmw_dds_common.so",
               "librmw_dds_common__rosidl_typesupport_c.so", "libfastdds.so", "libfastdds.so.3.2",
               "libfastdds.so.3.2.2", "libstd_msgs__rosidl_typesupport_c.so",
               "libsensor_msgs__rosidl_typesupport_c.so"]
JAZZY_LIBS = ["librmw_fastrtps_cpp.so", "libfastrtps.so.2.14", "libfastrtps.so.2.14.5",
              "libstd_msgs__rosidl_typesupport_c.so"]


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty per-user cache and no ROS 2 in the environment."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in ("AMENT_PREFIX_PATH", "ROS_DISTRO", "RMW_IMPLEMENTATION",
                 "ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_STATIC_PEERS"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "cache" / "mwperf"


def fake_venv(distro: str, libs: list[str], stamp: bool = True) -> Path:
    venv = wheels.venv_dir(distro)
    site = venv / "lib" / "python3.11" / "site-packages"
    (site / "ros_rcl.libs").mkdir(parents=True)
    (venv / "bin").mkdir()
    for name in libs:
        (venv / "lib" / name).write_bytes(b"")
    (site / "ros_rcl.libs" / "libssl-abc.so.1.1").write_bytes(b"")
    if stamp:
        (venv / wheels.STAMP).write_text(json.dumps(stamps.wanted_stamp(distro)))
    return venv


def fake_opt_ros(root: Path, distro: str, libs: list[str], multiarch: list[str]) -> Path:
    prefix = root / "opt" / "ros" / distro
    (prefix / "lib" / "x86_64-linux-gnu").mkdir(parents=True)
    for name in libs:
        (prefix / "lib" / name).write_bytes(b"")
    for name in multiarch:
        (prefix / "lib" / "x86_64-linux-gnu" / name).write_bytes(b"")
    return prefix


def test_the_managed_venvs_are_where_the_user_cache_is(cache: Path) -> None:
    assert wheels.venv_dir("kilted") == cache / "ros2" / "kilted"


def test_managed_distributions_with_their_rmw_and_dds_version() -> None:
    fake_venv("kilted", KILTED_LIBS)
    fake_venv("jazzy", JAZZY_LIBS)
    found = {d.name: d for d in ros2.find({})}
    kilted, jazzy = found["kilted"], found["jazzy"]
    assert [r.describe() for r in kilted.rmws] == ["rmw_fastrtps_cpp (Fast DDS 3.2.2)"]
    assert [r.describe() for r in jazzy.rmws] == ["rmw_fastrtps_cpp (Fast DDS 2.14.5)"]
    assert kilted.origin == "managed" and kilted.python == wheels.venv_dir("kilted") / "bin" / "python"
    assert kilted.messages == ("rmw_dds_common", "sensor_msgs", "std_msgs")
    assert ros2.pick(env={}).name == "kilted"  # the default
    assert ros2.pick("jazzy", env={}) is not None and ros2.pick("jazzy", env={}).name == "jazzy"


def test_a_venv_without_its_stamp_is_not_installed() -> None:
    fake_venv("kilted", KILTED_LIBS, stamp=False)
    assert ros2.find({}) == []
    (wheels.venv_dir("kilted") / wheels.STAMP).write_text('{"distro": "kilted"}')  # stale
    assert ros2.find({}) == []


def test_a_sourced_ros2_wins_and_lists_its_rmws(tmp_path: Path) -> None:
    fake_venv("kilted", KILTED_LIBS)
    prefix = fake_opt_ros(tmp_path, "jazzy",
                          ["librmw_fastrtps_cpp.so", "librmw_cyclonedds_cpp.so",
                           "librmw_zenoh_cpp.so", "libfastrtps.so.2.14.5", "libzenohc.so"],
                          ["libddsc.so.0.10.5", "libddsc.so.0"])
    env = {"AMENT_PREFIX_PATH": f"{tmp_path}/ws/install/pkg:{prefix}", "ROS_DISTRO": "jazzy"}
    dist = ros2.pick(env=env)
    assert (dist.name, dist.origin, dist.prefix) == ("jazzy", "sourced", prefix)
    assert [r.describe() for r in dist.rmws] == [
        "rmw_cyclonedds_cpp (Cyclone DDS 0.10.5)", "rmw_fastrtps_cpp (Fast DDS 2.14.5)",
        "rmw_zenoh_cpp (zenoh)"]
    assert dist.rmw({"RMW_IMPLEMENTATION": "rmw_zenoh_cpp"}).name == "rmw_zenoh_cpp"
    assert dist.rmw({}).name == "rmw_fastrtps_cpp"
    child = dist.child_env(base={**env, "RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp",
                                 "LD_LIBRARY_PATH": "/opt/ros/jazzy/lib"})
    assert child["RMW_IMPLEMENTATION"] == "rmw_cyclonedds_cpp"
    assert child["LD_LIBRARY_PATH"] == "/opt/ros/jazzy/lib"  # a sourced one's, as it is
    assert "MWPERF_ROS2_PREFIX" not in child  # the agent reads AMENT_PREFIX_PATH there
    assert [d.name for d in ros2.find(env)] == ["jazzy", "kilted"]


def test_the_child_environment_of_a_managed_venv() -> None:
    venv = fake_venv("kilted", KILTED_LIBS)
    dist = ros2.pick(env={})
    env = dist.child_env(base={"LD_LIBRARY_PATH": "/usr/local/lib", "PATH": "/usr/bin"})
    site = venv / "lib" / "python3.11" / "site-packages"
    assert env["LD_LIBRARY_PATH"] == f"{venv}/lib:{site}/ros_rcl.libs:/usr/local/lib"
    assert env["RMW_IMPLEMENTATION"] == "rmw_fastrtps_cpp"
    assert env["_ROS_WHEELS_BOOTSTRAP_COMPLETE"] == "1" and env["PATH"] == "/usr/bin"
    # what the agent's ros2 transport compiles its rcl shim against
    assert env["MWPERF_ROS2_PREFIX"] == str(venv) and env["MWPERF_ROS2_DISTRO"] == "kilted"


def test_no_ros2_is_one_line_with_the_install_command() -> None:
    with pytest.raises(UsageError) as caught:
        ros2.pick(env={})
    text = str(caught.value)
    assert caught.value.exit_code == 2 and "\n" not in text
    assert "no ROS 2 environment" in text and "AMENT_PREFIX_PATH" in text
    assert "python3 -m mwperf.ros2.install kilted" in text


def test_a_distribution_or_rmw_not_installed_lists_what_is() -> None:
    fake_venv("kilted", KILTED_LIBS)
    with pytest.raises(UsageError) as caught:
        ros2.pick("jazzy", env={})
    assert "'jazzy' is not installed (installed: kilted (managed," in str(caught.value)
    assert "python3 -m mwperf.ros2.install jazzy" in str(caught.value)
    with pytest.raises(UsageError) as caught:
        ros2.pick("humble", env={})
    assert "source /opt/ros/humble/setup.bash" in str(caught.value)
    with pytest.raises(UsageError) as caught:
        ros2.pick(env={}).rmw({"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"})
    assert str(caught.value).startswith("$RMW_IMPLEMENTATION=rmw_cyclonedds_cpp: not installed "
                                        "in ROS 2 kilted (managed, ")
    assert str(caught.value).endswith("it has: rmw_fastrtps_cpp")


def test_rmws_and_messages_from_file_names() -> None:
    rmws = find_rmws(["librmw_fastrtps_cpp.so", "librmw_fastrtps_shared_cpp.so",
                      "librmw_implementation.so", "librmw_foo.so", "libfastdds.so.3.2",
                      "libfastdds.so.3.2.2", "libfastdds.so.3.10.1.bak"])
    assert [(r.name, r.middleware, r.version) for r in rmws] == [
        ("rmw_fastrtps_cpp", "Fast DDS", "3.2.2"), ("rmw_foo", "unknown", None)]
    assert message_packages(["libgeometry_msgs__rosidl_typesupport_c.so",
                             "libgeometry_msgs__rosidl_typesupport_cpp.so"]) == ("geometry_msgs",)


@pytest.mark.parametrize(("env", "expected"), [
    ({}, ("SUBNET", ())),
    ({"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "ROS_STATIC_PEERS": "10.0.0.2; robot.lan;"},
     ("LOCALHOST", ("10.0.0.2", "robot.lan"))),
    ({"ROS_AUTOMATIC_DISCOVERY_RANGE": "SYSTEM_DEFAULT"}, ("SYSTEM_DEFAULT", ())),
    ({"ROS_AUTOMATIC_DISCOVERY_RANGE": ""}, ("SUBNET", ())),
])
def test_discovery_variables(env: dict[str, str], expected: tuple) -> None:
    found = discovery.from_environment(env)
    assert (found.range, found.static_peers) == expected


def test_static_peers_are_ignored_where_ros2_ignores_them() -> None:
    found = discovery.from_environment({"ROS_AUTOMATIC_DISCOVERY_RANGE": "SYSTEM_DEFAULT",
                                        "ROS_STATIC_PEERS": "10.0.0.2"})
    assert found.peers_used == ()


@pytest.mark.parametrize(("env", "words"), [
    ({"ROS_AUTOMATIC_DISCOVERY_RANGE": "localhost"},
     "$ROS_AUTOMATIC_DISCOVERY_RANGE: expected one of LOCALHOST, SUBNET, OFF, SYSTEM_DEFAULT "
     "(or unset: SUBNET), got 'localhost'"),
    ({"ROS_STATIC_PEERS": "a b;c"}, "$ROS_STATIC_PEERS: expected host names or IP addresses"),
])
def test_bad_discovery_variables_are_named(env: dict[str, str], words: str) -> None:
    with pytest.raises(UsageError, match=None) as caught:
        discovery.from_environment(env)
    assert words in str(caught.value)


def test_install_does_nothing_when_the_stamp_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_venv("kilted", KILTED_LIBS)
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail(f"ran {a}"))
    assert install.install("kilted") < 1.0


def test_install_remakes_a_venv_without_its_stamp(monkeypatch: pytest.MonkeyPatch) -> None:
    venv = fake_venv("jazzy", JAZZY_LIBS, stamp=False)
    (venv / "leftover").write_text("half an install")
    ran: list[list[str]] = []

    def run(argv: list[str], check: bool) -> None:
        ran.append(argv)
        if argv[1:3] == ["-m", "venv"]:
            Path(argv[3], "bin").mkdir(parents=True)

    monkeypatch.setattr(subprocess, "run", run)
    install.install("jazzy")
    assert ran[0][1:] == ["-m", "venv", str(venv)]
    assert ran[1] == [str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                      *wheels.PACKAGES["jazzy"]]
    assert not (venv / "leftover").exists() and stamps.is_installed("jazzy")


def test_install_refuses_an_unknown_distribution(capsys: pytest.CaptureFixture[str]) -> None:
    assert install.main(["rolling"]) == 2
    assert "unknown distribution rolling (managed: kilted, jazzy)" in capsys.readouterr().err


def test_ros_localhost_only_is_localhost_without_static_peers() -> None:
    found = discovery.from_environment({"ROS_LOCALHOST_ONLY": "1", "ROS_STATIC_PEERS": "10.0.0.2",
                                        "ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"})
    assert (found.range, found.peers_used) == ("LOCALHOST", ())
    assert found.describe() == "ROS_LOCALHOST_ONLY=1"
    assert discovery.from_environment({"ROS_LOCALHOST_ONLY": "0"}).range == "SUBNET"
