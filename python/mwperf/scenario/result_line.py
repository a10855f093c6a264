"""The one line a finished point leaves in the progress output: its label, status and, when it
was measured, response-time p50/p99 and loss — a throughput point what it delivered — (so a long
sweep can be watched as it goes)."""

from typing import Any

from ..durations import format_ns
from ..graph.digest import graph_row
from ..result.load import is_stream
from .digest import throughput_line
from .manifest import Entry


def result_line(entry: Entry, result: dict[str, Any] | None) -> str:
    """'udp roundtrip 1000 Hz Array1k: complete  p50 52.1 µs  p99 80.3 µs  loss 0.00%'; ``result``
    as result/load.py reads it (v3, a stream kind with its stream view: ``as_stream``), None when
    the point left none."""
    text = f"{entry.label}: {entry.status}"
    stream = result is not None and is_stream(result)
    measurement = (result or {}).get("measurement") if stream else None
    delivered = throughput_line(result or {}) if stream else None
    if measurement and delivered:  # a throughput point: its loss is in the line
        text += (f"  p50 {format_ns(measurement['response']['p50_ns'])}  p99 "
                 f"{format_ns(measurement['response']['p99_ns'])}  {delivered}")
    elif measurement:
        response, acc = measurement["response"], measurement["accounting"]
        loss = f"{100 * acc['lost'] / acc['sent']:.2f}%" if acc["sent"] else "\u2014"
        text += (f"  p50 {format_ns(response['p50_ns'])}  p99 {format_ns(response['p99_ns'])}"
                 f"  loss {loss}")
    if result is not None and not stream:
        row = graph_row(result, None)
        if row.p99_ns is not None:
            text += (f"  worst edge p99 {format_ns(row.p99_ns)}  loss "
                     + (f"{row.loss_pct:.2f}%" if row.loss_pct is not None else "\u2014"))
    gates = (result or {}).get("gates") or []
    if gates:
        failed = [g["gate"] for g in gates if not g["passed"]]
        text += (f"  gates: {len(gates) - len(failed)} passed, {len(failed)} FAILED "
                 f"({', '.join(failed)})" if failed else f"  gates: {len(gates)} passed")
    if entry.status != "complete" and entry.reason:
        text += f" ({' '.join(entry.reason.split())})"
    return text
