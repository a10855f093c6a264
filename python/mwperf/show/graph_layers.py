"""The graph's per-layer table (``--layers``): one row per edge and per chain, each layer's p50
(layer_names.py's order), so where an edge's time goes reads across and a slow hop stands out
down a column. The p50s of the layers need not add up to the total's p50 (their means do)."""

from typing import Any

from ..durations import format_ns
from ..layer_names import NAMES

SHORT = {"app_send": "app send", "middleware_send": "mw send", "kernel_network": "kernel+net",
         "middleware_receive": "mw recv", "executor_callback": "exec+cb",
         "middleware_transport": "mw+transport"}
"""column headings (the layers' full labels are in docs/layers.md and the result)"""


def layer_rows(result: dict[str, Any]) -> list[tuple[str, ...]]:
    """The table's rows, heading first; empty without --layers (or when nothing was split:
    then one line says why, see ``why_not``)."""
    items = [(f"{e['topic']} {e['from']} -> {e['to']}", e.get("layers")) for e in result["edges"]]
    items += [(f"chain {c['name']}", c.get("layers")) for c in result["chains"]]
    shown = [(label, s) for label, s in items if s and s.get("method") == "ld_preload"]
    names: list[str] = []
    for _, s in shown:
        for layer in s["layers"]:
            if layer["observable"] and layer["name"] not in names:
                names.append(layer["name"])
    order = {n: i for i, n in enumerate(NAMES)}
    order["middleware_transport"] = order["middleware_send"]  # it stands for the middle three
    names.sort(key=lambda n: order.get(n.split("+")[0], len(order)))
    if not names:
        return []
    rows = [("layers p50", "split", *(_short(n) for n in names), "total")]
    for label, s in shown:
        p50 = {layer["name"]: layer["p50_ns"] for layer in s["layers"] if layer["observable"]}
        rows.append((label, f"{s['split']}/{s['messages']}",
                     *(format_ns(p50[n]) if p50.get(n) is not None else "-" for n in names),
                     format_ns(s["total"]["p50_ns"]) if s["total"]["p50_ns"] is not None
                     else "-"))
    return rows


def why_not(result: dict[str, Any]) -> str | None:
    """With --layers and nothing split: why, for one line under the table."""
    summary = result.get("layers")
    if summary and summary.get("why_none"):
        return f"layers: not split: {summary['why_none']}"
    return None


def _short(name: str) -> str:
    return "+".join(SHORT.get(n, n) for n in name.split("+")) if name not in SHORT \
        else SHORT[name]
