"""Two emulated hosts joined by an emulated link: what a run with ``--link`` measures across.

``emulated_network`` takes a lease, creates hosts a and b, joins them with the chosen backend
(netem when the kernel has it, else the userspace mwperf-linkem; ``--link-backend`` forces
one), addresses both ends, and on leaving stops the link (its counters go into ``Network.report``)
and releases everything, also after an error or Ctrl-C.
"""

import contextlib
import os
from collections.abc import Iterator
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
TRANSPORTS = ("udp", "tcp")
"""transports that work across an emulated link so far (addressed by the server's IP)"""


@dataclass
class Network:
    """Hosts a (sender) and b (server), the backend in use, and at the end its counters."""

    a: Host
    b: Host
    backend: str
    spec: LinkSpec
    report: dict[str, Any] | None = field(default=None)

    def describe(self) -> dict[str, Any]:
        """The run-result's ``link`` section."""
        return {**self.spec.to_dict(), "backend": self.backend,
                "hosts": {h.name: {"netns": h.netns, "address": h.address} for h in (self.a, self.b)},
                "emulator": self.report}


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
        if backend == "auto":
            backend = "netem" if netem.available(a, lease) else "userspace"
        elif backend == "netem" and not netem.available(a, lease):
            raise UsageError("--link-backend netem: this kernel has no netem qdisc (sch_netem); "
                             "use --link-backend userspace or auto")
        if backend == "netem":
            link: netem.NetemLink | Forwarder = netem.NetemLink.start(spec, a, b, lease)
        else:
            for host in (a, b):
                lease.add("link", host.device)  # inside the namespace: goes with it
            link = Forwarder.start(spec, a, b, workdir, lease)
        network = Network(a, b, backend, spec)
        try:
            address_link(a, spec.up.mtu)
            address_link(b, spec.down.mtu)
            yield network
        finally:
            network.report = link.stop()
