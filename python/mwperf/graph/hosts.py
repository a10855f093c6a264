"""A graph's nodes on real hosts (``--host NAME=ssh://...``): each node on the host its graph
file names (``host: NAME``), or where ``--place NODE=HOST`` puts it, else here (``local``).
The daemons a transport needs (broker, master, router) run here; every real host is a clock of
its own (graph/clocks.py)."""

import shlex
import threading
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..remote.plan import RemotePlan
from ..remote.target import LOCAL
from .model import Graph

if TYPE_CHECKING:
    from ..remote.hosts import PointHosts

GO_NAME = "go"
"""a node's go file on a real host: in its scratch folder"""
REMOTE_START_MARGIN_NS = 2_000_000_000
"""with real hosts the go instant is this far ahead: a command over SSH writes it there"""

NOT_ACROSS = ("foxglove",)
"""transports whose graph nodes cannot be on real hosts yet: foxglove's servers are daemons
of mwperf's, started here"""


def write_remote_go(real: "PointHosts", nodes: list[tuple[str, str]], start_ns: int) -> None:
    """The go instant (mwperf's clock) into the go file of every node on a real host (``nodes``:
    (node, its process name); one SSH command per host, all at once); RunError when a host
    cannot take it."""
    from ..errors import RunError

    by_host: dict[str, list[str]] = {}
    for node, name in nodes:
        if real.is_remote(node):
            by_host.setdefault(real.host_of(node), []).append(real.scratch(name, node))
    failures: list[str] = []

    def write(host: str, folders: list[str]) -> None:
        script = " && ".join(f"printf '%s\\n' {start_ns} > {shlex.quote(f + '/go.tmp')} && "
                             f"mv {shlex.quote(f + '/go.tmp')} {shlex.quote(f + '/' + GO_NAME)}"
                             for f in folders)
        try:
            done = real.hosts[host].conn.run(["sh", "-c", script])
        except RunError as exc:
            failures.append(str(exc))
            return
        if done.returncode != 0:
            failures.append(f"host '{host}': writing the go file failed: "
                            f"{done.stderr.decode(errors='replace').strip()}")

    threads = [threading.Thread(target=write, args=item) for item in by_host.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise RunError(failures[0])


def node_place(graph: Graph, remote: RemotePlan, place_text: Any, transport: str) -> RemotePlan:
    """``remote`` with every node placed: (node, host) for each node, ``local`` for here."""
    names = tuple(name for name, _ in remote.hosts)
    known = (LOCAL, *names)
    place = {n.name: (n.host if n.host in known else LOCAL) for n in graph.nodes}
    for node in graph.nodes:
        if node.host is not None and node.host not in known:
            raise UsageError(f"graph '{graph.name}': node '{node.name}' is on host "
                             f"'{node.host}', which --host does not name; hosts: "
                             f"{', '.join(known)} (or --place {node.name}=HOST)")
    for item in (part.strip() for part in str(place_text or "").split(",") if part.strip()):
        name, sep, host = item.partition("=")
        if not sep:
            raise UsageError(f"--place: '{item}' is not NODE=HOST (e.g. {graph.nodes[0].name}="
                             f"{names[0]})")
        if name not in place:
            raise UsageError(f"--place: graph '{graph.name}' has no node '{name}' (with --graph "
                             "--place puts nodes; the daemons run here)")
        if host not in known:
            raise UsageError(f"--place: '{item}': no host '{host}'; the hosts are "
                             f"{', '.join(known)}")
        place[name] = host
    away = [n for n, h in place.items() if h != LOCAL]
    if not away:
        raise UsageError(f"--host: no node of graph '{graph.name}' is on "
                         f"{', '.join(names)}; name the host in the graph file (host: "
                         f"{names[0]}) or --place NODE={names[0]}")
    if transport in NOT_ACROSS:
        raise UsageError(f"--graph {graph.name} --transport {transport} --host: not yet (its "
                         f"servers run here, node '{away[0]}' is on {place[away[0]]}); use "
                         "another transport or emulated hosts (--link)")
    return replace(remote, place=tuple(place.items()))
