"""Plot: per-topic latency of multi-topic points (seed 001's topic 1/2/3 shift under a
single-threaded executor): per topic a bar to the p50, a dot at the p99 and a cross at the max,
each topic under its name (a replay's recorded topic, else ``topic <i>``)."""

from collections.abc import Sequence

from ..durations import format_ns
from ..topicnames import default_name, label as topic_label
from .data import Run
from .labels import label, run_tags, varying
from .section import Section
from .svg import Axis, Chart, colour

MAX_POINTS = 12


def section(runs: Sequence[Run]) -> Section:
    """The per-topic section (empty when no point had several topics)."""
    out = Section("topics", "Per-topic latency")
    points = [(run, p) for run in runs for p in run.points if len(p.topics) > 1]
    if not points:
        return out
    fields = varying([p for _, p in points])
    tags = run_tags(runs)
    for run, point in points[:MAX_POINTS]:
        name = label(point, fields, tags[run.run_id])
        ticks = [(float(t["topic"]), t.get("name") or default_name(int(t["topic"])))
                 for t in point.topics]
        chart = Chart(f"{name}: latency per topic (bar p50, ● p99, × max)",
                      Axis("topic", ticks=ticks), Axis("latency", fmt=format_ns), "topics")
        for topic in point.topics:
            x = float(topic["topic"])
            col = colour(int(topic["topic"]))
            where = f" ({topic['address']})" if topic.get("address") else ""
            tip = (f"{topic_label(topic.get('name'), int(topic['topic']))}{where}: p50 "
                   f"{format_ns(topic.get('latency_p50_ns'))}, p99 "
                   f"{format_ns(topic.get('latency_p99_ns'))}, max "
                   f"{format_ns(topic.get('latency_max_ns'))}, loss "
                   f"{topic.get('loss_pct') or 0:.3g} %")
            chart.bar(x, 0.6, topic.get("latency_p50_ns"), col, tip)
            chart.marker(x, topic.get("latency_p99_ns"), "#000", f"p99: {tip}")
            chart.marker(x, topic.get("latency_max_ns"), "#000", f"max: {tip}", shape="cross")
        out.add(chart)
    if len(points) > MAX_POINTS:
        out.note = f"The first {MAX_POINTS} of {len(points)} multi-topic points are drawn."
    return out
