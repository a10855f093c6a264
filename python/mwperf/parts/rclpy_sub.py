"""The rclpy sub part (``--mode oneway --opt client=rclpy``, rclpy_roles.py): each sub the
runner starts is a real rclpy subscriber (python/mwperf/ros2/stream_sub.py, under the ROS 2
distribution's Python in the environment the ros2 part gives every agent) that, once it
stopped, becomes the agent's sub with ``--arrivals`` and measures what rclpy took. The runner
sees a sub as ever: one process, ``READY ros2 <address>``, its report, its exit code."""

from pathlib import Path
from typing import TYPE_CHECKING

from ..transports import ros2
from .base import Part

if TYPE_CHECKING:
    from ..point import Point
    from .state import PointState

SCRIPT = Path(__file__).resolve().parent.parent / "ros2" / "stream_sub.py"
LINGER_NS = 200_000_000
"""the agent sub's --linger default (crates/mwperf-agent/src/cli.rs): the runner passes none"""


class RclpySub(Part):
    name = "rclpy sub"

    def wanted(self, cfg: "Point") -> bool:
        return cfg.client == "rclpy" and cfg.mode == "oneway"

    def command(self, run: "PointState", role: str, argv: list[str]) -> list[str]:
        if role != "sub":
            return argv
        cfg = run.cfg
        report = argv[argv.index("--json") + 1]
        log = report.removesuffix(".json") + ".arrivals"
        return [str(ros2.distribution(cfg).python), str(SCRIPT),
                "--address", argv[argv.index("--listen") + 1],
                "--run-id", argv[argv.index("--run-id") + 1], "--log", log,
                "--type", ros2.topic_type(cfg), *ros2.qos_flags(cfg),
                "--executor", cfg.executor, "--busy-loop-ns", str(cfg.busy_loop_ns),
                "--linger-ns", str(LINGER_NS), "--", *argv]
