"""Plot: probes of live systems (``mwperf probe``, from the catalogue's ``probes`` table): per
probe, each topic's inter-arrival time (bar = p50, ● = p99, ◆ = the longest gap) with its rate,
gap count and message size in the read-out; for a ROS 2 probe first its QoS incompatibilities
(writer/reader pairs no data flows between) and a table of each topic's publishers and
subscribers (nodes, QoS), bandwidth and samples lost. A report takes probes the way it takes
runs: by their folder name (the probe id), a unique prefix of it, or the folder's path."""

from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from ..durations import format_ns
from ..sizes import format_bytes
from ..store.catalogue import connect
from ..store.probes import is_probe_folder
from .section import Section
from .svg import Axis, Chart, colour

Probe = list[dict[str, Any]]
"""one probe: its catalogue rows (one per topic)"""


def split(root: Path, wanted: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the probe ids among ``wanted``, the rest: runs): a probe folder's path, or an id or
    unique prefix of a probe in the catalogue of ``root``."""
    if not wanted:
        return [], []
    known: list[str] = []
    # only a name that is no path is looked up: paths alone never open --results' catalogue
    # (an old one there, read only, would refuse a report of artifact folders)
    if any(not Path(name).exists() for name in wanted) and (root / "catalogue.duckdb").is_file():
        with connect(root, read_only=True, views=False) as con:
            known = [r[0] for r in con.execute("SELECT DISTINCT probe_id FROM probes").fetchall()]
    probes, rest = [], []
    for name in wanted:
        path = Path(name)
        if is_probe_folder(path):
            probes.append(path.resolve().name)
            continue
        matches = [k for k in known if k.startswith(name)]
        (probes.extend(matches[:1]) if len(matches) == 1 and "probe" in matches[0]
         else rest.append(name))
    return probes, rest


def load(root: Path, ids: Sequence[str]) -> list[Probe]:
    """The catalogue rows of each probe in ``ids`` (in that order)."""
    if not ids:
        return []
    with connect(root, read_only=True, views=False) as con:
        cursor = con.execute("SELECT * FROM probes WHERE probe_id IN ("
                             + ", ".join("?" for _ in ids) + ") ORDER BY probe_id, topic",
                             list(ids))
        names = [d[0] for d in cursor.description]
        rows = [dict(zip(names, r)) for r in cursor.fetchall()]
    return [[r for r in rows if r["probe_id"] == i] for i in ids]


def section(probes: Sequence[Probe]) -> Section:
    """The probes section (empty without probes)."""
    out = Section("probes", "Probes of live systems")
    for probe in probes:
        if not probe:
            continue
        head = probe[0]
        out.charts += _ros2_blocks(probe)
        chart = Chart(f"{head['system']} ({head['probe_id']}): inter-arrival time per topic "
                      f"(bar p50, ● p99, ◆ longest gap)",
                      Axis("topic", ticks=[(i, str(t["topic"])) for i, t in enumerate(probe)]),
                      Axis("inter-arrival", fmt=format_ns), f"probe-{head['probe_id']}")
        for i, t in enumerate(probe):
            tip = (f"{t['topic']}: {t['count']} messages, {t['rate_hz'] or 0:.2f} Hz, gap p50 "
                   f"{format_ns(t['gap_p50_ns'])} p99 {format_ns(t['gap_p99_ns'])} max "
                   f"{format_ns(t['gap_max_ns'])}, {t['gaps']} gaps, size p50 "
                   f"{format_bytes(t['size_p50'])}")
            chart.bar(i, 0.6, t["gap_p50_ns"], colour(i), tip)
            chart.marker(i, t["gap_p99_ns"], "#000", f"p99: {tip}")
            chart.marker(i, t["gap_max_ns"], "#c00", f"longest gap: {tip}", shape="diamond")
        out.add(chart)
    if probes:
        out.note = ("rates, gaps and sizes of every topic: mwperf query \"SELECT * FROM probes\"; "
                    "a probe's own table: mwperf show FOLDER")
    return out


def _ros2_blocks(probe: Probe) -> list[str]:
    """A ROS 2 probe's incompatibilities (when any) and endpoints table; [] for other probes."""
    if not any(t.get("dds_topic") for t in probe):
        return []
    head = probe[0]
    blocks = []
    texts = [line for t in probe for line in (t.get("incompatibilities") or "").splitlines()]
    if texts:
        blocks.append(
            f'<div class="attention probe-incompatible" style="flex-basis:100%">'
            f"<b>{escape(head['system'])} ({escape(head['probe_id'])}): QoS incompatibilities, "
            f"no data flows between these writers and readers</b><ul>"
            + "".join(f"<li>{escape(x)}</li>" for x in texts) + "</ul></div>")
    cells = ["topic", "publishers", "publisher QoS", "subscribers", "subscriber QoS",
             "bandwidth", "lost", "subscribed"]
    rows = "".join(
        "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in (
            t["topic"] + ("" if t.get("ros") is not False else " [dds]"),
            t.get("publisher_nodes") or "-", t.get("publisher_qos") or "-",
            t.get("subscriber_nodes") or "-", t.get("subscriber_qos") or "-",
            f"{format_bytes(round(t['bandwidth_bps']))}/s" if t.get("bandwidth_bps") else "-",
            t.get("lost") if t.get("lost") is not None else "-",
            "yes" if t.get("subscribed") else f"no: {t.get('why_not') or '?'}")) + "</tr>"
        for t in probe)
    blocks.append(f'<div class="wide probe-endpoints" style="flex-basis:100%"><p><b>'
                  f"{escape(head['system'])} ({escape(head['probe_id'])}): publishers and "
                  f"subscribers per topic</b></p><table><tr>"
                  + "".join(f"<th>{c}</th>" for c in cells) + f"</tr>{rows}</table></div>")
    return blocks


def markdown(found: Sequence[Probe]) -> str:
    """The probes' topics as a Markdown table, then the ROS 2 probes' incompatibilities ("" without
    probes)."""
    if not found:
        return ""
    lines = ["", "| probe | system | topic | count | rate | gap p50 | gap p99 | gap max | gaps | "
             "bandwidth | publishers | subscribers |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for probe in found:
        for t in probe:
            bandwidth = (f"{format_bytes(round(t['bandwidth_bps']))}/s"
                         if t.get("bandwidth_bps") else "-")
            lines.append(f"| {t['probe_id']} | {t['system']} | {t['topic']} | {t['count']} | "
                         f"{t['rate_hz'] or 0:.2f} Hz | {t['gap_p50_ns']} | {t['gap_p99_ns']} | "
                         f"{t['gap_max_ns']} | {t['gaps']} | {bandwidth} | "
                         f"{t.get('publisher_nodes') or '-'} | {t.get('subscriber_nodes') or '-'} |")
    texts = [f"- {t['probe_id']}: {line}" for probe in found for t in probe
             for line in (t.get("incompatibilities") or "").splitlines()]
    if texts:
        lines += ["", "QoS incompatibilities (no data flows):", *texts]
    return "\n".join(lines) + "\n"
