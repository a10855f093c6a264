"""ROS 2 through rcl (the agent is a real ROS 2 node: crates/mwperf-transports/src/middleware/
ros2/): the domain of $ROS_DOMAIN_ID (else 0), a topic base the listening agent picks, the ROS 2
distribution ``--opt distro`` names (default: a sourced ROS 2, else mwperf's managed kilted;
python/mwperf/ros2) and the RMW $RMW_IMPLEMENTATION names (default rmw_fastrtps_cpp). Every agent
gets that distribution's environment (``agent_environment``: its libraries, the RMW, the prefix
the agent compiles its rcl shim against, with the C compiler ``cc`` on first use) and the
message type of the point's payload (``message_type``: ``--opt type`` overrides)."""

import os
import secrets
from typing import TYPE_CHECKING

from .. import ros2
from ..daemons import ros2_relay
from ..errors import UsageError
from .dds_domain import domain_from_env
from .hooks import DoctorChecks, Hooks, Plan, Setup

if TYPE_CHECKING:
    from ..point import Point

DISTRO_OPT = "distro"
TYPE_OPT = "type"
DEFAULT_TYPE = "std_msgs/msg/UInt8MultiArray"
"""the agent's default type (its message.rs, TYPES[0])"""
POINT_CLOUD = "sensor_msgs/msg/PointCloud2"
"""the type of the PointCloud payloads (performance_test's PointCloud512k, ...); the others
travel in the agent's default, std_msgs/msg/UInt8MultiArray"""
COMPILER = "cc"
COMPILER_PACKAGE = "gcc"


def distribution(cfg: "Point") -> ros2.Distribution:
    """The ROS 2 installation the point's agents use; UsageError (exit 2) naming the flag and
    what is installed, or the install command when there is none."""
    asked = cfg.option(DISTRO_OPT)
    try:
        return ros2.pick(asked or None)
    except UsageError as exc:
        flag = f"--opt {DISTRO_OPT}={asked}" if asked else "--transport ros2"
        raise UsageError(f"{flag}: {exc}") from None


def agent_environment(cfg: "Point") -> dict[str, str]:
    """What an agent of the point needs set on top of mwperf's own environment."""
    dist = distribution(cfg)
    try:
        full = dist.child_env(base=os.environ)
    except UsageError as exc:  # the RMW asked for is not installed
        raise UsageError(f"--transport ros2: {exc}") from None
    return {k: v for k, v in full.items() if os.environ.get(k) != v}


def message_type(cfg: "Point") -> str | None:
    """The ``--opt type`` the agents get for the point's payload; None: the user chose one, or
    the agent's default fits."""
    if cfg.option(TYPE_OPT) is not None:
        return None
    payload = str(getattr(cfg, "payload", ""))
    return POINT_CLOUD if payload.startswith("PointCloud") else None


def prepare(setup: Setup) -> Plan:
    domain = domain_from_env()
    if setup.cfg.pong == "relay":
        return _relay(setup, domain)
    return Plan(f"{domain}/auto")


def _relay(setup: Setup, domain: int) -> Plan:
    """A real rclpy relay node as the echo of the point's message type."""
    cfg = setup.cfg
    return relay_plan(setup, domain, cfg.option(TYPE_OPT) or message_type(cfg) or DEFAULT_TYPE)


def relay_plan(setup: Setup, domain: int, chosen: str) -> Plan:
    """A real rclpy relay node of type ``chosen`` as the echo (ros2/relay.py), in the point's
    QoS and the ROS 2 environment ``--opt distro`` picks; the ping connects to its topics. The
    ros2 transport's echo, and the raw DDS transports' with ``--opt ros2-type``
    (ros2_interop.py)."""
    cfg = setup.cfg
    base = f"mwperf_{secrets.randbits(32):08x}"  # a valid ROS 2 name (no '-')
    depth = ("0" if cfg.history == "keep-all" else cfg.history.removeprefix("keep-last:")
             if cfg.history.startswith("keep-last:") else str(cfg.depth))
    qos = ["--reliability", cfg.reliability, "--durability", cfg.durability, "--depth", depth]
    env = {**agent_environment(cfg), "ROS_DOMAIN_ID": str(domain)}
    setup.daemons.start(lambda: ros2_relay.spec(distribution(cfg), env, base, chosen, qos))
    return Plan(None, connect=f"{domain}/{base}")


def doctor(check: DoctorChecks) -> list:
    return [check.program("ros2", COMPILER, COMPILER_PACKAGE,
                          "compiles the agent's rcl shim per ROS 2 distribution on first use",
                          needed=False)]


HOOKS = Hooks(prepare=prepare, doctor=doctor, relay="rclpy relay")
