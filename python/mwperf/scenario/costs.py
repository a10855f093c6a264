"""A sweep's cost table (the ``costs`` scenario, or any sweep run with --wire-bytes or
--count-allocs): per point, what the middleware costs beside its latency — IP bytes on the
wire per message each way and the overhead over the message, what setup cost, what an idle
session costs per second, heap allocations per message of the sender and the server, and the
agents' own peak RSS. Shown only when some point measured a cost."""
from __future__ import annotations

from ..sizes import format_bytes
from ..show.table import DASH, Row, format_rate
from .observe import Observation

HEADER = ("transport", "payload", "rate", "B/msg \u2192", "B/msg \u2190", "overhead", "setup",
          "idle", "allocs/msg snd", "allocs/msg srv", "RSS agents")


def has_costs(observed: list[Observation]) -> bool:
    return any(o.row.wire_up_bytes_per_msg is not None or o.row.sender_allocs_per_msg is not None
               or o.row.wire_setup_bytes is not None for o in observed)


def cost_table(observed: list[Observation], markdown: bool = False) -> str:
    """The table as aligned text or Markdown (empty without any cost measured)."""
    if not has_costs(observed):
        return ""
    rows = [_cells(o.row) for o in observed]
    if markdown:
        lines = [HEADER, ("---",) * len(HEADER), *rows]
        return "".join("| " + " | ".join(cells) + " |\n" for cells in lines)
    widths = [max(len(r[i]) for r in [HEADER, *rows]) for i in range(len(HEADER))]
    return "".join("  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip() + "\n"
                   for cells in [HEADER, *rows])


def _cells(row: Row) -> tuple[str, ...]:
    def number(value: float | None, unit: str = "") -> str:
        return DASH if value is None else f"{value:.6g}{unit}"

    def allocs(value: float | None) -> str:
        return DASH if value is None else f"{value:.3g}"

    return (row.transport, row.payload, format_rate(row.rate),
            number(row.wire_up_bytes_per_msg), number(row.wire_down_bytes_per_msg),
            DASH if row.wire_overhead is None else f"\u00d7{row.wire_overhead:.2f}",
            DASH if row.wire_setup_bytes is None else format_bytes(row.wire_setup_bytes),
            DASH if row.wire_idle_bytes_per_s is None
            else format_bytes(row.wire_idle_bytes_per_s) + "/s",
            allocs(row.sender_allocs_per_msg), allocs(row.server_allocs_per_msg),
            DASH if row.rss_kib is None else format_bytes(row.rss_kib * 1024))
