"""Emulated hosts joined by emulated links: what a run with ``--link`` or a scenario's ``hosts:``
measures across.

``emulated_network`` takes a lease, creates one namespace per host (emulation/topology.py: the
hosts, links, addressing and routes), builds every wire with the chosen backend (netem when the
kernel has it and it can express every spec, else the userspace mwperf-linkem;
``--link-backend`` forces one), addresses the ends, adds the routes, and on leaving stops the
links (their counters go into ``Network.reports``) and releases everything, also after an error
or Ctrl-C. ``--link SPEC`` alone is the two-host topology (topology.two_hosts).

A shared segment is a hub namespace that routes between its members, each member joined to it
by a wire of its own. The segment's impairments are applied once per crossing, on the hub's
side of the receiving member's wire (the sending member's wire to the hub is clean): a packet
between two members sees the spec exactly once, as on a switched LAN: each member's rate limit
and queue are its own. A segment with ``medium: shared`` (a WiFi cell, a bus) has one medium
instead: every member's wire serializes on one timeline (linkem ``--medium``, a file in the
point's scratch folder), so the members together get the segment's rate and one sender's
traffic delays the others'. Not modelled: collisions and their retries (beyond the spec's CSMA
``backoff``), and broadcast/multicast (the hub routes unicast IP only).
"""

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..leases import Lease
from ..transports import crossing_transports, hook, profiles
from . import netem
from .hosts import Host, Port, add_route, address_port, create_host, enable_forwarding
from .links import Direction, LinkSpec, parse_link
from .topology import Addressing, Topology, Wire, plan_addresses
from .userspace import Forwarder
from ..layers_link import layer_log_paths
from ..result_types import RunResult, RunResultLink

if TYPE_CHECKING:
    from ..security.wireguard import Tunnel

BACKENDS = ("auto", "netem", "userspace")


@dataclass
class Network:
    """The hosts (by name), their addresses, each link's spec, the backend, and at the end the
    emulators' counters (one per wire). A place (place.py): emulated hosts. With a tunnel
    (``--secure wireguard``, security/wireguard.py) the agents and daemons meet at its
    addresses, and each is told its own: a host then has two interfaces, and a middleware that
    announced its link address would be reached around the tunnel."""

    topology: Topology
    hosts: dict[str, Host]
    addressing: Addressing
    specs: dict[str, LinkSpec]
    """link name -> its parsed spec"""
    backend: str
    reports: list[dict[str, Any] | None] = field(default_factory=list)
    outages: list[tuple[int, int]] = field(default_factory=list)
    """each wire's scheduled outage on CLOCK_MONOTONIC (userspace backend: from the emulator's
    epoch), filled as the wires come up"""

    outage_every_ns: int = 0
    """the outage repeats this often (``every=``, from one start to the next; 0 = once)"""

    tunnel: "Tunnel | None" = None
    """the WireGuard tunnel between the hosts (``--secure wireguard``), once it is up"""

    @property
    def pins_interfaces(self) -> bool:
        """Without a tunnel a host has one interface, on its links: agents need not be told
        theirs; with one, they must use the tunnel's."""
        return self.tunnel is not None

    def outage_window(self) -> tuple[int, int] | None:
        """The (first) outage on CLOCK_MONOTONIC (the agents' clock): the union of every wire's (with
        ``--link`` alone: both directions of the one link); None without one, or with a backend
        that cannot tell (netem cannot schedule an outage)."""
        if not self.outages:
            return None
        return min(w[0] for w in self.outages), max(w[1] for w in self.outages)

    def address_of(self, name: str) -> str:
        """The address of the host role or daemon ``name`` is placed on (its tunnel address
        with a tunnel)."""
        return self._addresses()[self.topology.host_of(name)]

    def _addresses(self) -> dict[str, str]:
        """host -> where the agents meet: its tunnel address, else its link address"""
        return self.tunnel.addresses if self.tunnel is not None else self.addressing.addresses

    def netns_of(self, name: str) -> Path:
        """The namespace file of the host role or daemon ``name`` is placed on."""
        return self.hosts[self.topology.host_of(name)].netns_path

    def host_addresses(self) -> list[str]:
        """Every host's address (as ``address_of``), in the topology's order."""
        return [self._addresses()[h] for h in self.topology.hosts]

    def is_remote(self, name: str) -> bool:
        """Emulated hosts are namespaces of this machine: nothing runs elsewhere."""
        return False

    def wire_ends(self) -> list[dict[str, str]]:
        """Each wire's link and hosts (``from`` = up's sender), in the order of ``reports``."""
        return [{"link": w.link.name, "from": w.near.node, "to": w.far.node}
                for w in self.addressing.wires]

    def layer_logs(self) -> list[dict[str, Path]]:
        """Per wire (the order of ``wire_ends`` and ``reports``) its emulator's layer logs,
        ``{"up": path, "down": path}`` (layers_link.py); empty for a wire whose emulator wrote
        none (netem, not asked, killed). Known once the block of ``emulated_network`` is left."""
        return [layer_log_paths(report) for report in self.reports]

    def record(self, result: "RunResult") -> None:
        """The result's ``link``: the links' specs, the backend, the emulators' counters."""
        result["link"] = self.describe()

    def describe(self) -> RunResultLink:
        """The run-result's ``link`` section: the first link's spec and emulator counters at
        the top (as with ``--link``), every host, every link with its wires' counters, and the
        outage window on CLOCK_MONOTONIC (``outage_window``, null without one)."""
        first = self.topology.links[0]
        hosts = {name: {"netns": self.hosts[name].netns,
                        "address": self.addressing.addresses[name]}
                 for name in self.topology.hosts}
        links = []
        for link in self.topology.links:
            wires = [(w, r) for w, r in zip(self.addressing.wires, self.reports)
                     if w.link == link]
            links.append({"name": link.name, "hosts": list(link.hosts), "segment": link.segment,
                          "shared": link.shared,
                          **self.specs[link.name].to_dict(),
                          "emulator": [{"from": w.near.node, "to": w.far.node, "report": r}
                                       for w, r in wires]})
        window = self.outage_window()
        return {**self.specs[first.name].to_dict(), "backend": self.backend, "hosts": hosts,
                "emulator": self.reports[0] if self.reports else None,
                "links": links, "place": dict(self.topology.place),
                **({"tunnel": self.tunnel.describe(
                    self.wire_ends(), self.reports if self.backend == "userspace" else None)}
                   if self.tunnel is not None else {}),
                "outage_window": None if window is None else {
                    "start_ns": window[0], "end_ns": window[1],
                    "every_ns": self.outage_every_ns}}


def scheduled_window(epoch_ns: int, spec: LinkSpec) -> tuple[int, int] | None:
    """``spec``'s outage on CLOCK_MONOTONIC for a link whose time 0 is ``epoch_ns``: the union
    of both directions' windows (the link is not fully up while either is down)."""
    windows = [(epoch_ns + d.outage_at_ns, epoch_ns + d.outage_at_ns + d.outage_ns)
               for d in (spec.up, spec.down) if d.outage_ns]
    if not windows:
        return None
    return min(w[0] for w in windows), max(w[1] for w in windows)


def check_transport(transport: str, option: Callable[[str], str | None],
                    topology: Topology | None = None,
                    roles: tuple[str, str] = ("pong", "ping")) -> None:
    """Refuse, as a usage error, what cannot run across an emulated link (yet).

    ``option``: the value of a transport ``--opt KEY`` (PointConfig.option); ``topology`` a
    scenario's hosts (None: ``--link`` alone, two hosts on one point-to-point link); ``roles``
    the point's two agents. What a transport itself refuses is its hook's ``check_link``.
    """
    known = profiles()
    crossing = crossing_transports()
    if transport in known and known[transport].local_only:
        raise UsageError(f"--link is not supported with --transport {transport}: it is "
                         f"host-local IPC, nothing crosses a link; use "
                         f"{', '.join(crossing)}")
    if transport not in crossing:
        raise UsageError(f"--link is not supported with --transport {transport} yet; use "
                         f"{', '.join(crossing)}")
    hook(transport).check_link(option, topology, roles)


def require_root() -> None:
    """Refuse --link without root, in one line saying why."""
    if os.geteuid() != 0:
        raise UsageError("--link: emulated links need root (network namespaces and TUN devices); "
                         "run mwperf as root, or drop --link to measure over loopback")


def link_specs(topology: Topology, point_link: str | None) -> dict[str, LinkSpec]:
    """Each link's parsed spec; a link without one takes the point's ``link``."""
    specs = {}
    for link in topology.links:
        text = link.spec if link.spec is not None else point_link
        if text is None:
            raise UsageError(f"link '{link.name}' has no spec: give it one in 'links:' or set "
                             f"the field 'link' (--link), e.g. link: wifi-80211n")
        specs[link.name] = parse_link(text)
    return specs


def wire_spec(wire: Wire, spec: LinkSpec) -> LinkSpec:
    """What one wire applies: a point-to-point link's spec as it is; a segment member's wire
    applies the spec towards the member (``down``) and nothing towards the hub (``up``)."""
    if not wire.link.segment:
        return spec
    return replace(spec, up=Direction(mtu=spec.up.mtu), down=spec.up)


@contextlib.contextmanager
def emulated_network(topology: Topology, point_link: str | None, backend: str, workdir: Path,
                     purpose: str, packet_log: bool = False, layer_log: bool = False,
                     tunnel: bool = False) -> Iterator[Network]:
    """The hosts of ``topology`` joined by its links; everything is gone again after the block.
    ``packet_log``: the userspace emulators log every packet (``--wire-bytes``, wire.py);
    ``layer_log``: every mwperf message's read and release times (``--layers``,
    layers_link.py; found after the block with ``Network.layer_logs``). netem logs neither.
    ``tunnel``: a WireGuard tunnel joins the hosts over the links (``--secure wireguard``); its
    counters are read before the links stop."""
    require_root()
    specs = link_specs(topology, point_link)
    with Lease.take(purpose) as lease:
        plan = plan_addresses(topology, subnet_base(lease), lease.prefix)
        nodes = {name: create_host(lease, name) for name in (*topology.hosts, *plan.hubs)}
        wires = [(w, wire_spec(w, specs[w.link.name])) for w in plan.wires]
        first = nodes[topology.hosts[0]]
        shared = [k.name for k in topology.links if k.shared]
        if backend == "auto":  # netem when the kernel has it and it can express every link
            backend = ("netem" if all(netem.expresses(s) for _, s in wires) and not shared
                       and netem.available(first, lease) else "userspace")
        elif backend == "netem" and shared:
            raise UsageError(f"--link-backend netem: segment '{shared[0]}' has a shared medium, "
                             f"which only mwperf's userspace emulator models; use "
                             f"--link-backend userspace or auto")
        elif backend == "netem" and not netem.available(first, lease):
            raise UsageError("--link-backend netem: this kernel has no netem qdisc (sch_netem); "
                             "use --link-backend userspace or auto")
        network = Network(topology, {h: nodes[h] for h in topology.hosts}, plan, specs, backend)
        started: list[netem.NetemLink | Forwarder] = []
        try:
            for number, (wire, spec) in enumerate(wires):
                near, far = (Port(nodes[e.node], e.device, e.address, e.prefix_len)
                             for e in (wire.near, wire.far))
                if backend == "netem":
                    started.append(netem.NetemLink.start(spec, near, far, lease))
                else:
                    for port in (near, far):
                        lease.add("link", port.device)  # inside the namespace: goes with it
                    medium = (workdir / f"medium-{wire.link.name}" if wire.link.shared
                              else None)
                    started.append(Forwarder.start(spec, near, far, workdir, lease,
                                                   "linkem" if number == 0 else
                                                   f"linkem-{number}", medium, packet_log,
                                                   layer_log=layer_log))
                    window = (None if started[-1].epoch_ns is None
                              else scheduled_window(started[-1].epoch_ns, spec))
                    network.outages += [window] if window else []
                    network.outage_every_ns = max(network.outage_every_ns,
                                                  spec.up.outage_every_ns,
                                                  spec.down.outage_every_ns)
                address_port(near, spec.up.mtu)
                address_port(far, spec.down.mtu)
            _route(plan, nodes)
            if tunnel:
                network.tunnel = _tunnel(network, wires, workdir, lease)
            yield network
        finally:
            try:
                if network.tunnel is not None:
                    network.tunnel.stop(lease)
            finally:
                network.reports = [link.stop() for link in started]


def _tunnel(network: Network, wires: list[tuple[Wire, LinkSpec]], workdir: Path,
            lease: Lease) -> "Tunnel":
    """The WireGuard tunnel between the network's hosts (security/wireguard.py), each reached
    at its link address; its MTU from the smallest link MTU. Imported here only: the key
    library is loaded for a tunnelled run alone."""
    from ..security.wireguard import start_tunnel
    mtus = [mtu for _, spec in wires for mtu in (spec.up.mtu, spec.down.mtu)]
    return start_tunnel(network.hosts, dict(network.addressing.addresses), subnet_base(lease),
                        mtus, workdir, lease)


def subnet_base(lease: Lease) -> tuple[int, int]:
    """(X, Y) of the run's first subnet ``10.X.Y.0/24``: the lease tag's first two bytes (two
    runs side by side get different ones)."""
    return int(lease.tag[0:2], 16), int(lease.tag[2:4], 16)


def _route(plan: Addressing, nodes: dict[str, Host]) -> None:
    """Forwarding on every node with several ports, then every route of the plan."""
    ports: dict[str, int] = {}
    for wire in plan.wires:
        for end in (wire.near, wire.far):
            ports[end.node] = ports.get(end.node, 0) + 1
    for node, count in ports.items():
        if count > 1:
            enable_forwarding(nodes[node])
    for route in plan.routes:
        add_route(nodes[route.node], route.subnet, route.gateway, route.device)

