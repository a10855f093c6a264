"""Where a bridged point runs with ``--link``: four emulated hosts in a line,

    a (sender) --lan-- ga (bridge A) ==WAN (--link)== gb (bridge B) --lan-- b (server)

so each bridge half has a host of its own, as a robot's gateway and a cloud-side relay do. The
LAN legs are ``ethernet-1g``; the ``--link`` spec is the WAN between the halves. ``--bridge
direct`` runs over the very same hosts and links (ga and gb only forward), so bridge minus
direct is the bridges' own cost. Other daemons (a direct path's broker or router) stay on the
server's host.
"""

from ..emulation.topology import Link, Topology, complete_place

LAN = "ethernet-1g"
"""the local legs: sender to bridge A, bridge B to server"""
HOSTS = ("a", "ga", "gb", "b")


def bridge_hosts() -> Topology:
    links = (Link("ga<->gb", ("ga", "gb"), None), Link("a<->ga", ("a", "ga"), LAN),
             Link("gb<->b", ("gb", "b"), LAN))
    place = complete_place({"ping": "a", "pong": "b"}, HOSTS)
    return Topology(HOSTS, links, tuple(sorted(place + (("bridge-a", "ga"), ("bridge-b", "gb")))))
