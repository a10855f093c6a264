"""``--transport fastdds --opt distro=jazzy|kilted``: raw Fast DDS built from the same Fast DDS
as that ROS 2 distribution's rmw_fastrtps_cpp (the agent compiles its Fast DDS shim against the
distribution's headers and libraries on first use: crates/mwperf-transports/src/middleware/
fastdds/wheel.rs). Every agent started on this machine gets the distribution's environment, as
``--transport ros2`` gives it (transports/ros2.py), checked before anything starts so a missing
distribution is a usage error (exit 2) naming what is installed."""

from typing import TYPE_CHECKING

from ..transports import ros2
from .base import Part

if TYPE_CHECKING:
    from ..agent import Agent
    from ..point import Point
    from .state import PointState

FOUND = "fastdds_distro_env"


class FastddsDistro(Part):
    name = "fastdds-distro"

    def wanted(self, cfg: "Point") -> bool:
        return cfg.transport == "fastdds" and cfg.option(ros2.DISTRO_OPT) is not None

    def check(self, cfg: "Point", agent: "Agent") -> None:
        ros2.agent_environment(cfg)

    def start(self, run: "PointState") -> None:
        run.found[FOUND] = ros2.agent_environment(run.cfg)

    def env(self, run: "PointState", name: str, env: dict[str, str] | None
            ) -> dict[str, str] | None:
        return {**run.found.get(FOUND, {}), **(env or {})}
