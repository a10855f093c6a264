"""Where a graph's nodes run across emulated hosts: the run's hosts (``--link``: a and b, as
for one stream; a scenario's ``hosts:``), each node on the host it names."""

from dataclasses import replace
from typing import Protocol

from ..emulation.topology import Topology, two_hosts
from ..errors import UsageError
from .check import check_hosts
from .model import Graph


class Linked(Protocol):
    """What placing needs of a point (a config.PointConfig: config imports graph/, not the
    other way round)."""

    link: str | None
    topology: Topology | None


def placed_topology(graph: Graph, cfg: Linked) -> Topology | None:
    """With ``--link``: the emulated hosts (a and b, as for one stream), each node on the host
    it names (a node that names none on the first); None on this machine, where every node
    runs here whatever host it names."""
    if cfg.link is None and cfg.topology is None:
        return None
    base = cfg.topology or two_hosts()
    check_hosts(graph, base.hosts, "--link")
    taken = {name for name, _ in base.place}
    clash = next((n.name for n in graph.nodes if n.name in taken), None)
    if clash is not None:
        raise UsageError(f"graph '{graph.name}': node '{clash}' has the name of a role or daemon "
                         f"mwperf places ({', '.join(sorted(taken))}); rename the node")
    return replace(base, place=base.place + tuple((n.name, n.host or base.hosts[0])
                                                  for n in graph.nodes))
