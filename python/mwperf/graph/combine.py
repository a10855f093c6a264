"""Several graph files in one run (``--graph a.json --graph b.json``; a scenario's
``graph: a.json,b.json``): their nodes side by side on shared topics, one go instant, as
iRobot's ros2-performance runs its ``debug_*.json`` listeners in a second process beside a
topology. Each file is read on its own, then the whole is checked as one graph (a file of
listeners alone subscribes to topics only the other publishes). With ``--processes one`` each
file's mwperf nodes share a process of the file's own, named after it (processes.py)."""

import re
from dataclasses import replace

from ..errors import UsageError
from .builtin import load_graph
from .check import check_graph
from .model import Graph
from .processes import FILE, ONE, apply

SEPARATOR = ","
"""between the files of one ``graph`` option (the command line joins repeated ``--graph``)"""


def specs_of(value: str) -> list[str]:
    """The graph files (or built-in names) of one ``graph`` option."""
    return [s.strip() for s in value.split(SEPARATOR) if s.strip()]


def load(value: str, processes: str) -> tuple[Graph, str]:
    """The graph of ``value`` (one file or several) and the ``--processes`` mode still to apply
    to it: ``one`` has been applied per file when there are several."""
    specs = specs_of(value)
    if len(specs) <= 1:
        return load_graph(value.strip()), processes
    if len(set(specs)) < len(specs):
        twice = next(s for s in specs if specs.count(s) > 1)
        raise UsageError(f"--graph: {twice} given twice; with copies of a graph use --copies")
    graphs = [load_graph(spec, checked=False) for spec in specs]
    if processes == ONE:
        names = [_process_name(g.name) for g in graphs]
        if len(set(names)) < len(names):
            raise UsageError(f"--processes one: two graph files named '{names[0]}' would share "
                             "a process; give them names of their own (a graph file's name:)")
        graphs = [_in_one_process(g, name) for g, name in zip(graphs, names)]
    first = graphs[0]
    for other in graphs[1:]:
        if (other.lateness, other.phase) != (first.lateness, first.phase):
            raise UsageError(f"--graph: {first.source} and {other.source} set different late:, "
                             "too_late: or phase:; one run has one rule: give them the same")
    combined = Graph(" + ".join(g.name for g in graphs),
                     tuple(n for g in graphs for n in g.nodes),
                     tuple(c for g in graphs for c in g.chains), first.lateness,
                     " ".join(g.description for g in graphs if g.description),
                     SEPARATOR.join(g.source for g in graphs),
                     tuple(dict.fromkeys(h for g in graphs for h in g.hosts)), first.phase)
    names = [c.name for c in combined.chains]
    twice = next((c for c in names if names.count(c) > 1), None)
    if twice is not None:
        raise UsageError(f"--graph: chain '{twice}' is in more than one of the files; rename "
                         "one")
    check_graph(combined)
    return combined, processes if processes != ONE else FILE


def _in_one_process(graph: Graph, name: str) -> Graph:
    """``graph`` with its mwperf nodes in one process named ``name``."""
    one = apply(graph, ONE)
    return replace(one, nodes=tuple(replace(n, process=name) if n.process else n
                                    for n in one.nodes))


def _process_name(graph_name: str) -> str:
    """A process name (letters, digits, ``_-.``) from a graph's name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", graph_name).strip("_") or "graph"
