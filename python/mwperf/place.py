"""Where a point's processes run: the one interface the runner, the transports' hooks and the
bridges use, implemented once for each kind of place —

- ``ThisMachine`` (here): every role and daemon on this machine's loopback;
- ``emulation.network.Network``: emulated hosts (network namespaces) joined by emulated links;
- ``remote.hosts.PointHosts``: real hosts over SSH (and this machine).

What a transport needs at a place (Cyclone DDS's unicast peers, Fast DDS's peer list, RustDDS's
interfaces) is not here: it is the transport's ``link_opts`` hook (transports/<name>.py), which
reads the place through this interface.
"""

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol

if TYPE_CHECKING:
    from .result_types import RunResult

LOOPBACK = "127.0.0.1"


class Place(Protocol):
    """What the runner and the hooks may ask of where a point runs."""

    @property
    def pins_interfaces(self) -> bool:
        """Each agent must be told its own interface (a real machine has several: Ethernet,
        WiFi, VPNs; an emulated host has one, two with a tunnel, and loopback one)."""
        ...

    def address_of(self, name: str) -> str:
        """The address of the host the role or daemon ``name`` is placed on, as the others
        reach it."""
        ...

    def netns_of(self, name: str) -> Path | None:
        """The network namespace ``name`` runs in (None: this machine's own)."""
        ...

    def host_addresses(self) -> list[str]:
        """Every address the agents meet at."""
        ...

    def is_remote(self, name: str) -> bool:
        """``name`` runs on another machine (started over SSH, not by this process)."""
        ...

    def outage_window(self) -> tuple[int, int] | None:
        """A scheduled link outage on CLOCK_MONOTONIC, if the place has one."""
        ...

    def record(self, result: "RunResult") -> None:
        """Add what the result keeps about the place (the emulated links' specs and counters:
        ``link``; the real hosts and their facts: ``hosts``)."""
        ...


class ThisMachine:
    """Every role and daemon here, on loopback: nothing to configure, nothing to describe."""

    pins_interfaces: ClassVar[bool] = False

    def address_of(self, name: str) -> str:
        return LOOPBACK

    def netns_of(self, name: str) -> Path | None:
        return None

    def host_addresses(self) -> list[str]:
        return [LOOPBACK]

    def is_remote(self, name: str) -> bool:
        return False

    def outage_window(self) -> tuple[int, int] | None:
        return None

    def record(self, result: "RunResult") -> None:
        pass  # loopback: nothing to describe
