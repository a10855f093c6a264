"""The HTML report as one self-contained page: inline CSS, inline SVG charts and a few lines of
inline JavaScript for hover read-outs. Nothing is fetched (no CDN, no fonts, no favicon), so
the file opens from disk, offline, and can be attached to a pull request or an e-mail.

Order matters. The first screen answers the question the user ran mwperf for: which points did
not complete (one line when all did), then per payload and rate the transports ranked by p50
and by p99 with their loss (ranking.py), the warnings grouped by kind with the affected points
folded away, and each transport's saturation knee in one line. The runs' metadata, the full
summary table and the charts follow.
"""

from collections.abc import Sequence
from datetime import datetime, timezone
from html import escape
from typing import Any

from .. import __version__
from ..durations import format_ns
from ..show.table import THIN_NOTE
from .data import Run
from .labels import describe, run_tags
from .ranking import KneeLine, Situation, knee_lines, knee_rule, situations
from .section import Section
from .summary import COLUMNS, marked, numbering, shown

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1560px;padding:16px;
color:#222}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:6px 0;font-size:12.5px}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;white-space:nowrap}
th{background:#f3f3f3;position:sticky;top:0}.scroll{max-height:460px;overflow:auto}
td.num{text-align:right}.wide{overflow-x:auto}
.attention{border:2px solid #c0392b;background:#fdecea;padding:4px 10px;margin:6px 0}
#ranking-table{font-size:11.5px}#ranking-table td,#ranking-table th{padding:1px 3px}#ranking-table td.sit{font-weight:600}
#ranking-table td.by{color:#555}#ranking-table tr.p50 td{border-top:2px solid #bbb}
.lost{color:#b71c1c}.val{color:#444}details{margin:2px 0}summary{cursor:pointer}
ul.knees{margin:4px 0;padding-left:20px}ul.knees li{white-space:nowrap}
.attention.ok{border-color:#2e7d32;background:#edf7ed}
.warnbox{border:2px solid #e69500;background:#fff6e0;padding:4px 10px;margin:6px 0}
.status-failed{color:#b71c1c;font-weight:bold}.status-partial{color:#e65100;font-weight:bold}
.charts{display:flex;flex-wrap:wrap;gap:8px}.note{color:#555;font-size:13px}
.graph-run{flex-basis:100%;min-width:0}.graph-run h3{font-size:15px;margin:14px 0 2px}
svg.graph{background:#fff;border:1px solid #e4e4e4}
svg.chart{background:#fff;border:1px solid #e4e4e4}
svg .title{font-size:13px;font-weight:600}svg .tick,svg .legend{font-size:11px;fill:#333}
svg .axis{font-size:12px;fill:#333}svg .grid{stroke:#eee}svg .frame{fill:none;stroke:#999}
svg .datum:hover{stroke:#000;stroke-width:2}
#tip{position:fixed;pointer-events:none;background:#222;color:#fff;padding:4px 7px;
border-radius:3px;font-size:12px;white-space:pre;display:none;z-index:10}
"""
SCRIPT = """
(function(){var tip=document.getElementById('tip');
document.addEventListener('mousemove',function(e){
var t=e.target.closest?e.target.closest('[data-tip]'):null;
if(!t){tip.style.display='none';return;}tip.textContent=t.getAttribute('data-tip');
tip.style.display='block';tip.style.left=(e.clientX+14)+'px';tip.style.top=(e.clientY+12)+'px';});
})();
"""
MAX_WARNING_EXAMPLES = 3


def render(runs: Sequence[Run], sections: Sequence[Section], table: list[dict[str, Any]]
           ) -> str:
    """The whole report page."""
    now = f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M:%S} UTC"
    title = "mwperf report: " + (", ".join(run.run_id for run in runs) if len(runs) <= 2
                                 else f"{len(runs)} runs")
    body = [f"<h1>{escape(title)}</h1>",
            f'<p class="note">generated {now} by mwperf {escape(__version__)}; runs, '
            f'every number and the charts: <a href="#runs">below</a></p>',
            _attention(runs), _ranking(situations(runs)), _warnings(runs),
            _knees(knee_lines(runs)), _runs_table(runs)]
    if table or not any(run.graphs for run in runs):  # graph runs alone: their own section
        body += ["<h2 id=\"summary\">Summary</h2>", _summary(table)]
    for section in sections:
        if not section.charts and not section.note:
            continue
        body.append(f'<h2 id="{escape(section.key)}">{escape(section.title)}</h2>')
        if section.note:
            body.append(f'<p class="note">{escape(section.note)}</p>')
        body.append(f'<div class="charts" data-section="{escape(section.key)}">'
                    + "".join(section.charts) + "</div>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width\">"
            "<link rel=\"icon\" href=\"data:,\">"
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
            + "\n".join(body) + "<div id=\"tip\"></div><script>" + SCRIPT
            + "</script></body></html>\n")


def _runs_table(runs: Sequence[Run]) -> str:
    tags = run_tags(runs)
    head = ["tag", "run", "kind", "scenario / source", "started (UTC)", "status", "points",
            "host", "CPU", "cores", "kernel", "mwperf", "agent"]
    lines = []
    for run in runs:
        r = run.row
        source = r.get("scenario") or ""
        sources = {p.source.get("file") for p in run.points if p.source}
        if sources:
            source = f"{source} ({', '.join(sorted(str(s) for s in sources))})"
        cells = [tags[run.run_id] or "-", run.run_id, r.get("kind"), source or "-",
                 str(r.get("started_at") or "-"), _status(str(r.get("status"))),
                 str(len(run.points) + len(run.graphs)), r.get("hostname"), r.get("cpu_model"), r.get("cores"),
                 r.get("kernel"), r.get("mwperf_version"), r.get("agent_version")]
        lines.append("<tr>" + "".join(
            f"<td>{c if isinstance(c, _Html) else escape(str(c if c is not None else '-'))}</td>"
            for c in cells) + "</tr>")
    return ('<h2 id="runs">Runs</h2><div class="wide"><table><tr>'
            + "".join(f"<th>{h}</th>" for h in head) + "</tr>" + "".join(lines)
            + "</table></div>")


def _attention(runs: Sequence[Run]) -> str:
    numbers = numbering(runs)
    bad = [(run, p) for run in runs for p in run.points if p.status != "complete"]
    graphs = [g for run in runs for g in run.graphs]
    bad_graphs = [g for g in graphs if g.status != "complete"]
    if not bad and not bad_graphs:
        points = sum(len(r.points) for r in runs)
        runs_text = f"{len(graphs)} graph run{'s' if len(graphs) != 1 else ''}"
        if graphs and not points:
            return (f'<div class="attention ok" id="attention">Every graph run completed '
                    f'({runs_text}).</div>')
        counted = f"{points} points" + (f", {runs_text}" if graphs else "")
        return ('<div class="attention ok" id="attention">Every point completed '
                f'({counted}).</div>')
    items = "".join(
        f"<li>#{numbers[p.point_id]} <code>{escape(p.point_id)}</code> "
        f"{_status(p.status)} — {escape(p.get('status_reason') or 'no reason recorded')} "
        f"<span class=\"note\">({escape(describe(p))})</span></li>" for _, p in bad)
    items += "".join(
        f'<li>graph run <a href="#graph-{escape(g.graph_id)}"><code>{escape(g.graph_id)}'
        f"</code></a> {_status(g.status)} — "
        f"{escape(g.row.get('status_reason') or 'no reason recorded')} <span class=\"note\">"
        f"({escape(str(g.row['graph_name']))} over {escape(str(g.row['transport']))})</span>"
        "</li>" for g in bad_graphs)
    bad_count = len(bad) + len(bad_graphs)
    return (f'<div class="attention" id="attention"><b>{bad_count} point'
            f'{"s" if bad_count != 1 else ""} did not complete</b> (partial: what was measured '
            f"before the interruption is kept; failed: nothing measured)<ul>{items}</ul></div>")


def _warnings(runs: Sequence[Run]) -> str:
    """One line per kind of warning (how many points, one example, the hint); the affected
    points folded away under it."""
    numbers = numbering(runs)
    by_code: dict[str, list[tuple[int, Any, dict[str, Any]]]] = {}
    for run in runs:
        for point in run.points:
            for warning in point.warnings:
                by_code.setdefault(warning["code"], []).append(
                    (numbers[point.point_id], point, warning))
    if not by_code:
        return ""
    items = []
    for code, found in sorted(by_code.items(), key=lambda kv: -len(kv[1])):
        hint = found[0][2].get("hint")
        shown = "".join(f"<li>#{n} {escape(describe(p))}: {escape(w['message'])}</li>"
                        for n, p, w in found)
        items.append(f"<details><summary><b>{escape(code)}</b> at {len(found)} point"
                     f"{'s' if len(found) != 1 else ''}, e.g. {escape(found[0][2]['message'])}"
                     + (f" <i>Hint: {escape(hint)}</i>" if hint else "")
                     + f"</summary><ul>{shown}</ul></details>")
    return (f'<div class="warnbox" id="warnings"><b>Warnings</b> (click one for its points)'
            f'{"".join(items)}</div>')


def _ranking(found: list[Situation]) -> str:
    """Per situation two rows, ranked by p50 and by p99: 'transport value' per rank."""
    if not found:
        return ""
    width = max(len(s.by_p50) for s in found)
    head = ("<tr><th>at</th><th>by</th>"
            + "".join(f"<th>{i}.</th>" for i in range(1, width + 1)) + "</tr>")
    lines = []
    for situation in found:
        for key, entries in (("p50", situation.by_p50), ("p99", situation.by_p99)):
            first = (f'<td class="sit" rowspan="2">'
                     f'{"<br>".join(escape(part) for part in situation.title.split(" · "))}</td>'
                     if key == "p50" else "")
            cells = "".join(_ranked(entry, key) for entry in entries)
            cells += "<td></td>" * (width - len(entries))
            lines.append(f'<tr class="{key}">{first}<td class="by">{key}</td>{cells}</tr>')
    return ('<h2 id="ranking">Fastest first</h2><p class="note">At each payload and rate, the '
            "transports ranked by median round-trip or one-way latency (p50) and by p99, "
            "lower first; in red the share of messages lost, where any was.</p>"
            f'<div class="wide"><table id="ranking-table">{head}{"".join(lines)}</table></div>')


def _ranked(entry: Any, key: str) -> str:
    value = format_ns(entry.p50_ns if key == "p50" else entry.p99_ns)
    loss = f' <span class="lost">{entry.loss_pct:.2g}%</span>' if entry.loss_pct else ""
    return (f'<td data-tip="{escape(entry.name)}: p50 {format_ns(entry.p50_ns)}, p99 '
            f'{format_ns(entry.p99_ns)}, loss {entry.loss_pct or 0:.2f} %">'
            f'<b>{escape(entry.name)}</b> <span class="val">{value}</span>{loss}</td>')


def _knees(lines: list[KneeLine]) -> str:
    if not lines:
        return ""
    items = "".join(f"<li><b>{escape(line.name)}</b>: "
                    + " · ".join(f"{escape(where)} {escape(knee)}" if where else escape(knee)
                                 for where, knee in line.knees) + "</li>" for line in lines)
    return (f'<div id="knees"><b>Saturation knee</b> <span class="note">({escape(knee_rule())})'
            f'</span><ul class="knees">{items}</ul></div>')


def _summary(table: list[dict[str, Any]]) -> str:
    head = "".join(f"<th>{escape(c.heading)}</th>" for c in COLUMNS)
    lines = []
    for row in table:
        cells = []
        for column, text in zip(COLUMNS, shown(row)):
            if column.key == "status":
                cells.append(f"<td>{_status(text)}</td>")
            else:
                numeric = isinstance(row[column.key], (int, float))
                attr = ' class="num"' if numeric else ""
                cells.append(f"<td{attr}>{escape(text)}</td>")
        lines.append("<tr>" + "".join(cells) + "</tr>")
    note = f'<p class="note" id="thin-tail">{escape(THIN_NOTE)}</p>' if marked(table) else ""
    return (f'<div class="wide scroll"><table id="summary-table"><tr>{head}</tr>'
            f'{"".join(lines)}</table></div>{note}')


class _Html(str):
    """Markup that must not be escaped again."""


def _status(status: str) -> _Html:
    return _Html(f'<span class="status-{escape(status)}">{escape(status)}</span>')
