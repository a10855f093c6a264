"""Heap allocations by call site (--alloc-sites): per recorded point and agent, the code that
allocates in the steady state (per message) and over the whole run, as heaptrack recorded it;
the whole record is in each point's folder (alloc-sites/<agent>.heaptrack.gz, for
heaptrack_print or heaptrack_gui)."""

from collections.abc import Sequence
from html import escape

from .data import Run
from .labels import describe
from .section import Section

TOP = 8
MAX_POINTS = 12


def _per(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def section(runs: Sequence[Run], numbers: dict[str, int]) -> Section:
    """The call-site section; ``numbers``: point id -> its number (#) in the summary table."""
    out = Section("alloc-sites", "Heap allocations by call site (heaptrack)")
    recorded = [p for run in runs for p in run.points if p.alloc_sites]
    if not recorded:
        return out
    for point in out.first(recorded, MAX_POINTS, "recorded points"):
        for proc in point.alloc_sites.get("processes") or []:
            head = (f'<p><b>#{numbers.get(point.point_id, "?")} {escape(describe(point))}: '
                    f'{escape(proc["name"])}</b> ')
            if "error" in proc:
                out.charts.append(f'<div class="profile">{head}{escape(proc["error"])}</p></div>')
                continue
            rows = "".join(
                f"<tr><td>{_per(s['per_msg'])}</td><td>{s['steady_count']}</td>"
                f"<td>{s['total_count']}</td><td><code>{escape(s['function'])}</code> "
                f"<small>{escape(s['module'])}"
                + (" &larr; " + " &larr; ".join(escape(c) for c in s["callers"])
                   if s["callers"] else "") + "</small></td></tr>"
                for s in proc.get("sites", [])[:TOP])
            out.charts.append(
                f'<div class="profile">{head}({_per(proc["allocs_per_msg"])} allocations per '
                f'message over {proc["steady_messages"]} messages; {proc["total_allocs"]} in '
                f'the whole run; record: {escape(proc.get("record", ""))})</p>'
                f"<table><tr><th>per msg</th><th>steady</th><th>whole run</th>"
                f"<th>call site &larr; callers</th></tr>{rows}</table></div>")
    return out
