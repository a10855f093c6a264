"""ROS 2 through rcl (the agent is a real ROS 2 node: crates/mwperf-transports/src/middleware/
ros2/): the domain of $ROS_DOMAIN_ID (else 0), a topic base the listening agent picks, the ROS 2
distribution ``--opt distro`` names (default: a sourced ROS 2, else mwperf's managed kilted;
python/mwperf/ros2) and the RMW $RMW_IMPLEMENTATION names (default rmw_fastrtps_cpp). Every agent
gets that distribution's environment (``agent_environment``: its libraries, the RMW, the prefix
the agent compiles its rcl shim against, with the C compiler ``cc`` on first use) and the
message type of the point's payload (``message_type``: ``--opt type`` overrides)."""

import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import pong_command, ros2
from ..daemons import ros2_relay, ros2_server
from ..daemons.pong_command import spec as pong_spec
from ..errors import UsageError
from .dds_domain import domain_from_env
from .hooks import DoctorChecks, Hooks, Plan, Setup

if TYPE_CHECKING:
    from ..point import Point

PointConfig = Any
"""config.PointConfig (not imported: config imports the parts, which import this module)"""

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


def check_service(cfg: "Point", how: str) -> None:
    """``--opt type`` names the topics' message type: refused on a service point (``how``: the
    agent's own line on its services, naming their type)."""
    if getattr(cfg, "service", None) is not None and cfg.option(TYPE_OPT) is not None:
        raise UsageError(f"--opt {TYPE_OPT}: it names a topic's message type; --transport ros2 "
                         f"services are {how}")


TIMER_OPT = "timer"
TIMERS = ("mwperf", "rcl")
"""``--opt timer``: what paces a sender at a rate (the agent's middleware/ros2/timer.rs)"""


def check_timer(cfg: "Point", where: str = "--transport ros2") -> None:
    """``--opt timer`` before anything starts: one of :data:`TIMERS`, and not on a service
    point (an rcl timer paces a publisher: a pub, a ping, a graph node's timers; a service's
    client calls on mwperf's schedule)."""
    given = [o.split("=", 1)[1].strip() for o in cfg.opts
             if o.split("=", 1)[0].strip() == TIMER_OPT]
    if not given:
        return
    if any(g not in TIMERS for g in given):
        bad = next(g for g in given if g not in TIMERS)
        raise UsageError(f"--opt {TIMER_OPT}={bad} on {where}: allowed: "
                         f"{', '.join(f'{TIMER_OPT}={t}' for t in TIMERS)}")
    if getattr(cfg, "service", None) is not None and "rcl" in given:
        raise UsageError(f"--opt {TIMER_OPT}=rcl: not with --mode service (an rcl timer paces "
                         "a publisher: the pub of --mode oneway or throughput, the ping of a "
                         "round trip, a graph node's timers); allowed: timer=mwperf")


RCLPY_PUBLISHER = Path(__file__).resolve().parent.parent / "ros2" / "throughput_pub.py"
"""``--opt client=rclpy --mode throughput``: the stream's rclpy publisher"""


def check_rclpy_publisher(cfg: "PointConfig") -> None:
    """``--opt client=rclpy --mode throughput`` before anything starts: one stream of the
    default type (the rclpy publisher sends std_msgs/msg/UInt8MultiArray back to back)."""
    if cfg.client != "rclpy" or cfg.mode != "throughput":
        return
    if cfg.replay_trace or cfg.topics != 1:
        raise UsageError("--opt client=rclpy --mode throughput: one topic and no --replay "
                         "(the rclpy publisher sends one stream back to back)")
    chosen = topic_type(cfg)
    if chosen != DEFAULT_TYPE:
        raise UsageError(f"--opt client=rclpy --mode throughput: the rclpy publisher sends "
                         f"{DEFAULT_TYPE} only, not {chosen} (--payload {cfg.payload}: use a "
                         "byte-array payload, e.g. 64, 64KiB)")


def rclpy_publisher_argv(cfg: "PointConfig", agent_argv: list[str]) -> list[str]:
    """The rclpy publisher's command line in place of the agent pub's ``agent_argv`` (its
    address, run id and report file taken from there), in the distribution's Python."""
    def value(flag: str) -> str:
        return agent_argv[agent_argv.index(flag) + 1]

    from .. import __version__
    line = [str(distribution(cfg).python), str(RCLPY_PUBLISHER),
            "--connect", value("--connect"), "--json", value("--json"),
            "--run-id", value("--run-id"), "--payload", str(cfg.payload_bytes),
            "--warmup-ns", str(cfg.warmup_ns), "--subscribers", str(cfg.subscribers),
            "--reliability", cfg.reliability, "--durability", cfg.durability,
            "--history", cfg.history, "--depth", str(cfg.depth),
            "--discovery-timeout-ns", str(cfg.discovery_timeout_ns),
            "--peer-timeout-ns", str(cfg.peer_timeout_ns), "--tool-version", __version__]
    if cfg.count is not None:
        line += ["--count", str(cfg.count), "--duration-ns", "0"]
    else:
        line += ["--duration-ns", str(cfg.duration_ns or 0)]
    return line


def message_type(cfg: "Point") -> str | None:
    """The ``--opt type`` the agents get for the point's payload; None: the user chose one, or
    the agent's default fits, or the point calls a service (which has a type of its own)."""
    if cfg.option(TYPE_OPT) is not None or getattr(cfg, "service", None) is not None:
        return None
    payload = str(getattr(cfg, "payload", ""))
    return POINT_CLOUD if payload.startswith("PointCloud") else None


def prepare(setup: Setup) -> Plan:
    domain = domain_from_env()
    if setup.cfg.pong == "relay":
        return _relay(setup, domain)
    if setup.cfg.pong == "command":
        return _command(setup, domain)
    if setup.cfg.client == "rclpy" and setup.cfg.service is not None:
        return _server(setup, domain)
    return Plan(f"{domain}/auto")


def _relay(setup: Setup, domain: int) -> Plan:
    """A real rclpy relay node as the echo of the point's message type."""
    return relay_plan(setup, domain, topic_type(setup.cfg))


def relay_plan(setup: Setup, domain: int, chosen: str) -> Plan:
    """A real rclpy relay node of type ``chosen`` as the echo (ros2/relay.py), a topic pair per
    --topics, in the --executor and with the --busy-loop asked for, in the point's QoS and the
    ROS 2 environment ``--opt distro`` picks; the ping connects to its topics. The ros2
    transport's echo, and the raw DDS transports' with ``--opt ros2-type`` (ros2_interop.py)."""
    cfg = setup.cfg
    bases = [_base() for _ in range(cfg.topics)]
    flags = [*qos_flags(cfg), "--executor", cfg.executor,
             "--busy-loop-ms", f"{cfg.busy_loop_ns / 1e6:g}"]
    env = {**agent_environment(cfg), "ROS_DOMAIN_ID": str(domain)}
    setup.daemons.start(lambda: ros2_relay.spec(distribution(cfg), env, bases, chosen, flags))
    return Plan(None, connect=",".join(f"{domain}/{base}" for base in bases))


def _server(setup: Setup, domain: int) -> Plan:
    """A real rclpy service server as the point's server (``--opt client=rclpy``,
    ros2/service_server.py) in the executor asked for, answering as the agent's would; the
    client connects to its service."""
    cfg = setup.cfg
    assert cfg.service is not None
    base = _base()
    flags = ["--executor", cfg.executor, "--server-work-ns", str(cfg.service.server_work_ns)]
    if cfg.service.reply_payload is not None:
        flags += ["--reply-payload", str(cfg.service.reply_payload_bytes)]
    env = {**agent_environment(cfg), "ROS_DOMAIN_ID": str(domain)}
    setup.daemons.start(lambda: ros2_server.spec(distribution(cfg), env, base, flags))
    return Plan(None, connect=f"{domain}/{base}")


def qos_flags(cfg: "Point") -> list[str]:
    """The point's QoS as an rclpy node of mwperf's takes it (ros2/relay.py, stream_sub.py,
    service_server.py): --reliability, --durability, --depth (keep-last depth, 0: keep-all)."""
    depth = ("0" if cfg.history == "keep-all" else cfg.history.removeprefix("keep-last:")
             if cfg.history.startswith("keep-last:") else str(cfg.depth))
    return ["--reliability", cfg.reliability, "--durability", cfg.durability, "--depth", depth]


def _command(setup: Setup, domain: int) -> Plan:
    return command_plan(setup, domain, topic_type(setup.cfg))


def command_plan(setup: Setup, domain: int, chosen: str) -> Plan:
    """The user's program (``--pong-cmd``) as the echo, its {in}/{out} the ping's topics and
    {type} ``chosen``, in the distribution's environment with its Python first on PATH
    (``python3 node.py`` imports that distribution's rclpy). The ros2 transport's, and the raw
    DDS transports' with ``--opt ros2-type`` (ros2_interop.py)."""
    cfg = setup.cfg
    base = _base()
    dist = distribution(cfg)
    env = {**os.environ, **agent_environment(cfg), "ROS_DOMAIN_ID": str(domain)}
    env["PATH"] = os.pathsep.join([str(dist.python.parent), env.get("PATH", os.defpath)])
    words = pong_command.parse(cfg.pong_cmd or "")
    pong_command.program(words, env)
    line = pong_command.argv(words, f"/mwperf/{base}/ping", f"/mwperf/{base}/pong", chosen)
    setup.daemons.start(lambda: pong_spec(line, env, f"the program of {pong_command.FLAG}"))
    return Plan(None, connect=f"{domain}/{base}")


def _base() -> str:
    return f"mwperf_{secrets.randbits(32):08x}"  # a valid ROS 2 name (no '-')


def topic_type(cfg: "Point") -> str:
    """The message type the point's topics carry (``--opt type``, else the payload's)."""
    return cfg.option(TYPE_OPT) or message_type(cfg) or DEFAULT_TYPE


def doctor(check: DoctorChecks) -> list:
    return [check.program("ros2", COMPILER, COMPILER_PACKAGE,
                          "compiles the agent's rcl shim per ROS 2 distribution on first use",
                          needed=False)]


HOOKS = Hooks(prepare=prepare, doctor=doctor, relay="rclpy relay",
              relay_executors=("single", "multi", "events"),
              pong_command="a ROS 2 program in the distribution's environment")
