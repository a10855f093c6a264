"""ROS 2 interop of the raw DDS transports (cyclonedds, fastdds, rustdds): with ``--opt
ros2-type=<pkg>/msg/<Type>`` their agents carry mwperf's messages in that real ROS 2 type, under
ROS 2's topic and DDS type names (crates/mwperf-transports/src/middleware/ros2_wire.rs), so
``--pong relay`` runs the real rclpy relay of the ros2 transport (python/mwperf/ros2/relay.py)
as the echo of a raw DDS ping."""

from ..errors import UsageError
from . import ros2
from .hooks import Plan, Setup

OPT = "ros2-type"
"""the agents' option (their descriptors list it)"""


def relay(setup: Setup, domain: int) -> Plan:
    """The foreign ROS 2 echo of the point: a real rclpy relay (``--pong relay``) or the user's
    program (``--pong-cmd``), of the point's ROS 2 type; UsageError (exit 2) naming the option
    when the point has none (a ROS 2 node reads ROS 2 messages only)."""
    chosen = setup.cfg.option(OPT)
    if not chosen:
        echo = ("--pong-cmd (a ROS 2 program)" if setup.cfg.pong == "command"
                else "--pong relay (the rclpy relay)")
        raise UsageError(f"{echo} with --transport {setup.cfg.transport}: a ROS 2 node "
                         f"reads real ROS 2 messages; add --opt {OPT}=<type> (allowed: "
                         f"{ros2.DEFAULT_TYPE}, {ros2.POINT_CLOUD}, sensor_msgs/msg/Image)")
    if setup.cfg.pong == "command":
        return ros2.command_plan(setup, domain, chosen)
    return ros2.relay_plan(setup, domain, chosen)
