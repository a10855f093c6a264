"""A sweep's summary: the table, why points were not complete, skipped transports, warnings,
then the analysis — saturation knees (rate sweeps), comparisons across two-valued axes and
multi-topic and multi-subscriber rankings. Pure: returns text and JSON-able data; the CLI prints, sweep folders get
summary.md / summary.json.
"""

from dataclasses import dataclass, field
from typing import Any

from ..merge import SEVERITY
from ..show.soak import gate_lines
from ..show.table import render, render_notes
from .compare import Comparison, comparisons
from .expand import MAIN_FIELDS
from .knee import Knee, knees
from .manifest import NOT_SUPPORTED, PENDING, SKIPPED
from .observe import Observation, observations
from .sweep import SweepRun
from .bridges import BridgeRanking, rank_bridges
from .costs import cost_table
from .topics import TopicRanking, rank_subscribers, rank_topics


@dataclass
class Summary:
    """Everything the summary shows."""

    run: SweepRun
    observed: list[Observation]
    knees: list[Knee]
    comparisons: list[Comparison]
    rankings: list[TopicRanking]
    subscriber_rankings: list[TopicRanking] = field(default_factory=list)
    bridge_rankings: list[BridgeRanking] = field(default_factory=list)

    @property
    def status(self) -> str:
        """The worst status of a measured point ('partial' if stopped before the end)."""
        statuses = [o.status for o in self.observed if o.status in SEVERITY]
        statuses += ["partial"] * (self.run.interrupted or self.pending > 0)
        return max(statuses, key=SEVERITY.__getitem__, default="complete")

    @property
    def gates_failed(self) -> int:
        """How many gates failed over every point (--gate, gates:): any makes the exit 1."""
        return sum(not g["passed"] for o in self.observed for g in o.gates)

    @property
    def pending(self) -> int:
        """Points never reached (the sweep was stopped)."""
        return sum(e.status == PENDING for e in self.run.entries)

    def text(self, markdown: bool = False) -> str:
        """The table, the notes and the analysis sections."""
        rows = [o.row for o in self.observed]
        warnings = [(o.point.label(), w) for o in self.observed for w in o.warnings]
        out = [_with_axes(render(rows, markdown=markdown), self.observed, markdown),
               render_notes(rows, warnings)]
        out += [line + "\n" for line in self._notes()]
        costs = cost_table(self.observed, markdown)
        if costs:
            out.append(f"\n{'## ' if markdown else ''}What the middleware costs (IP bytes per "
                       f"message each way, setup, idle per second; heap allocations per "
                       f"message; the agents' own peak RSS)\n" + ("\n" if markdown else "")
                       + costs)
        analysis = self.run.sweep.scenario.analysis
        sections = [
            ("Saturation knee (p99 < period x {:g}, loss < {:g}%)".format(
                analysis.knee_factor, analysis.knee_loss_pct),
             [k.text(analysis) for k in self.knees]),
            ("Comparisons", [line for c in self.comparisons for line in c.lines()]),
            ("Topics ranked by p50 (multi-topic points)", [r.line() for r in self.rankings]),
            ("Subscribers ranked by p50 (--subscribers points)",
             [r.line() for r in self.subscriber_rankings]),
            ("Bridges ranked by added latency (p50 minus the direct path's, same transport)",
             [r.line() for r in self.bridge_rankings]),
            ("Throughput (delivered msgs/s and MB/s, summed over the subscribers; loss; the "
             "share of its sending time the middleware held the sender back)",
             [f"{o.point.label()}: {o.throughput}" for o in self.observed if o.throughput]),
            ("Gates (--gate, the scenario's gates:)",
             [f"{o.point.label()}: {line}" for o in self.observed
              for line in gate_lines(o.gates)]),
            ("Graphs (a graph point's row: rate = what its publishers offer, latency = its "
             "worst edge's; here its chains end to end and its worst edges)",
             [line for o in self.observed if o.graph
              for line in [o.point.label()] + ["  " + g for g in o.graph]]),
        ]
        for title, lines in sections:
            if lines:
                out.append(f"\n{'## ' if markdown else ''}{title}\n"
                           + ("\n" if markdown else ""))
                out += [_bullet(line) if markdown else line + "\n" for line in lines]
        return "".join(out)

    def to_dict(self) -> dict[str, Any]:
        """summary.json."""
        scenario = self.run.sweep.scenario
        return {
            "scenario": scenario.name, "quick": scenario.quick, "status": self.status,
            "points": len(self.run.entries), "pending": self.pending,
            "skipped": [{"index": e.index, "label": e.label, "reason": e.reason}
                        for e in self.run.entries if e.status == SKIPPED],
            "rows": [dict(o.row.to_dict(), index=o.point.index, axes=dict(o.point.axes),
                          repetition=o.point.repetition) for o in self.observed],
            "analysis": {"knee_factor": scenario.analysis.knee_factor,
                         "knee_loss_pct": scenario.analysis.knee_loss_pct},
            "knees": [k.to_dict() for k in self.knees],
            "comparisons": [c.to_dict() for c in self.comparisons],
            "topics": [r.to_dict() for r in self.rankings],
            "subscribers": [r.to_dict() for r in self.subscriber_rankings],
            "bridges": [r.to_dict() for r in self.bridge_rankings],
            "throughput": [{"index": o.point.index, "label": o.point.label(),
                            "line": o.throughput} for o in self.observed if o.throughput],
            "gates": [dict(g, index=o.point.index, label=o.point.label())
                      for o in self.observed for g in o.gates],
            "gates_failed": self.gates_failed,
        }

    def _notes(self) -> list[str]:
        skipped: dict[str, int] = {}
        for entry in self.run.entries:
            if entry.status == SKIPPED and entry.reason:
                skipped[entry.reason] = skipped.get(entry.reason, 0) + 1
        lines = [f"skipped: {reason} ({n} point{'s' * (n > 1)})"
                 for reason, n in skipped.items()]
        if self.pending:
            lines.append(f"not measured: {self.pending} point{'s' * (self.pending > 1)} "
                         f"(stopped; 'mwperf run --resume FOLDER' measures them)")
        return lines


def _bullet(line: str) -> str:
    """A Markdown list item; a line indented by two spaces is one level deeper."""
    return ("  - " + line.strip() if line.startswith("  ") else "- " + line) + "\n"


def _with_axes(table: str, observed: list[Observation], markdown: bool) -> str:
    """The table with a column per axis the standard columns do not show (and the repetition),
    so the points of e.g. a reliability axis can be told apart."""
    names = [n for n, _ in observed[0].point.axes if n not in MAIN_FIELDS] if observed else []
    reps = bool(observed) and observed[0].point.repeats > 1
    if not names and not reps:
        return table
    header = names + ["rep"] * reps
    cells = [[dict(o.point.axes)[n] for n in names] + [str(o.point.repetition)] * reps
             for o in observed]
    lines = table.splitlines()
    if markdown:
        extra = [header, ["---"] * len(header)] + cells
        return "".join("| " + " | ".join(cols) + " " + line + "\n"
                       for cols, line in zip(extra, lines)) + _after(lines, len(extra))
    widths = [max(len(row[i]) for row in [header] + cells) for i in range(len(header))]
    return "".join("  ".join(c.ljust(w) for c, w in zip(cols, widths)) + "  " + line + "\n"
                   for cols, line in zip([header] + cells, lines)) + _after(lines, len(cells) + 1)


def _after(lines: list[str], table_lines: int) -> str:
    """What follows the table's own lines (its footnote), unchanged."""
    return "".join(line + "\n" for line in lines[table_lines:])


def summarize(run: SweepRun) -> Summary:
    """The summary of a sweep run (analysis over the points that were measured)."""
    observed = observations(run)
    measured = [o for o in observed if o.status != NOT_SUPPORTED]
    return Summary(run, observed, knees(measured, run.sweep.scenario.analysis),
                   comparisons(measured), rank_topics(measured), rank_subscribers(measured),
                   rank_bridges(measured))
