"""Fast DDS (eProsima, ROS 2's default middleware): the domain of $ROS_DOMAIN_ID (else 0), a topic base the listening agent
picks, the same ROS 2 topic and type names as cyclonedds and rustdds (they interoperate). On
loopback by default with unicast discovery; across emulated or real hosts mwperf gives every
agent the hosts' addresses as discovery peers and lets it pick its own among them. Needs the
Debian library libfastrtps (the agent loads its shim of it at run time); with ``--opt
distro=jazzy|kilted`` the Fast DDS of that ROS 2 distribution instead (the agent compiles its
shim against it with ``c++`` on first use; parts/fastdds_distro.py gives the agents the
distribution's environment)."""

from collections.abc import Callable

from ..errors import UsageError
from ..place import Place
from . import ros2_interop
from .dds_domain import domain_from_env
from .hooks import DoctorChecks, Hooks, Plan, Setup

LIBRARY = "fastrtps"
PACKAGE = "libfastrtps2.9"
COMPILER = "c++"
COMPILER_PACKAGE = "g++"


def prepare(setup: Setup) -> Plan:
    if setup.cfg.pong in ("relay", "command"):  # a foreign ROS 2 echo (--opt ros2-type)
        return ros2_interop.relay(setup, domain_from_env())
    return Plan(f"{domain_from_env()}/auto")


def link_opts(place: Place, role: str) -> tuple[str, ...]:
    """Unicast discovery of every host's address; each agent on its own host's interface (told
    it where the place pins interfaces, e.g. a tunnel's: Fast DDS would also announce the
    link's)."""
    own = place.address_of(role) if place.pins_interfaces else "auto"
    return (f"interface={own}", "peers=" + ",".join(place.host_addresses()))


def check_link(option: Callable[[str], str | None], topology: object, roles: object) -> None:
    for key in ("interface", "peers"):
        if option(key) is not None:
            raise UsageError(f"--opt {key}: with --link mwperf sets Fast DDS's interface and "
                             f"discovery peers itself (each host's link address); drop --opt {key}")


def doctor(check: DoctorChecks) -> list:
    return [check.library("fastdds", LIBRARY, PACKAGE),
            check.program("fastdds", COMPILER, COMPILER_PACKAGE,
                          "compiles the Fast DDS shim against a ROS 2 distribution's Fast DDS "
                          "(--opt distro) on first use", needed=False)]


HOOKS = Hooks(prepare=prepare, doctor=doctor, link_opts=link_opts, check_link=check_link,
              relay="rclpy relay (with --opt ros2-type)",
              pong_command="a ROS 2 program (with --opt ros2-type)")
