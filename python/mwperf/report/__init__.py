"""``mwperf report``: the runs of a results catalogue as one self-contained HTML page (SVG
charts, hover read-outs, no network) or as summary tables (Markdown, CSV, JSON).

Everything comes from the catalogue and the Parquet files beside it (mwperf.store): the
report never parses point folders itself, so single runs, sweeps and imports look alike. Each
plot is one module (graphs, throughput, layers, latency_rate, distribution, timeline, loss_jitter,
topics, resources, soak, tax, security);
:func:`build` is pure apart from reading the catalogue and returns the text to write.
"""

import json
from collections.abc import Sequence
from pathlib import Path

from ..errors import UsageError
from ..store.sources import staged
from . import (alloc_sites, bridges, costs, distribution, graph_layers, graphs, latency_rate,
               layers, loss_jitter, page, probes, profiles, resources, security, services, soak,
               summary, tax, throughput, timeline, topics)
from .data import Run, load_runs

from ..formats import REPORT_FORMATS as FORMATS


def build(root: Path, wanted: Sequence[str], fmt: str = "html") -> str:
    """The report on the runs ``wanted`` names (ids, prefixes, 'latest', or paths: see
    mwperf.store.sources) in format ``fmt``."""
    if fmt not in FORMATS:
        raise UsageError(f"--format: '{fmt}' is not one of {', '.join(FORMATS)}")
    probe_ids, rest = probes.split(root, list(wanted))
    found = probes.load(root, probe_ids)
    runs = []
    if rest or not probe_ids:
        with staged(root, rest) as (where, names):
            runs = load_runs(where, names, messages=fmt == "html")
    table = summary.rows(runs)
    if fmt == "html":
        return html(runs, table, found)
    if fmt == "json":
        return json.dumps({"runs": [_plain(r.row) for r in runs], "points": table,
                           "warnings": _warnings(runs),
                           "probes": [[_plain(t) for t in p] for p in found],
                           "graph_runs": [_plain(g.row) for g in graphs.graph_runs(runs)],
                           "graph_edges": graphs.edge_rows(runs),
                           "throughput": throughput.rows(runs),
                           "layers": layers.rows(runs)},
                          indent=2, ensure_ascii=False) + "\n"
    if fmt == "csv":
        return summary.render(table, "csv") + graphs.csv_text(runs)
    return (markdown(runs, table) + throughput.markdown(runs) + layers.markdown(runs)
            + services.markdown(runs) + tax.markdown(runs) + security.markdown(runs)
            + graphs.markdown(runs)
            + probes.markdown(found))


def html(runs: Sequence[Run], table: list[dict], found: Sequence[probes.Probe] = ()) -> str:
    """The HTML page of ``runs`` (and of the probes ``found``)."""
    numbers = summary.numbering(runs)
    sections = [graphs.section(runs), graph_layers.section(runs), throughput.section(runs),
                layers.section(runs),
                latency_rate.section(runs), distribution.section(runs), timeline.section(runs),
                loss_jitter.section(runs), topics.section(runs), services.section(runs),
                tax.section(runs), security.section(runs), bridges.section(runs),
                resources.section(runs, numbers), soak.section(runs),
                costs.section(runs, numbers),
                alloc_sites.section(runs, numbers), profiles.section(runs, numbers),
                probes.section(found)]
    return page.render(runs, sections, table)


def markdown(runs: Sequence[Run], table: list[dict]) -> str:
    """The runs, the summary table and the warnings as Markdown."""
    lines = ["| run | kind | scenario | started (UTC) | status | points | host |",
             "|---|---|---|---|---|---|---|"]
    for run in runs:
        r = run.row
        lines.append(f"| {run.run_id} | {r.get('kind')} | {r.get('scenario') or '-'} | "
                     f"{r.get('started_at')} | {r.get('status')} | {len(run.points) + len(run.graphs)} | "
                     f"{r.get('hostname')} ({r.get('cpu_model')}, {r.get('cores')} cores) |")
    out = "\n".join(lines) + "\n"
    if table or not any(run.graphs for run in runs):  # graph runs alone: only their tables
        out += "\n" + summary.render(table, "markdown")
    warnings = _warnings(runs)
    if warnings:
        out += "\nWarnings:\n" + "".join(
            f"- #{w['number']} {w['code']}: {w['message']}"
            + (f" (hint: {w['hint']})" if w.get("hint") else "") + "\n" for w in warnings)
    return out


def _warnings(runs: Sequence[Run]) -> list[dict]:
    numbers = summary.numbering(runs)
    return [{"number": numbers[p.point_id], "point_id": p.point_id, "code": w["code"],
             "message": w["message"], "hint": w.get("hint")}
            for run in runs for p in run.points for w in p.warnings]


def _plain(row: dict) -> dict:
    return {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()
            if k != "host"}
