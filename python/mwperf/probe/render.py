"""The probe's text output: a header line, one row per topic, the longest gaps, the caveats.
The pieces are separate for render_ros2.py, which puts its own sections between them."""

from collections.abc import Sequence

from ..durations import format_ns
from ..sizes import format_bytes
from .listen import ProbeResult
from .stats import CLOCK_CAVEAT


def render(result: ProbeResult) -> str:
    return "\n".join([header(result), "", *table(result), "", *notes(result)]) + "\n"


def header(result: ProbeResult) -> str:
    """``SYSTEM: probed 30 s, N topics; the probe used ... CPU (... of one core)``."""
    seconds = result.duration_ns / 1e9
    share = f"{100 * result.cpu_s / seconds:.1f} % of one core" if seconds else "no time"
    memory = (f", {format_bytes(result.max_rss_bytes)} peak memory"
              if result.max_rss_bytes else "")
    return (f"{result.system}: probed {format_ns(result.duration_ns)}, {len(result.topics)} "
            f"topics; the probe used {result.cpu_s:.2f} s CPU ({share}){memory}")


def table(result: ProbeResult, names: Sequence[str] | None = None,
          extra: Sequence[tuple[str, Sequence[str]]] = ()) -> list[str]:
    """The per-topic table; ``names`` replaces the topic column's cells, ``extra`` adds columns
    (heading, one cell per topic) after the sizes."""
    head = ["topic", "type", "count", "rate", "rate/s min-max", "gap p50", "gap p99",
            "gap max", f"gaps >{result.gap_factor:g}x", "bursts", "size p50", "size max",
            *(h for h, _ in extra), "age p50", "age p99"]
    rows = [head]
    for i, t in enumerate(result.topics):
        b = t.basic
        per_s = (f"{t.rate_per_second_min:g}-{t.rate_per_second_max:g}"
                 if t.rate_per_second_min is not None else "-")
        rows.append([names[i] if names else b.topic, b.msgtype, str(b.count),
                     f"{b.rate_hz:.2f} Hz" if b.rate_hz else "-",
                     per_s, format_ns(b.gap_p50_ns), format_ns(b.gap_p99_ns),
                     format_ns(b.gap_max_ns), str(b.gaps), str(t.bursts),
                     format_bytes(b.size_p50), format_bytes(b.size_max),
                     *(cells[i] for _, cells in extra),
                     format_ns(t.age_p50_ns), format_ns(t.age_p99_ns)])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return ["  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                      for i, (c, w) in enumerate(zip(row, widths))).rstrip() for row in rows]


def notes(result: ProbeResult) -> list[str]:
    """The gaps of each topic, the topics that carried nothing, what gap and burst mean, and
    the clock caveat when there are ages."""
    lines = []
    for t in result.topics:
        median = t.basic.gap_p50_ns
        long = [(o, g) for o, g in t.longest_gaps if median and g > result.gap_factor * median]
        if long:
            lines.append(f"{t.basic.topic}: gaps " + ", ".join(
                f"{format_ns(g)} at +{format_ns(o)}" for o, g in long))
        if t.basic.count == 0:
            lines.append(f"{t.basic.topic}: no message in {format_ns(result.duration_ns)}")
    lines.append(f"A gap is an inter-arrival time over {result.gap_factor:g}x the topic's median, "
                 f"a burst one under the median / {result.gap_factor:g}.")
    if any(t.age_p50_ns is not None for t in result.topics):
        lines.append(f"Note: {CLOCK_CAVEAT}.")
    return lines
