"""RustDDS: the domain of $ROS_DOMAIN_ID (else 0), a topic base the listening agent picks. Across emulated hosts it runs on
the hosts' link interfaces (``--opt network=auto``) and discovers by multicast only, which
crosses one point-to-point link but no routed hop."""

from collections.abc import Callable

from ..emulation.topology import Topology
from ..errors import UsageError
from ..place import Place
from . import ros2_interop
from .dds_domain import domain_from_env
from .hooks import DoctorChecks, Hooks, Plan, Setup


def prepare(setup: Setup) -> Plan:
    if setup.cfg.pong in ("relay", "command"):  # a foreign ROS 2 echo (--opt ros2-type)
        return ros2_interop.relay(setup, domain_from_env())
    return Plan(f"{domain_from_env()}/auto")


def link_opts(place: Place, role: str) -> tuple[str, ...]:
    return ("network=auto",)


def check_link(option: Callable[[str], str | None], topology: Topology | None,
               roles: tuple[str, str]) -> None:
    if option("network") is not None:
        raise UsageError("--opt network: with --link mwperf puts RustDDS on the link's "
                         "interfaces itself; drop --opt network")
    if topology is not None:
        _check_multicast_path(topology, roles)


def _check_multicast_path(topology: Topology, roles: tuple[str, str]) -> None:
    """The two agents must share a host or a point-to-point link."""
    a, b = (topology.host_of(role) for role in roles)
    if a == b or any(not k.segment and set(k.hosts) == {a, b} for k in topology.links):
        return
    raise UsageError(f"transport rustdds: its agents on hosts '{a}' and '{b}' share no "
                     f"point-to-point link, and RustDDS discovers peers by multicast only, which "
                     f"mwperf's routed hops and segments do not carry; link {a}<->{b} directly, "
                     f"or use cyclonedds (unicast discovery)")


def doctor(check: DoctorChecks) -> list:
    return [check.built_in("rustdds", "RustDDS crate")]


HOOKS = Hooks(prepare=prepare, doctor=doctor, link_opts=link_opts, check_link=check_link,
              relay="rclpy relay (with --opt ros2-type)",
              pong_command="a ROS 2 program (with --opt ros2-type)")
