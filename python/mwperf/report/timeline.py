"""Plots: latency over the run, per second (the agent's series: p50 and p99 lines over a
min–max band, as seed 000's figures; with a scheduled link outage, shaded (exactly where the
result recorded the window, else approximately), and beside it the messages received per
second: the resilience timeline)
and per message index when raw samples were kept
(downsampled in DuckDB to at most 1000 buckets, each keeping its min and max, so spikes
survive). One chart of each kind per point, for the first ``MAX_POINTS`` points."""

from collections.abc import Sequence

from ..durations import format_ns
from .data import Run
from .labels import label, run_tags, varying
from .section import Section
from .svg import Axis, Chart, colour

MAX_POINTS = 12
MAX_SECONDS = 600
"""a longer per-second series is reduced to this many buckets (min of min, max of max, mean
of the p50s, max of the p99s: the spikes stay visible)"""
MARKED_SECONDS = 120
"""per-second hover markers only up to this many rows (beyond, the lines carry the shape)"""


def downsample(rows: list[dict], limit: int = MAX_SECONDS) -> list[dict]:
    """``rows`` (per-second series rows with data) in at most ``limit`` buckets."""
    if len(rows) <= limit:
        return rows
    width = -(-len(rows) // limit)
    out = []
    for start in range(0, len(rows), width):
        chunk = rows[start:start + width]
        p50s = [r["p50_ns"] for r in chunk if r.get("p50_ns") is not None]
        means = [r["mean_ns"] for r in chunk if r.get("mean_ns") is not None]
        out.append({"t_s": chunk[0]["t_s"], "received": sum(r["received"] for r in chunk),
                    "min_ns": min((r.get("min_ns") or r.get("p50_ns") or 0) for r in chunk),
                    "max_ns": max((r.get("max_ns") or 0) for r in chunk),
                    "p50_ns": sum(p50s) / len(p50s) if p50s else None,
                    "mean_ns": sum(means) / len(means) if means else None,
                    "p99_ns": max((r.get("p99_ns") or 0) for r in chunk) or None})
    return out


def section(runs: Sequence[Run]) -> Section:
    """The latency-over-time section."""
    out = Section("timeline", "Latency over the run")
    points = [(run, p) for run in runs for p in run.points if p.series or p.messages]
    fields = varying([p for _, p in points]) if points else []
    tags = run_tags(runs)
    for i, (run, point) in enumerate(points[:MAX_POINTS]):
        name = label(point, fields, tags[run.run_id])
        col = colour(i)
        if point.series:
            chart = Chart(f"{name}: per second", Axis("time after warm-up (s)"),
                          Axis("latency", log=True, fmt=format_ns), "timeline-seconds")
            rows = downsample([r for r in point.series if r.get("received")])
            if point.outage_s is not None:
                chart.shade(*point.outage_s, _outage_text(point.outage_s, point.outage_exact))
            ts = [_mid(r) for r in rows]
            chart.band(ts, [r.get("min_ns") or r.get("p50_ns") for r in rows],
                       [r.get("max_ns") for r in rows], col, tip="min–max per second")
            centre = "p50_ns" if any(r.get("p50_ns") is not None for r in rows) else "mean_ns"
            chart.line([(_mid(r), r.get(centre)) for r in rows], col, tip=centre[:-3])
            chart.line([(_mid(r), r.get("p99_ns")) for r in rows], col, tip="p99", dash=True)
            for r in rows if len(rows) <= MARKED_SECONDS else []:
                chart.marker(_mid(r), r.get("p99_ns"), col, size=2, tip=(
                    f"t={r['t_s']} s: {r['received']} received, p50 {format_ns(r.get('p50_ns'))}"
                    f", p99 {format_ns(r.get('p99_ns'))}, max {format_ns(r.get('max_ns'))}"))
            chart.legend(f"{centre[:-3]} (line)", col)
            if any(r.get("p99_ns") is not None for r in rows):
                chart.legend("p99 (dashed)", col)
            out.add(chart)
            if point.outage_s is not None:
                out.add(_received(name, point.series, point.outage_s, point.outage_exact, col))
        if point.messages:
            chart = Chart(f"{name}: per message", Axis("message (sequence number)"),
                          Axis("latency", log=True, fmt=format_ns), "timeline-messages")
            seqs = [b.seq for b in point.messages]
            chart.band(seqs, [b.min_ns for b in point.messages],
                       [b.max_ns for b in point.messages], col, tip="min–max per bucket",
                       opacity=0.3)
            chart.line([(b.seq, b.mean_ns) for b in point.messages], col, tip="mean per bucket",
                       width=1.2)
            worst = max(point.messages, key=lambda b: b.max_ns)
            chart.marker(worst.seq, worst.max_ns, col,
                         f"slowest message near #{worst.seq}: {format_ns(worst.max_ns)}")
            chart.legend("mean (line), min–max (band)", col)
            out.add(chart)
    if len(points) > MAX_POINTS:
        out.note = f"The first {MAX_POINTS} of {len(points)} points are drawn."
    return out


def _received(name: str, series: list[dict], outage: tuple[float, float], exact: bool,
              col: str) -> Chart:
    """Messages received per second around a link outage: where the outage shows as a dip."""
    chart = Chart(f"{name}: received per second (resilience)", Axis("time after warm-up (s)"),
                  Axis("messages received"), "timeline-received")
    chart.shade(*outage, _outage_text(outage, exact))
    chart.line([(_mid(r), r.get("received") or 0) for r in series], col, tip="received")
    for r in series:
        chart.marker(_mid(r), r.get("received") or 0, col,
                     f"t={r['t_s']} s: {r.get('received') or 0} received of {r.get('sent')} sent")
    chart.legend("received (line)", col)
    return chart


def _outage_text(outage: tuple[float, float], exact: bool) -> str:
    if exact:
        return (f"link outage {outage[0]:.3f}–{outage[1]:.3f} s (as the link emulator applied "
                f"it, on the agents' clock)")
    return (f"link outage {outage[0]:.2f}–{outage[1]:.2f} s (approximate: scheduled from the "
            f"link coming up; agent start-up not recorded)")


def _mid(row: dict) -> float:
    """Where a per-second row sits on the time axis: the middle of its second (t_s counts the
    messages received in [t_s, t_s + 1))."""
    return row["t_s"] + 0.5
