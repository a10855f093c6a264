"""Cyclone DDS: the domain of $ROS_DOMAIN_ID (else 0), a topic base the listening agent picks. Across emulated hosts mwperf
configures it itself (the link's interfaces, no multicast, unicast discovery of every host), so
a user's ``--opt config`` is refused there. Needs the Debian library libddsc."""

from collections.abc import Callable

from typing import TYPE_CHECKING

from ..errors import UsageError
from ..place import Place
from .profiles import profile

if TYPE_CHECKING:
    from ..agent import Agent
from . import ros2_interop
from .dds_domain import domain_from_env
from .hooks import DoctorChecks, Hooks, Plan, Setup

def loopback_config(agent: "Agent | None" = None) -> str:
    """The agents' own loopback configuration, as the agent defines it (its descriptor's
    default for ``--opt config``): a bridge or a reference tool here joins the agents' domain
    the same way."""
    return profile("cyclonedds", agent).defaults["config"]


LIBRARY = "ddsc"
PACKAGE = "libddsc0debian"


def prepare(setup: Setup) -> Plan:
    if setup.cfg.pong in ("relay", "command"):  # a foreign ROS 2 echo (--opt ros2-type)
        return ros2_interop.relay(setup, domain_from_env())
    return Plan(f"{domain_from_env()}/auto")


def unicast_config(addresses: list[str], interface: str | None = None) -> str:
    """``--opt config=...`` for Cyclone DDS across hosts: no multicast, unicast discovery of
    every host's address (emulated or real), on the interface holding ``interface`` (an
    address), else the one Cyclone picks (an emulated host has one)."""
    peers = "".join(f'<Peer address="{address}"/>' for address in addresses)
    chosen = (f'<NetworkInterface address=\"{interface}\"/>' if interface
              else '<NetworkInterface autodetermine=\"true\"/>')
    return ("config=<CycloneDDS><Domain Id=\"any\"><General><Interfaces>"
            f"{chosen}</Interfaces>"
            "<AllowMulticast>false</AllowMulticast></General><Discovery>"
            f"<ParticipantIndex>auto</ParticipantIndex><Peers>{peers}</Peers></Discovery>"
            "</Domain></CycloneDDS>")


def link_opts(place: Place, role: str) -> tuple[str, ...]:
    """Unicast discovery of every host's address (emulated hosts, or real ones: remote/). On
    real hosts each agent on the interface that holds its own address on the path between the
    hosts: a real machine has several interfaces (Ethernet, WiFi, docker bridges, VPNs) and
    Cyclone's automatic choice may be one the other host cannot reach."""
    own = place.address_of(role) if place.pins_interfaces else None
    return (unicast_config(place.host_addresses(), own),)


def check_link(option: Callable[[str], str | None], topology: object, roles: object) -> None:
    if option("config") is not None:
        raise UsageError("--opt config: with --link mwperf configures Cyclone DDS itself (the "
                         "link's interface, unicast discovery of every host); drop --opt config")


def doctor(check: DoctorChecks) -> list:
    return [check.library("cyclonedds", LIBRARY, PACKAGE)]


HOOKS = Hooks(prepare=prepare, doctor=doctor, link_opts=link_opts, check_link=check_link,
              relay="rclpy relay (with --opt ros2-type)",
              pong_command="a ROS 2 program (with --opt ros2-type)")
