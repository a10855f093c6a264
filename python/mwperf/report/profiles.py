"""The CPU profile (--profile): per profiled point and process, the functions with the most
samples of their own (self %) and with their callees (total %), as perf sampled them; the flame
graphs themselves are in each point's folder (profile/<process>.svg)."""

from collections.abc import Sequence
from html import escape

from .data import Run
from .labels import describe
from .section import Section

TOP = 8
MAX_POINTS = 12


def section(runs: Sequence[Run], numbers: dict[str, int]) -> Section:
    """The profile section; ``numbers``: point id -> its number (#) in the summary table."""
    out = Section("profile", "CPU profile: where each process spent its samples")
    profiled = [p for run in runs for p in run.points if p.profile]
    if not profiled:
        return out
    for point in out.first(profiled, MAX_POINTS, "profiled points"):
        for proc in point.profile.get("processes") or []:
            rows = "".join(
                f"<tr><td>{t['self_pct']:.1f}</td><td>{t['total_pct']:.1f}</td>"
                f"<td><code>{escape(str(t['function']))}</code></td></tr>"
                for t in proc.get("top", [])[:TOP])
            where = f" — flame graph: {escape(proc['svg'])}" if proc.get("svg") else ""
            out.charts.append(
                f'<div class="profile"><p><b>#{numbers.get(point.point_id, "?")} '
                f'{escape(describe(point))}: {escape(proc["name"])}</b> '
                f'({proc["samples"]} samples{where})</p>'
                + (f"<table><tr><th>self %</th><th>total %</th><th>function</th></tr>{rows}"
                   f"</table>" if rows else "<p>no samples (the process barely ran)</p>")
                + "</div>")
    return out
