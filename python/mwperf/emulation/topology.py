"""Which emulated hosts a point runs on, how links join them, where each role and daemon runs.

A ``Topology`` is pure data (JSON-able through ``to_dict``/``from_dict``, so it travels inside a
point's options and is recorded in its result). ``--link SPEC`` alone is the special case
``two_hosts()``: hosts ``a`` and ``b``, one point-to-point link, ping/pub on ``a``, pong/sub
(and any daemon) on ``b``. A scenario declares its own (scenario/hosts.py reads ``hosts:``,
``links:`` and ``place:``).

Links are point-to-point (two hosts; ``up`` is the direction from the first named to the
second) or shared segments (several hosts and a hub that routes between them; see
``emulation/network.py`` for what a segment models). A link without its own spec takes the
point's ``link`` option, so ``link: [ethernet-1g, wifi-80211n]`` stays an axis.

``plan_addresses`` does the IP addressing and routing (docs/links.md, "Hosts"): link number i
(0-based, in declaration order) gets the subnet ``10.X.(Y+i).0/24`` (X.Y from the lease tag);
on a point-to-point link the first host is ``.1``, the second ``.2``; on a segment the members
are ``.1``, ``.2``, ... in the order listed and the hub is ``.254``. A host's address (what
agents and daemons on it bind to and are reached at) is its address on its first link. Every
node routes every subnet it is not on to the next hop of a shortest path, so every host reaches
every other; hosts on several links forward.
"""

from collections import deque
from dataclasses import dataclass
from typing import Any

from ..roles import ROLES as MODE_ROLES, SENDERS

SENDER_ROLES = SENDERS
SERVER_ROLES = tuple(dict.fromkeys(server for server, _ in MODE_ROLES.values()))
"""pong, sub, server: each mode's server role (roles.py owns them)"""
ROLES = tuple(role for pair in zip(SENDER_ROLES, SERVER_ROLES) for role in pair)
"""ping, pong, pub, sub, client, server"""
DAEMONS = ("rosmaster", "mosquitto", "zenohd", "foxglove-server")
PLACEABLE = ROLES + DAEMONS
PREFIX_LEN = 24
HUB_OCTET = 254
MAX_SEGMENT_HOSTS = HUB_OCTET - 1
MAX_LINKS = 99
"""two digits of link number in a device name (15 bytes: the lease prefix takes 9)"""


@dataclass(frozen=True)
class Link:
    """One declared link: its name, the hosts it joins, and its spec (None: the point's link)."""

    name: str
    """``a<->b`` for a point-to-point link, the segment's own name otherwise"""
    hosts: tuple[str, ...]
    spec: str | None
    segment: bool = False
    shared: bool = False
    """a segment whose members share one medium (``medium: shared``, e.g. a WiFi cell): its
    rate is the whole segment's, not each member's (userspace emulator: linkem --medium)"""


@dataclass(frozen=True)
class Topology:
    """Hosts, the links between them, and where each role/daemon runs (every name placed)."""

    hosts: tuple[str, ...]
    links: tuple[Link, ...]
    place: tuple[tuple[str, str], ...]
    """(role or daemon, host) for every name in PLACEABLE"""

    def host_of(self, name: str) -> str:
        """The host role or daemon ``name`` runs on."""
        return dict(self.place)[name]

    def describe(self) -> str:
        """One line for people: 'hosts a, b; links a<->b (spec: link); place ping@a, ...'."""
        links = ", ".join(f"{k.name}{' [' + ' '.join(k.hosts) + ']' if k.segment else ''}"
                          f"{' shared' if k.shared else ''} "
                          f"({k.spec or 'spec: link'})" for k in self.links)
        place = " ".join(f"{name}@{host}" for name, host in self.place)
        return f"hosts {', '.join(self.hosts)}; links {links}; place {place}"

    def to_dict(self) -> dict[str, Any]:
        """Plain data (a point option, the result's ``topology``)."""
        return {"hosts": list(self.hosts),
                "links": [{"name": k.name, "hosts": list(k.hosts), "spec": k.spec,
                           "segment": k.segment, "shared": k.shared} for k in self.links],
                "place": dict(self.place)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Topology":
        """The inverse of ``to_dict``."""
        return cls(tuple(data["hosts"]),
                   tuple(Link(k["name"], tuple(k["hosts"]), k["spec"], bool(k["segment"]),
                              bool(k.get("shared", False)))
                         for k in data["links"]),
                   tuple(sorted(data["place"].items())))


def complete_place(given: dict[str, str], hosts: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """Every placeable name with a host: the senders (ping, pub, client) go where the first of
    them given is, the servers (pong, sub, server) likewise; daemons default to the server's
    host. ``given`` must place a sender and a server (callers check that, with their own error
    messages)."""
    place = dict(given)
    for group in (SENDER_ROLES, SERVER_ROLES):
        host = next((place[role] for role in group if role in place), "")
        for role in group:
            place.setdefault(role, host)
    for daemon in DAEMONS:
        place.setdefault(daemon, place["pong"])
    assert all(host in hosts for host in place.values()), place
    return tuple(sorted(place.items()))


def two_hosts() -> Topology:
    """What ``--link SPEC`` alone means: hosts a and b, one link with the point's spec."""
    return Topology(("a", "b"), (Link("a<->b", ("a", "b"), None),),
                    complete_place({"ping": "a", "pong": "b"}, ("a", "b")))


def unreachable(hosts: tuple[str, ...], links: tuple[Link, ...]) -> list[str]:
    """The hosts the first host cannot reach over ``links`` (empty when all are connected)."""
    if not hosts:
        return []
    seen = {hosts[0]}
    todo = deque([hosts[0]])
    while todo:
        here = todo.popleft()
        for link in links:
            if here in link.hosts:
                for there in link.hosts:
                    if there not in seen:
                        seen.add(there)
                        todo.append(there)
    return [h for h in hosts if h not in seen]


@dataclass(frozen=True)
class End:
    """One end of a wire: a device in a node's namespace with its address."""

    node: str
    """a host name, or ``hub:<segment>`` for a segment's hub"""
    device: str
    address: str
    prefix_len: int


@dataclass(frozen=True)
class Wire:
    """One emulated wire (one forwarder or veth pair): a point-to-point link, or one member's
    port on a segment (``near`` = the member, ``far`` = the hub)."""

    link: Link
    index: int
    """the link's position in the topology"""
    near: End
    far: End


@dataclass(frozen=True)
class Route:
    """``ip route add SUBNET via GATEWAY dev DEVICE onlink`` in ``node``'s namespace (onlink: a
    hub's ports carry only a /32 address, and TUN devices have no neighbours to resolve)."""

    node: str
    subnet: str
    gateway: str
    device: str


@dataclass(frozen=True)
class Addressing:
    """The wires to build, each host's address, the hubs' addresses and every route."""

    wires: tuple[Wire, ...]
    addresses: dict[str, str]
    """host -> its address (on its first link)"""
    hubs: dict[str, str]
    """hub node -> its address (on loopback, /32)"""
    routes: tuple[Route, ...]


def hub_node(link: Link) -> str:
    """The node name of a segment's hub."""
    return f"hub:{link.name}"


def plan_addresses(topology: Topology, base: tuple[int, int], device_prefix: str) -> Addressing:
    """Subnets, addresses, device names and routes for ``topology`` (see the module doc).

    ``base`` = (X, Y) of ``10.X.Y.0``; device names are ``device_prefix`` + a short suffix
    (``a``/``b`` for the first link's two ends, as ``--link`` always named them).
    """
    x, y = base
    wires: list[Wire] = []
    hubs: dict[str, str] = {}
    subnets: list[str] = []
    for index, link in enumerate(topology.links):
        net = f"10.{x}.{(y + index) % 256}"
        subnets.append(f"{net}.0/{PREFIX_LEN}")
        if not link.segment:
            first, second = link.hosts
            names = ("a", "b") if index == 0 else (f"{index}a", f"{index}b")
            wires.append(Wire(link, index,
                              End(first, device_prefix + names[0], f"{net}.1", PREFIX_LEN),
                              End(second, device_prefix + names[1], f"{net}.2", PREFIX_LEN)))
            continue
        hub = hub_node(link)
        hubs[hub] = f"{net}.{HUB_OCTET}"
        for member, host in enumerate(link.hosts, start=1):
            wires.append(Wire(link, index,
                              End(host, f"{device_prefix}{index}m{member}", f"{net}.{member}",
                                  PREFIX_LEN),
                              End(hub, f"{device_prefix}{index}h{member}", f"{net}.{HUB_OCTET}",
                                  32)))
    addresses: dict[str, str] = {}
    for wire in wires:
        addresses.setdefault(wire.near.node, wire.near.address)
        if wire.far.node in topology.hosts:
            addresses.setdefault(wire.far.node, wire.far.address)
    return Addressing(tuple(wires), addresses, hubs, _routes(wires, subnets))


def _routes(wires: list[Wire], subnets: list[str]) -> tuple[Route, ...]:
    """For every node and every subnet it is not on: the first hop of a shortest path."""
    neighbours: dict[str, list[tuple[str, End, End]]] = {}
    for wire in wires:  # node -> (neighbour, my end, its end)
        neighbours.setdefault(wire.near.node, []).append((wire.far.node, wire.near, wire.far))
        neighbours.setdefault(wire.far.node, []).append((wire.near.node, wire.far, wire.near))
    on: dict[str, set[int]] = {}
    for wire in wires:
        for end in (wire.near, wire.far):
            on.setdefault(end.node, set()).add(wire.index)
    routes = []
    for node in neighbours:
        first_hop = _first_hops(node, neighbours)
        for index, subnet in enumerate(subnets):
            if index in on[node]:
                if node.startswith("hub:"):  # a hub reaches each member through its port
                    routes += [Route(node, f"{far.address}/32", far.address, mine.device)
                               for _, mine, far in neighbours[node] if far.address != mine.address
                               and _same_subnet(far.address, subnet)]
                continue
            target = min((n for n in neighbours if index in on[n]),
                         key=lambda n: first_hop[n][0])
            _, mine, far = first_hop[target][1]
            routes.append(Route(node, subnet, far.address, mine.device))
    return tuple(routes)


def _first_hops(start: str, neighbours: dict[str, list[tuple[str, End, End]]]
                ) -> dict[str, tuple[int, tuple[str, End, End]]]:
    """node -> (distance, the first step from ``start`` towards it), breadth first."""
    found: dict[str, tuple[int, tuple[str, End, End]]] = {}
    todo: deque[tuple[str, int, tuple[str, End, End]]] = deque(
        (step[0], 1, step) for step in neighbours[start])
    seen = {start}
    while todo:
        node, distance, step = todo.popleft()
        if node in seen:
            continue
        seen.add(node)
        found[node] = (distance, step)
        todo.extend((n[0], distance + 1, step) for n in neighbours[node])
    return found


def _same_subnet(address: str, subnet: str) -> bool:
    return address.rsplit(".", 1)[0] == subnet.split("/")[0].rsplit(".", 1)[0]
