"""Two emulated hosts joined by an emulated link: what a run with ``--link`` measures across.

``emulated_network`` takes a lease, creates hosts a and b, joins them with the chosen backend
(netem when the kernel has it and it can express the spec, else the userspace mwperf-linkem;
``--link-backend`` forces one), addresses both ends, and on leaving stops the link (its counters go into ``Network.report``)
and releases everything, also after an error or Ctrl-C.
"""

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..leases import Lease
from . import netem
from .hosts import Host, address_link, create_hosts
from .links import LinkSpec
from .userspace import Forwarder

BACKENDS = ("auto", "netem", "userspace")
TRANSPORTS = ("udp", "tcp", "zenoh", "cyclonedds")
"""transports that work across an emulated link so far (addressed by the server's IP)"""


@dataclass
class Network:
    """Hosts a (sender) and b (server), the backend in use, and at the end its counters."""

    a: Host
    b: Host
    backend: str
    spec: LinkSpec
    report: dict[str, Any] | None = field(default=None)
    epoch_ns: int | None = None
    """CLOCK_MONOTONIC at the link's time 0 (userspace backend): where an outage counts from"""

    def outage_window(self) -> tuple[int, int] | None:
        """The scheduled outage on CLOCK_MONOTONIC, known once the link is up (None: none, or
        a backend that cannot tell)."""
        return None if self.epoch_ns is None else scheduled_window(self.epoch_ns, self.spec)

    def listen_address(self, transport: str) -> str:
        """Where the server (on host b) listens, port chosen by the system."""
        if transport == "zenoh":
            return f"tcp/{self.b.address}:0"
        if transport == "cyclonedds":
            return "0/auto"  # a fresh topic base in domain 0; discovery: agent_opts
        return f"{self.b.address}:0"

    def agent_opts(self, transport: str) -> tuple[str, ...]:
        """``--opt`` settings both agents need to meet across the link: Cyclone DDS on the link's
        device (the only non-loopback one in each host) with unicast discovery of both hosts."""
        if transport != "cyclonedds":
            return ()
        peers = "".join(f'<Peer address="{h.address}"/>' for h in (self.a, self.b))
        return ("config=<CycloneDDS><Domain Id=\"any\"><General><Interfaces>"
                "<NetworkInterface autodetermine=\"true\"/></Interfaces>"
                "<AllowMulticast>false</AllowMulticast></General><Discovery>"
                f"<ParticipantIndex>auto</ParticipantIndex><Peers>{peers}</Peers></Discovery>"
                "</Domain></CycloneDDS>",)

    def describe(self) -> dict[str, Any]:
        """The run-result's ``link`` section (``outage_window``: the outage on CLOCK_MONOTONIC,
        the agents' clock; the emulator's report has each direction's and its dropped packets)."""
        window = self.outage_window()
        return {**self.spec.to_dict(), "backend": self.backend,
                "hosts": {h.name: {"netns": h.netns, "address": h.address} for h in (self.a, self.b)},
                "emulator": self.report,
                "outage_window": None if window is None else {"start_ns": window[0],
                                                              "end_ns": window[1]}}


def scheduled_window(epoch_ns: int, spec: LinkSpec) -> tuple[int, int] | None:
    """``spec``'s outage on CLOCK_MONOTONIC for a link whose time 0 is ``epoch_ns``: the union
    of both directions' windows (the link is not fully up while either is down)."""
    windows = [(epoch_ns + d.outage_at_ns, epoch_ns + d.outage_at_ns + d.outage_ns)
               for d in (spec.up, spec.down) if d.outage_ns]
    if not windows:
        return None
    return min(w[0] for w in windows), max(w[1] for w in windows)


LOCAL_ONLY = ("uds", "iceoryx2")
"""host-local IPC: nothing crosses a network, so there is no link to emulate"""


def check_transport(transport: str, option: Callable[[str], str | None]) -> None:
    """Refuse, as a usage error, what cannot run across an emulated link (yet).

    ``option``: the value of a transport ``--opt KEY`` (PointConfig.option).
    """
    if transport in LOCAL_ONLY:
        raise UsageError(f"--link is not supported with --transport {transport}: it is "
                         f"host-local IPC, nothing crosses a link; use "
                         f"{', '.join(TRANSPORTS)}")
    if transport not in TRANSPORTS:
        raise UsageError(f"--link is not supported with --transport {transport} yet; use "
                         f"{', '.join(TRANSPORTS)}")
    if transport == "zenoh" and option("mode") == "client":
        raise UsageError("--link is not supported with --transport zenoh --opt mode=client yet "
                         "(the router is not placed on an emulated host); use peer mode")
    if transport == "cyclonedds" and option("config") is not None:
        raise UsageError("--opt config: with --link mwperf configures Cyclone DDS itself (the "
                         "link's interface, unicast discovery of both hosts); drop --opt config")


def require_root() -> None:
    """Refuse --link without root, in one line saying why."""
    if os.geteuid() != 0:
        raise UsageError("--link: emulated links need root (network namespaces and TUN devices); "
                         "run mwperf as root, or drop --link to measure over loopback")


@contextlib.contextmanager
def emulated_network(spec: LinkSpec, backend: str, workdir: Path, purpose: str
                     ) -> Iterator[Network]:
    """Hosts a and b joined by ``spec``; everything is gone again after the block."""
    require_root()
    with Lease.take(purpose) as lease:
        a, b = create_hosts(lease)
        if backend == "auto":  # netem when the kernel has it and it can express the spec
            backend = ("netem" if netem.expresses(spec) and netem.available(a, lease)
                       else "userspace")
        elif backend == "netem" and not netem.available(a, lease):
            raise UsageError("--link-backend netem: this kernel has no netem qdisc (sch_netem); "
                             "use --link-backend userspace or auto")
        if backend == "netem":
            link: netem.NetemLink | Forwarder = netem.NetemLink.start(spec, a, b, lease)
        else:
            for host in (a, b):
                lease.add("link", host.device)  # inside the namespace: goes with it
            link = Forwarder.start(spec, a, b, workdir, lease)
        network = Network(a, b, backend, spec,
                          epoch_ns=link.epoch_ns if isinstance(link, Forwarder) else None)
        try:
            address_link(a, spec.up.mtu)
            address_link(b, spec.down.mtu)
            yield network
        finally:
            network.report = link.stop()
