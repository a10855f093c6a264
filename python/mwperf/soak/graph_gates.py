"""Gates on a graph run (``mwperf run --graph ... --gate EXPR / --targets FILE``): each checked
over the whole graph, as iRobot's ``latency_total`` and resource targets are.

- late, too-late: the edges' late and too-late messages as a share of those received (each edge
  classifies by its own period: docs/graphs.md, iRobot's min(20 % of the period, 5 ms) and
  min(period, 50 ms) by default);
- loss: lost / (received + lost) over all edges (iRobot's lost[%]); lost: the lost messages;
- p50, p99, max: the worst edge's latency (that edge named); min-samples: the edge that received
  fewest;
- cpu, rss: the nodes' processes and the run's daemons (soak.gates.processes_gate);
- rss-growth, fd-growth, threads-growth, live-allocs-growth: each node's and daemon's growth
  over the steady state, sampled each second (parts/resources.py), as a single stream's.

An edge a subscriber did not report leaves the figure unmeasured: the gate fails (a gate never
passes on no evidence).
"""

from __future__ import annotations

from typing import Any

from .gates import GROWTH, LATENCY, Gate, _entry, _growth, daemon_processes, processes_gate, shown


def evaluate(gates: tuple[Gate, ...], result: dict[str, Any],
             cores: int | None) -> list[dict[str, Any]]:
    """The graph result's ``gates``: each gate's figure, limit, passed and what it says;
    ``cores``: the machine's (the cpu gate's share is of all of them)."""
    return [_one(g, result, cores) for g in gates]


def _one(gate: Gate, result: dict[str, Any], cores: int | None) -> dict[str, Any]:
    if gate.metric in ("cpu", "rss"):
        return processes_gate(gate, _processes(result), cores, "nodes and daemons")
    if gate.metric in GROWTH:
        return _growth(gate, result)
    # an edge into a command node is counted where it comes out (graph/commands.py)
    edges = [e for e in result.get("edges") or [] if not e.get("command_input")]
    silent = [_edge_name(e) for e in edges if e.get("received") is None]
    if not edges or silent:
        why = f"not reported: {', '.join(silent[:3])}" if silent else "the graph has no edges"
        return _entry(gate, None, False, f"not measured ({why})")
    if gate.metric in LATENCY:
        measured = [(e, (e.get("latency") or {}).get(LATENCY[gate.metric])) for e in edges]
        measured = [(e, v) for e, v in measured if v is not None]
        if not measured:
            return _entry(gate, None, False, "not measured (no edge received a message)")
        edge, figure = max(measured, key=lambda item: item[1])
        return _verdict(gate, float(figure), figure <= gate.limit,
                        f"worst edge {_edge_name(edge)}")
    if gate.metric == "min-samples":
        edge = min(edges, key=lambda e: e["received"])
        figure = float(edge["received"])
        return _verdict(gate, figure, figure >= gate.limit, f"fewest: edge {_edge_name(edge)}",
                        ">=")
    received = sum(e["received"] for e in edges)
    lost = sum(e.get("lost") or 0 for e in edges)
    if gate.metric == "lost":
        return _verdict(gate, float(lost), lost <= gate.limit, f"over {len(edges)} edges")
    if gate.metric == "loss":
        if received + lost == 0:
            return _entry(gate, None, False, "not measured (nothing sent on any edge)")
        figure = 100 * lost / (received + lost)
        return _verdict(gate, figure, figure <= gate.limit,
                        f"{lost} lost of {received + lost} over {len(edges)} edges")
    # late, too-late
    counted = sum(e.get(gate.metric.replace("-", "_")) or 0 for e in edges)
    if received == 0:
        return _entry(gate, None, False, "not measured (no edge received a message)")
    figure = 100 * counted / received
    return _verdict(gate, figure, figure <= gate.limit,
                    f"{counted} of {received} received over {len(edges)} edges")


def _verdict(gate: Gate, figure: float, passed: bool, detail: str,
             relation: str = "<=") -> dict[str, Any]:
    return _entry(gate, figure, bool(passed), f"{gate.metric} {shown(gate, figure)} ({detail}), "
                  f"needs {relation} {shown(gate, gate.limit)}")


def _processes(result: dict[str, Any]) -> list[tuple[str, dict[str, Any] | None]]:
    """(name, a process block) per node and daemon; None for a node without a report."""
    out: list[tuple[str, dict[str, Any] | None]] = []
    for node in result.get("nodes") or []:
        if node.get("cpu_percent") is None or node.get("max_rss_kib") is None:
            out.append((node["name"], None))
            continue
        # cpu_percent is 100 x cpu_s / wall over the node's life: wall = cpu_s x 100 / percent
        wall = node["cpu_s"] * 100 / node["cpu_percent"] if node["cpu_percent"] else 1.0
        out.append((node["name"], {"cpu_user_s": node["cpu_s"], "cpu_sys_s": 0.0,
                                   "wall_s": wall, "max_rss_kib": node["max_rss_kib"]}))
    return out + daemon_processes(result)


def _edge_name(edge: dict[str, Any]) -> str:
    return f"{edge.get('topic')} {edge.get('from')}->{edge.get('to')}"
