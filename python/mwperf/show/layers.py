"""Where a point's time went, for people: the lines ``mwperf run`` and ``mwperf show`` print
under the point with ``--layers`` (docs/layers.md).

One line per layer, in the order a message passes them: its label, p50, p99 and share of the
mean latency; kernel_network's parts (with --link) indented under it; a round trip's layer
also gives each direction's p50, since a sum of two directions hides which one grew. A layer
that cannot be seen says so with the reason instead of figures — never a made-up split — and
the messages that could not be split are counted by reason, so a reader knows what the
figures cover.
"""

from collections.abc import Mapping
from typing import Any

from ..durations import format_ns
from ..layer_names import UNSPLIT, label_of

HEAD = "layers        "
INDENT = "  "
LABEL_WIDTH = 37
"""the longest label, 'middleware and transport, not split', and two spaces"""


def render_layers(section: dict[str, Any] | None) -> str:
    """The layer lines of a result's ``layers`` section ("" without the section)."""
    if not isinstance(section, dict):
        return ""
    if section.get("method") == "none":
        why = section.get("why_none") or "nothing could be observed"
        return f"{HEAD}not split: {why}\n"
    split, messages = section.get("split") or 0, section.get("messages") or 0
    kind = section.get("kind")
    how = "; each layer both directions summed" if kind == "roundtrip" else ""
    text = (f"{HEAD}{split:,} of {messages:,} measured messages split "
            f"({_method(section.get('method'))}{how})\n")
    directions = section.get("directions") or {}
    forward = {lay.get("name"): lay for lay in directions.get("forward") or []}
    back = {lay.get("name"): lay for lay in directions.get("return") or []}
    for layer in section.get("layers") or []:
        text += _line(layer, INDENT, _directions(layer.get("name"), forward, back))
        for part in layer.get("parts") or []:
            text += _line(part, INDENT * 2, "")
    total = section.get("total") or {}
    if total.get("p50_ns") is not None:
        text += (f"{INDENT}{'total (measured latency)':<{LABEL_WIDTH}}"
                 f"{_figures(total)}{100:5.1f} %\n")
    unsplit = section.get("unsplit") or {}
    reasons = [f"{label} {unsplit[key]:,}" for key, label in UNSPLIT if unsplit.get(key)]
    if reasons:
        text += f"{INDENT}not split: {', '.join(reasons)}\n"
    dropped = [f"{a.get('name')} {a['dropped']:,}" for a in section.get("agents") or []
               if a.get("dropped")]
    if dropped:
        text += (f"{INDENT}system-call events dropped (the interposer's ring was full): "
                 f"{', '.join(dropped)}\n")
    for topic in section.get("per_topic") or []:
        text += _topic_line(topic)
    for note in section.get("notes") or []:
        text += f"{INDENT}note: {note}\n"
    return text


def _method(method: Any) -> str:
    return {"ld_preload": "system calls seen by the LD_PRELOAD interposer"}.get(
        str(method), str(method))


def _line(layer: dict[str, Any], indent: str, extra: str) -> str:
    name = str(layer.get("name") or "?")
    title = f"{indent}{layer.get('label') or label_of(name)}"
    if layer.get("observable") is False or layer.get("p50_ns") is None:
        why = layer.get("note") or "no boundary seen"
        return f"{title:<{LABEL_WIDTH + 1}} not observable: {why}\n"
    share = layer.get("share")
    percent = f"{100 * share:5.1f} %" if share is not None else "    \u2014"
    return f"{title:<{LABEL_WIDTH + 1}} {_figures(layer)}{percent}{extra}\n"


def _figures(figures: dict[str, Any]) -> str:
    return (f"p50 {format_ns(figures.get('p50_ns')):>9}  "
            f"p99 {format_ns(figures.get('p99_ns')):>9}  ")


def _directions(name: Any, forward: dict[Any, dict[str, Any]],
                back: dict[Any, dict[str, Any]]) -> str:
    """'  (forward p50 4.1 µs, return p50 3.9 µs)' for a round trip's layer, else ""."""
    there, home = forward.get(name) or {}, back.get(name) or {}
    if there.get("p50_ns") is None and home.get("p50_ns") is None:
        return ""
    return (f"  (forward p50 {format_ns(there.get('p50_ns'))}, return p50 "
            f"{format_ns(home.get('p50_ns'))})")


def _topic_line(topic: dict[str, Any]) -> str:
    """One topic of several: its split count and each layer's p50 in a line."""
    p50s = [f"{layer.get('name')} {format_ns(layer.get('p50_ns'))}"
            for layer in topic.get("layers") or [] if layer.get("p50_ns") is not None]
    total = (topic.get("total") or {}).get("p50_ns")
    layers = ", ".join(p50s) or "\u2014"
    return (f"{INDENT}topic {topic.get('topic')}: {topic.get('split') or 0:,} of "
            f"{topic.get('messages') or 0:,} split, total p50 {format_ns(total)}; p50 "
            f"{layers}\n")


def section(result: Mapping[str, Any]) -> str:
    """With --layers: where each message's time went."""
    return render_layers(result.get("layers"))
