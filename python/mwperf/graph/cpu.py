"""CPU limits of a graph's nodes: each node's own ``cpu_quota`` / ``cpu_pin`` (the graph
file), and the run's ``--cpu-quota`` / ``--cpu-pin`` (a bare value: every node without one of
its own; ``NODE=`` one node; with emulated hosts ``HOST=`` everything on that host, daemons
included, in one cgroup: a slower computer). Each limited node runs in a cgroup of its own
(emulation/cpu.py applies them, as for a stream's agents); the result's ``cpu`` block says what
was applied and how often each was throttled."""

from dataclasses import replace

from ..emulation.cpu import CpuLimits, parse_limits
from ..errors import UsageError
from .model import Graph


def node_limits(graph: Graph, quota: str | None, pin: str | None, rt_priority: str | None,
                place: tuple[tuple[str, str], ...] = (),
                remote: tuple[str, ...] = ()) -> CpuLimits:
    """The limits of ``graph``'s nodes; ``place``: (node or daemon, emulated host) with
    ``--link``, (node, real host or local) with ``--host``, else empty; ``remote``: the real
    hosts (their supervisors apply the limits there)."""
    names = tuple(n.name for n in graph.nodes)
    quotas = _merged("--cpu-quota", graph, quota, "cpu_quota", place)
    pins = _merged("--cpu-pin", graph, pin, "cpu_pin", place)
    if rt_priority is not None and quotas:
        raise UsageError("--rt-priority: not with a CPU quota in a graph (the real-time budget "
                         "would be split among its nodes); give one of them")
    limits = parse_limits(quotas, pins, rt_priority, names, place, remote)
    return replace(limits, agents=names)


def _merged(flag: str, graph: Graph, given: str | None, key: str,
            place: tuple[tuple[str, str], ...]) -> str | None:
    """The file's per-node values with the run's on top (the run's NODE= wins over the file's;
    its bare value applies to the nodes without one), as one ``[NAME=]VALUE,...`` text."""
    hosts = {host for _, host in place}
    run: dict[str, str] = {}
    for item in (given or "").split(","):
        if not item.strip():
            continue
        name, _, value = item.strip().rpartition("=")
        run[name.strip() or "*"] = value.strip()
    own = {n.name: getattr(n, key) for n in graph.nodes if getattr(n, key) is not None}
    for name in own:
        host = dict(place).get(name)
        if host in run and host in hosts:
            raise UsageError(f"{flag} {host}=...: node '{name}' on host {host} has a {key} of its "
                             f"own in graph '{graph.name}'; a process is in one cgroup: give the "
                             "limit to the host or to the node")
    entries = {**own, **{k: v for k, v in run.items() if k != "*"}}
    if "*" in run:  # the bare value: every node without a value of its own
        entries.update({n.name: run["*"] for n in graph.nodes if n.name not in entries
                        and dict(place).get(n.name) not in run})
    if not entries:
        return None
    return ",".join(f"{name}={value}" for name, value in entries.items())
