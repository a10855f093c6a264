"""The ``mwperf`` command line. Every failure is one line on stderr and an exit code:
2 for a usage error, 1 for a run-time error; ``run`` exits 0 complete, 3 partial, 1 failed, and
1 when a gate (``--gate``) failed.
"""

import contextlib
import importlib
import os
import signal
import sys
import textwrap
import traceback
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import click

from . import __version__, store
from .agent import find_agent
from .config import PointConfig, build_point
from .formats import COMPARE_FORMATS, QUERY_FORMATS, REPORT_FORMATS
from .options import point_options
from .durations import format_ns
from .emulation.presets import PRESETS
from .errors import MwperfError, NotSaved, UsageError
from .jsonout import emit_json, json_options
from .leases import reap_stale
from .merge import EXIT_CODES
from .result.save import written
from .results import write_text
from .runner import Interrupted, Outcome
from .session import measure, scratch_folder
from .show import soak as soak_show
from .soak.gates import exit_code as gates_exit
from .soak.gates import failed as failed_gates
from .store.duckerr import interrupted
from .store.probes import is_probe_folder, probe_text
from .sizes import format_bytes
from .show.details import render_details
from .show.table import format_rate, label, render, render_notes, row_from_result

if TYPE_CHECKING:
    from .scenario import Request

POINT_OPTIONS = ("transport", "mode", "rate", "payload", "duration", "count", "warmup", "pong",
                 "pong_cmd",
                 "topics", "executor", "busy_loop", "link", "link_backend",
                 "session_timeout", "subscribers", "bridge", "replay", "replay_topics",
                 "replay_rate", "replay_window", "replay_loop", "graph", "baseline", "without",
                 "copies", "processes", "rate_scale", "reply_payload", "server_work", "in_flight", "clients",
                 "call_timeout", "restart", "secure")
CONDITION_OPTIONS = ("peer_timeout", "spin_margin", "busy_poll", "prevent_cpu_idle", "keep_awake",
                     "reliability", "history", "depth", "durability", "discovery_timeout",
                     "cpu_quota", "cpu_pin", "rt_priority", "host", "remote_place", "ssh_config",
                     "accept_new_host_key", "clock_sync", "test_clock", "count_allocs",
                     "alloc_sites", "wire_bytes", "idle", "profile", "min_samples", "layers",
                     "gates", "targets")


class _Commands(click.Group):
    """mwperf's commands; the groups of LAZY are imported when asked for (help lists them all)."""

    LAZY = {"bag": ("mwperf.bags.commands", "bag_group"),
            "probe": ("mwperf.probe.command", "probe")}
    """name -> (module, attribute): commands whose modules not every start needs"""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.LAZY])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.LAZY:
            module, attribute = self.LAZY[cmd_name]
            command: click.Command = getattr(importlib.import_module(module), attribute)
            return command
        return super().get_command(ctx, cmd_name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """mwperf: measure how well middleware communicates (latency, loss, jitter, CPU)."""


JsonTo = tuple[bool, str | None]
"""(--json, --json-out FILE)"""


class _RunCommand(click.Command):
    """``run``, refusing the old ``--json FILE``: --json is a flag now, so FILE would become
    SCENARIO."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        for index, arg in enumerate(args):
            if arg == "--":
                break
            value = arg[len("--json="):] if arg.startswith("--json=") else None
            if arg == "--json" and index + 1 < len(args):
                following = args[index + 1]
                if following == "-" or (following.endswith(".json")
                                        and not _is_scenario(following)):
                    value = following
            if value is not None:
                raise UsageError(f"--json: takes no value (got '{value}'); --json alone prints "
                                 f"the result as JSON, --json-out FILE writes it to FILE")
        return super().parse_args(ctx, args)


def _is_scenario(spec: str) -> bool:
    from .scenario.catalog import load_scenario

    try:
        load_scenario(spec)
    except MwperfError:
        return False
    return True


@cli.command(cls=_RunCommand)
@click.argument("scenario", required=False)
@point_options
@json_options("the result (a suite: its summary rows)")
@click.option("--results", default="results", show_default=True, metavar="DIR",
              help="Where result directories are written.")
@click.option("--no-save", is_flag=True, help="Do not write a result directory.")
@click.option("--quick", is_flag=True, help="With a scenario: its quick variant (minutes).")
@click.option("--dry-run", is_flag=True, help="With a scenario: list its points, measure nothing.")
@click.option("--resume", metavar="FOLDER", help="Continue the sweep in FOLDER (a sweep folder "
              "under --results): measure only the points without a complete result.")
@click.option("--peak-search", is_flag=True, help="Find the highest rate the point keeps (a "
              "graph: the highest factor on every publisher's rate): a binary search, then a "
              "short linear scan up, each trial a saved point of --duration; a trial passes with "
              "loss and late sends <= --peak-loss and p99 <= --peak-p99. Prints the curve walked "
              "and the peak; saves peak.json. docs/scenarios.md, Peak-rate search.")
@click.option("--peak-range", metavar="LOW..HIGH", help="--peak-search: the range searched, "
              "in Hz (a graph: factors).  [default: 10..100000, a graph 0.25..16]")
@click.option("--peak-loss", metavar="PCT%", help="--peak-search: the loss a passing trial "
              "may have.  [default: 1%]")
@click.option("--peak-p99", metavar="period|DURATION", help="--peak-search: the p99 latency a "
              "passing trial must stay below: each trial's period (a graph: each edge's), or a "
              "fixed duration.  [default: period]")
@click.option("--peak-topic", metavar="TOPIC", help="--peak-search with --graph: scale only "
              "this topic's publishers (the graph's input edge) instead of every publisher.")
@click.option("--peak-repeat", metavar="N", help="--peak-search: walk N times; with 3 or more "
              "the best and the worst peak are dropped and the rest averaged.  [default: 1]")
def run(scenario: str | None, as_json: bool, json_out: str | None, results: str, no_save: bool,
        quick: bool, dry_run: bool, resume: str | None, peak_search: bool,
        peak_range: str | None, peak_loss: str | None, peak_p99: str | None,
        peak_repeat: str | None, peak_topic: str | None, **options: Any) -> int:
    """Measure one point, or every point of SCENARIO: a YAML file or a built-in name (see
    'mwperf scenarios'; docs/scenarios.md describes the format).

    \b
    Examples:
      mwperf run --transport udp --rate 1000 --payload Array1k --duration 10s
      mwperf run --transport tcp --mode oneway --rate 0 --count 100000
      mwperf run --transport zenoh --opt mode=client --rate 0 --duration 5s
      mwperf run --transport ros1 --pong relay
      mwperf run --transport udp --rate 100 --topics 3 --executor single --busy-loop 1.8ms
      mwperf run --transport ros1 --mode oneway --rate 1000 --subscribers 4
      mwperf run --transport udp --link wifi-80211n
      mwperf run --transport udp --duration 5s --json-out result.json
      mwperf run default --quick
      mwperf run my-sweep.yaml --dry-run
      mwperf run --resume results/20261123T101500Z-default-3f2a
    """
    results_dir = None if no_save else Path(results)
    options["host"] = ",".join(options["host"]) or None  # --host is repeatable
    options["without"] = ",".join(options["without"]) or None  # so is --without
    options["graph"] = ",".join(options["graph"]) or None  # and --graph (graph/combine.py)
    json_to = (as_json, json_out)
    reap_stale(lambda line: click.echo(f"mwperf: {line}", err=True))
    peak_flags = {"--peak-range": peak_range, "--peak-loss": peak_loss,
                  "--peak-p99": peak_p99, "--peak-repeat": peak_repeat,
                  "--peak-topic": peak_topic}
    if not peak_search and any(v is not None for v in peak_flags.values()):
        flag = next(f for f, v in peak_flags.items() if v is not None)
        raise UsageError(f"{flag}: only with --peak-search")
    if peak_search:
        if scenario is not None or resume is not None:
            raise UsageError("--peak-search: one point or one graph, not a scenario")
        return _run_peak(options, (peak_range, peak_loss, peak_p99, peak_repeat, peak_topic),
                         json_to, results_dir)
    if scenario is not None or resume is not None:
        from .scenario import Request

        request = Request(scenario, quick, results_dir, Path(resume) if resume else None,
                          _conditions(scenario or resume or "", options))
        return _run_scenario(request, json_to, dry_run)
    for flag, given in (("--quick", quick), ("--dry-run", dry_run)):
        if given:
            raise UsageError(f"{flag}: only applies to a scenario, e.g. 'mwperf run default "
                             f"{flag}'")
    if options["graph"] is not None:
        return _run_graph(options, json_to, results_dir)
    return _run_point(options, json_to, results_dir)


def _run_graph(options: dict[str, Any], json_to: JsonTo, results_dir: Path | None) -> int:
    from .show import graph as graph_show
    from .graph.measure import measure_graph

    cfg = build_point(options, find_agent)
    outcome, saved, not_saved = _kept(lambda: measure_graph(
        cfg, find_agent(), results_dir, say=lambda line: click.echo(f"mwperf: {line}", err=True)))
    result = outcome.result
    if not emit_json(written(result), *json_to):  # v3, as saved (result/save.py)
        click.echo(graph_show.render(result) + soak_show.render(result)
                   + (f"saved in {saved} (graph.html: the graph drawn)\n" if saved else ""),
                   nl=False)
    if not_saved is not None:
        raise not_saved
    return gates_exit(EXIT_CODES[result["status"]], len(failed_gates(result)))


def _run_peak(options: dict[str, Any], flags: tuple[str | None, ...], json_to: JsonTo,
              results_dir: Path | None) -> int:
    from .peak import run as peak_run
    from .peak.show import render as render_peak

    graph = options.get("graph") not in (None, "")
    peak_run.refuse_with(options, graph)
    range_, loss, p99, repeat, topic = flags
    request = peak_run.parse_request(range_, loss, p99, repeat, graph, topic)
    say = lambda line: click.echo(f"mwperf: {line}", err=True)  # noqa: E731

    def measure_at(trial: dict[str, Any]) -> tuple[dict[str, Any], Path | None, bool]:
        cfg = build_point(trial, find_agent)
        outcome, saved, not_saved = _kept(lambda: measure(cfg, find_agent(), results_dir))
        if not_saved is not None:
            raise not_saved
        return outcome.result, saved, outcome.interrupted

    peak = peak_run.run_peak(options, request, measure_at, results_dir, say)
    if not emit_json(peak, *json_to):
        where = results_dir / peak["run_id"] if results_dir is not None else None
        click.echo(render_peak(peak) + (f"saved in {where}\n" if where else ""), nl=False)
    if peak["status"] == "partial":
        return EXIT_CODES["partial"]
    return 0 if peak["peak"] is not None else 1


def _kept(measure_it: Callable[[], tuple[Outcome, Path | None]]
          ) -> tuple[Outcome, Path | None, NotSaved | None]:
    """``measure_it()``'s outcome and folder, and the NotSaved it raised (a full or read-only
    disk): its measurement is then reported before the error."""
    try:
        outcome, saved = measure_it()
    except NotSaved as exc:
        if not isinstance(exc.outcome, Outcome):
            raise
        return exc.outcome, None, exc
    return outcome, saved, None


def _run_point(options: dict[str, Any], json_to: JsonTo, results_dir: Path | None) -> int:
    from .bags import replay_point

    if options.get("replay") is not None and options.get("host"):
        raise UsageError("--replay: agents on this machine only (not with --host)")
    with contextlib.ExitStack() as stack:  # a replay's traces: in a leased folder (session.py)
        folder = stack.enter_context(scratch_folder()) if options.get("replay") else Path()
        cfg = replay_point.build(options, replay_point.written_into(folder),
                                 lambda o: build_point(o, find_agent))
        return _measure_point(cfg, json_to, results_dir)


def _measure_point(cfg: PointConfig, json_to: JsonTo, results_dir: Path | None) -> int:
    from .scenario.progress import length_note

    how_long = (f"{cfg.count} messages" if cfg.count is not None
                else length_note(cfg) or format_ns(cfg.duration_ns))
    rate = "as fast as possible" if cfg.rate == 0 else f"at {format_rate(cfg.rate)}"
    click.echo(f"mwperf: measuring {cfg.transport} {cfg.mode} {rate}, "
               f"{format_bytes(cfg.payload_bytes)} payload, {how_long} ...", err=True)
    outcome, saved, not_saved = _kept(lambda: measure(cfg, find_agent(), results_dir))
    result = outcome.result
    if not emit_json(written(result), *json_to):  # v3, with its stream view (result/save.py)
        row = row_from_result(result, str(saved) if saved else None)
        notes = render_notes([row], [(label(row), w) for w in result["warnings"]])
        click.echo(render([row]) + render_details(result) + notes + soak_show.render(result)
                   + (f"saved in {saved}\n" if saved else ""), nl=False)
    if not_saved is not None:
        raise not_saved
    return gates_exit(EXIT_CODES[result["status"]], len(failed_gates(result)))


def _conditions(scenario: str, options: dict[str, Any]) -> dict[str, Any]:
    """The condition flags given with a scenario (they apply to every point)."""
    point_flags = [name for name in POINT_OPTIONS if options[name] not in (None, ())]
    point_flags += ["samples"] * options["samples"] + ["opt"] * bool(options["opt"])
    if point_flags:
        flag = "--" + point_flags[0].replace("_", "-")
        raise UsageError(f"{flag}: cannot be combined with scenario '{scenario}', which defines "
                         f"its own points; with a scenario use --quick, --min-samples, "
                         f"--peer-timeout, --spin-margin, --busy-poll, --prevent-cpu-idle, the "
                         f"QoS flags or the CPU flags")
    return {name: options[name] for name in CONDITION_OPTIONS
            if options[name] is not None and options[name] is not False
            and options[name] != ()}


def _run_scenario(request: "Request", json_to: JsonTo, list_only: bool) -> int:
    from .scenario import dry_run, launch, plan_sweep, resolve

    scenario, _ = resolve(request)  # a bad file fails before the agent is looked for
    if list_only:
        if json_to[0] or json_to[1]:
            flag = "--json" if json_to[0] else "--json-out"
            raise UsageError(f"{flag}: not with --dry-run, which measures nothing and prints "
                             f"only the points; give one of them")
        click.echo(dry_run(plan_sweep(scenario, find_agent(), request.conditions)), nl=False)
        return 0
    summary = launch(request, find_agent())
    not_saved = summary.run.not_saved
    if not emit_json(summary.to_dict(), *json_to):
        folder = summary.run.folder if not_saved is None else None
        click.echo(summary.text() + (f"saved in {folder}\n" if folder else ""), nl=False)
    if not_saved is not None:
        raise not_saved
    return gates_exit(EXIT_CODES[summary.status], summary.gates_failed)


@cli.command()
def scenarios() -> None:
    """List the built-in scenarios with their descriptions (run one: 'mwperf run NAME')."""
    from .scenario import describe_built_ins

    found = describe_built_ins()
    width = max((len(name) for name, _ in found), default=0)
    for name, description in found:
        click.echo(f"{name.ljust(width)}  {description}")


@cli.command()
@click.argument("graph", required=False, metavar="GRAPH")
@json_options("the graphs")
def graphs(graph: str | None, as_json: bool, json_out: str | None) -> None:
    """List the built-in graphs (nodes, topics, edges, chains); with GRAPH (a built-in's NAME
    or a graph FILE: YAML, or an iRobot topology .json), check it and show it in full."""
    from .graph import listing
    from .graph.builtin import load_graph

    if graph is None:
        rows = listing.listing()
        if not emit_json(rows, as_json, json_out):
            click.echo(listing.render_listing(rows), nl=False)
        return
    found = load_graph(graph)
    if not emit_json(listing.detail(found), as_json, json_out):
        click.echo(listing.render_detail(found), nl=False)


@cli.command()
def payloads() -> None:
    """List the payload catalogue: name and payload bytes (after the 56-byte header)."""
    catalogue = find_agent().payloads()
    width = max((len(name) for name in catalogue), default=0)
    for name, size in catalogue.items():
        click.echo(f"{name.ljust(width)}  {size:>10}  {format_bytes(size)}")


@cli.command()
@click.option("--payload", "wanted", multiple=True, metavar="NAME", help="Only these payloads "
              "(repeatable): Struct256, Array1k, Array64k, PointCloud512k.  [default: all]")
@json_options("the rows")
def encodings(wanted: tuple[str, ...], as_json: bool, json_out: str | None) -> None:
    """The size of one message and its encode/decode time as CDR (ROS 2), ROS 1 serialization,
    JSON as rosbridge sends it and CBOR, with real serializers (rosbags, json, cbor2), beside
    the bridge latency comparison's sizes (docs/costs.md)."""
    from . import encodings as enc

    unknown = [w for w in wanted if w not in enc.PAYLOADS]
    if unknown:
        raise UsageError(f"--payload: '{unknown[0]}' is not one of {', '.join(enc.PAYLOADS)}")
    rows = enc.measure(tuple(wanted) or enc.PAYLOADS)
    if not emit_json([r.to_dict() for r in rows], as_json, json_out):
        click.echo(enc.render(rows), nl=False)


@cli.command()
@click.option("--transport", "wanted", multiple=True, metavar="NAME", help="Only these "
              "transports (repeatable).  [default: every transport built into the agent]")
@json_options("the findings")
def footprint(wanted: tuple[str, ...], as_json: bool, json_out: str | None) -> None:
    """The agent's size by crate (symbol sizes), and per transport the shared libraries its
    pong maps beyond plain UDP's and its resident memory after setup with one endpoint open
    (one short round trip each; daemons are started as for a run)."""
    from . import footprint as fp

    agent = find_agent()
    built = agent.transports()
    unknown = [w for w in wanted if w not in built]
    if unknown:
        raise UsageError(f"--transport: '{unknown[0]}' is not built into the agent "
                         f"(built: {', '.join(built)})")
    names = list(dict.fromkeys(["udp", *(wanted or built)]))  # udp: the libraries' baseline
    rows = fp.with_added_libraries([fp.transport_memory(t) for t in names])
    if wanted and "udp" not in wanted:
        rows = [r for r in rows if r["transport"] != "udp"]
    binary = fp.binary(agent.path)
    if not emit_json({"agent": binary.to_dict(), "transports": rows}, as_json, json_out):
        click.echo(fp.render(binary, rows), nl=False)


@cli.command()
def links() -> None:
    """List the link presets for --link: their spec, what they model, and their sources."""
    for name, preset in PRESETS.items():
        click.echo(f"{name}: {preset.about}\n  --link {preset.spec}\n"
                   + textwrap.fill(f"source: {preset.source}", 98, initial_indent="  ",
                                   subsequent_indent="    ") + "\n")


@cli.command()
def transports() -> None:
    """List the transports built into the agent."""
    for name in find_agent().transports():
        click.echo(name)


@cli.command()
def version() -> None:
    """Print the versions of mwperf and of the agent it uses."""
    click.echo(f"mwperf {__version__}")
    agent = find_agent()
    click.echo(f"{agent.version()} ({agent.path})")


@cli.command()
@click.option("--results", default="results", show_default=True, metavar="DIR",
              help="The results folder.")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(min=1),
              help="Show the newest N runs.")
@click.option("--rebuild", is_flag=True, help="Recreate the catalogue from the point folders "
              "(after a damaged catalogue, or to add folders copied in).")
def results(results: str, limit: int, rebuild: bool) -> None:
    """List the runs in the results catalogue (DIR/catalogue.duckdb), newest first.

    \b
    Examples:
      mwperf results
      mwperf results --results /data/lab --limit 5
      mwperf results --rebuild
    """
    root = Path(results)
    if rebuild:
        report = store.rebuild(root)
        for folder, reason in report.skipped:
            click.echo(f"mwperf: skipped {folder}: {reason}", err=True)
        graphs = f", {report.graphs} graph runs" if report.graphs else ""
        click.echo(f"rebuilt {store.catalogue_path(root)}: {len(report.runs)} runs, "
                   f"{report.points} points{graphs}", err=True)
    click.echo(store.list_runs(root, limit).render("table"), nl=False)


@cli.command()
@click.argument("targets", nargs=-1)
@click.option("--results", default="results", show_default=True, metavar="DIR",
              help="The results folder.")
@click.option("--point", type=click.IntRange(min=1), metavar="N",
              help="Only point N of the sweep (its number in the progress lines [N/M]).")
def show(targets: tuple[str, ...], results: str, point: int | None) -> None:
    """Show each point's full details (service time, accounting, discovery, CPU, daemons,
    every emulated link, the outage) as a single run prints them. TARGETS: run ids, unique
    prefixes or 'latest' (the default), or paths to point folders / result files.

    \b
    Examples:
      mwperf show
      mwperf show 20261123T1522 --point 3
      mwperf show results/20261123T152248Z-three-852d/points/*/
      mwperf show results/20261124T235900Z-probe-zenoh-1a2b
    """
    from .show.points import load_targets, render_points

    probes = [t for t in targets if is_probe_folder(Path(t))]
    for folder in probes:  # a saved probe: what it printed
        click.echo(probe_text(Path(folder)) + f"from {folder}\n", nl=False)
    rest = tuple(t for t in targets if t not in probes)
    if rest or not probes:
        click.echo(render_points(load_targets(Path(results), rest, point)), nl=False)


@cli.command()
@click.argument("sql")
@click.option("--results", default="results", show_default=True, metavar="DIR",
              help="The results folder.")
@click.option("--format", "fmt", type=click.Choice(QUERY_FORMATS), default="table",
              show_default=True, help="Output format.")
def query(sql: str, results: str, fmt: str) -> None:
    """Run SQL (read-only) over the results catalogue: tables runs, points, topics, subscribers,
    warnings, probes; views samples and series over the Parquet files.

    \b
    Examples:
      mwperf query "select transport, rate, latency_p99_ns from points order by 3"
      mwperf query "select point_id, quantile_cont(response_ns, 0.999) from samples group by 1"
      mwperf query "select * from warnings" --format csv
    """
    click.echo(store.run_query(Path(results), sql).render(fmt), nl=False)


@cli.command()
@click.argument("runs", nargs=-1)
@click.option("--results", default="results", show_default=True, metavar="DIR",
              help="The results folder.")
@click.option("-o", "--output", metavar="FILE", help="Where to write the report  [default: "
              "report.html for html, standard output otherwise].")
@click.option("--format", "fmt", type=click.Choice(REPORT_FORMATS), default="html",
              show_default=True, help="html: one self-contained page; markdown, csv, json: the "
              "summary tables.")
def report(runs: tuple[str, ...], results: str, output: str | None, fmt: str) -> None:
    """Report on RUNS side by side: run ids, unique prefixes or 'latest' (the default) of the
    --results catalogue, or paths to result files, point folders, sweep folders or results
    folders (a results folder: its latest run).

    \b
    Examples:
      mwperf report -o report.html
      mwperf report 20261122T1015 20261122T1102 -o both.html
      mwperf report latest --format markdown
      mwperf report baseline/results/ results/20261123T152248Z-suite-default-852d/
    """
    from . import report as report_module

    text = report_module.build(Path(results), runs, fmt)
    target = output or ("report.html" if fmt == "html" else "-")
    if target == "-":
        click.echo(text, nl=False)
        return
    write_text(Path(target), text)
    click.echo(f"mwperf: wrote {target} ({len(text.encode()) / 1e6:.2f} MB)", err=True)


@cli.command()
@click.argument("base")
@click.argument("new")
@click.option("--budget", "budget_flags", multiple=True, metavar="METRIC=LIMIT",
              help="How much worse NEW may be, repeatable: p50|p99|max=+10% or +50us, "
              "loss=+0.5pp, cpu=+20% or +5pp, rss=+20% or +8MiB, allocs_per_msg=+0 "
              "(--count-allocs or --alloc-sites), wire_bytes=+5% or +16 (--wire-bytes), "
              "timeouts=+0.1pp and server_p99=+50us (--mode service), throughput=-5% or -1000 "
              "(--mode throughput: delivered msgs/s, worse when lower), "
              "layer.NAME=+10% or +50us (--layers: that layer's p50, e.g. "
              "layer.middleware_send).  "
              "[default: p50=+10% p99=+10% loss=+0.5pp]")
@click.option("--budget-file", metavar="FILE", help="YAML budgets (METRIC: LIMIT, optional "
              "alpha: 0.05), e.g. one file per platform; --budget flags override it.")
@click.option("--results", default="results", show_default=True, metavar="DIR",
              help="The results folder.")
@click.option("--format", "fmt", type=click.Choice(COMPARE_FORMATS), default="table",
              show_default=True, help="Output format.")
def compare(base: str, new: str, budget_flags: tuple[str, ...], budget_file: str | None,
            results: str, fmt: str) -> int:
    """Compare run NEW against run BASE point by point (matched by configuration); exit 0
    within budget, 1 on a regression, 2 on a usage error. BASE and NEW: run ids, unique
    prefixes or 'latest' of the --results catalogue, or paths to result files, point folders,
    sweep folders or results folders (a results folder: its latest run).

    \b
    Examples:
      mwperf compare 20261122T1015 latest
      mwperf compare main-artifact/results/ results/
      mwperf compare BASE NEW --budget p99=+10% --budget loss=+0.5pp
      mwperf compare BASE NEW --budget throughput=-5%
      mwperf compare BASE NEW --budget layer.middleware_send=+10%
      mwperf compare BASE NEW --budget-file budgets/ci-x86.yaml --format markdown
    """
    from . import compare as compare_module
    from .compare import budget as compare_budget

    budgets = compare_budget.resolve(budget_flags, budget_file)
    outcome = compare_module.compare(Path(results), base, new, budgets)
    click.echo(compare_module.render(outcome, fmt), nl=False)
    return outcome.exit_code




@cli.group(name="import")
def import_group() -> None:
    """Import other tools' results into the catalogue (then report or compare them)."""


@import_group.command(name="performance-test")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--results", default="results", show_default=True, metavar="DIR",
              help="The results folder.")
def import_performance_test(files: tuple[Path, ...], results: str) -> None:
    """Import Apex.AI performance_test logs (FILES: JSON or CSV), one point per file.

    \b
    Example:
      mwperf import performance-test cyclonedds-1k.json fastrtps-1k.csv
    """
    from . import imports

    _imported(imports.import_files(Path(results), "performance-test", files))


@import_group.command(name="ros2-performance")
@click.argument("targets", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--results", default="results", show_default=True, metavar="DIR",
              help="The results folder.")
def import_ros2_performance(targets: tuple[Path, ...], results: str) -> None:
    """Import iRobot ros2-performance results (TARGETS: folders with latency_all.txt and/or
    latency_total.txt, or those files), one point per target.

    \b
    Example:
      mwperf import ros2-performance results/sierra_nevada/
    """
    from . import imports

    _imported(imports.import_files(Path(results), "ros2-performance", targets))


def _imported(run: Path) -> None:
    click.echo(f"mwperf: imported as run {run.name} (see 'mwperf report {run.name}')", err=True)


@cli.command()
@json_options("the findings")
def doctor(as_json: bool, json_out: str | None) -> int:
    """Check what this machine has for mwperf: root, namespaces, netem, TUN, cgroups, real-time
    priority, the agent and every transport's daemon or library, benchmark and report tools,
    clock source, CPU governor, leftovers of killed runs. Exit 0 when the default suite can run.
    """
    from . import doctor as doctor_checks

    findings = doctor_checks.examine()
    document = {"ok": doctor_checks.exit_code(findings) == 0,
                "findings": [f.to_dict() for f in findings]}
    if not emit_json(document, as_json, json_out):
        click.echo(doctor_checks.render(findings), nl=False)
    return doctor_checks.exit_code(findings)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI, turning every failure into one line and an exit code."""
    signal.signal(signal.SIGTERM, _sigterm)
    try:
        code = cli.main(args=argv, prog_name="mwperf", standalone_mode=False)
    except MwperfError as exc:
        code = _fail(str(exc), exc.exit_code)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else "")
        code = 2
    except click.UsageError as exc:
        where = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
        code = _fail(exc.format_message().rstrip(".") + where, 2)
    except click.ClickException as exc:
        code = _fail(exc.format_message(), exc.exit_code)
    except (click.Abort, KeyboardInterrupt):
        code = _fail("interrupted", 130)
    except Exception as exc:  # a bug: still one line, with the traceback on request
        if interrupted(exc):  # DuckDB's word for a Ctrl-C during a query
            sys.exit(_fail("interrupted", 130))
        if os.environ.get("MWPERF_DEBUG"):
            traceback.print_exc()
        code = _fail(f"internal error: {type(exc).__name__}: {exc} (set MWPERF_DEBUG=1 for "
                     f"the traceback, and please report it)", 1)
    sys.exit(code if isinstance(code, int) else 0)


def _fail(message: str, code: int) -> int:
    one_line = " ".join(message.split())
    click.echo(f"mwperf: error: {one_line}", err=True)
    return code


def _sigterm(signum: int, frame: FrameType | None) -> None:
    raise Interrupted("interrupted by SIGTERM")


if __name__ == "__main__":
    main()
