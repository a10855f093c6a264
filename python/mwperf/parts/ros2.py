"""The ROS 2 part (``--transport ros2``): every agent started on this machine gets the chosen
ROS 2 distribution's environment, and the message type for the point's payload
(transports/ros2.py), both checked before anything starts so a missing distribution or RMW is a
usage error (exit 2) naming what is installed."""

from dataclasses import replace
from typing import TYPE_CHECKING

from ..transports import profile, ros2
from .base import P, Part

if TYPE_CHECKING:
    from ..agent import Agent
    from ..point import Point
    from .state import PointState

FOUND = "ros2_env"


class Ros2(Part):
    name = "ros2"

    def wanted(self, cfg: "Point") -> bool:
        return cfg.transport == "ros2"

    def check(self, cfg: "Point", agent: "Agent") -> None:
        ros2.check_service(cfg, profile(cfg.transport, agent).services["how"])
        ros2.check_timer(cfg)
        ros2.check_rclpy_publisher(cfg)
        ros2.agent_environment(cfg)

    def start(self, run: "PointState") -> None:
        run.found[FOUND] = ros2.agent_environment(run.cfg)

    def given(self, run: "PointState", cfg: P) -> P:
        chosen = ros2.message_type(cfg)
        if chosen is None:
            return cfg
        return replace(cfg, opts=(*cfg.opts, f"{ros2.TYPE_OPT}={chosen}"))

    def command(self, run: "PointState", role: str, argv: list[str]) -> list[str]:
        """``--opt client=rclpy --mode throughput``: the pub is a real rclpy publisher
        (ros2/throughput_pub.py) in the distribution's Python, on the agent pub's address,
        run id and report file."""
        if role != "pub" or run.cfg.client != "rclpy" or run.cfg.mode != "throughput":
            return argv
        return ros2.rclpy_publisher_argv(run.cfg, argv)

    def env(self, run: "PointState", name: str, env: dict[str, str] | None
            ) -> dict[str, str] | None:
        return {**run.found.get(FOUND, {}), **(env or {})}
