"""The ``mwperf probe`` command (registered by cli.py)."""

from pathlib import Path

import click

from ..durations import parse_duration
from ..errors import UsageError
from ..graph.from_probe import graph_out, write_probe_graph
from ..jsonout import emit_json, json_options
from .listen import probe_ros1
from .mqtt import probe_mqtt
from .zenoh import probe_zenoh
from ..store.probes import save_probe
from .render import render


@click.command(name="probe")
@click.argument("topics", nargs=-1)
@click.option("--ros1", "master", metavar="URI",
              help="The ROS 1 master to probe, e.g. http://robot:11311.")
@click.option("--mqtt", metavar="HOST[:PORT]",
              help="The MQTT broker to probe (TOPICS are topic filters, default '#').")
@click.option("--zenoh", metavar="ENDPOINT",
              help="The zenoh router or listening peer to probe, e.g. tcp/robot:7447 (TOPICS are "
              "key expressions, default '**').")
@click.option("--duration", default="30s", show_default=True, help="How long to listen.")
@click.option("--gap-factor", default=3.0, show_default=True, type=float,
              help="A gap is an inter-arrival time over this many median periods.")
@json_options("the summary")
@click.option("--results", default="results", show_default=True, metavar="DIR",
              help="Save the probe here (a folder with probe.json and probe.txt) and in the "
              "folder's catalogue (table probes).")
@click.option("--no-save", is_flag=True, help="Only print; save nothing.")
@click.option("--write-graph", "write_graph", metavar="FILE", callback=graph_out,
              help="Also write what was measured as a graph file for 'mwperf run --graph FILE' "
              "(nodes, rates, sizes, QoS; see docs/graphs.md).")
def probe(topics: tuple[str, ...], master: str | None, mqtt: str | None, zenoh: str | None,
          duration: str, gap_factor: float, as_json: bool, json_out: str | None, results: str,
          no_save: bool, write_graph: Path | None) -> None:
    """Listen to a live ROS 1 system's (or MQTT broker's, or zenoh system's) TOPICS (default: every published
    topic) as an ordinary subscriber, publishing nothing, and report per topic: rate and its stability, inter-arrival
    gaps (p50/p99/max), gaps and bursts, sizes, and the age of messages with a std_msgs/Header.

    \b
    Examples:
      mwperf probe --ros1 http://robot:11311 --duration 30s
      mwperf probe --ros1 http://robot:11311 /scan /camera/image_raw --json
      mwperf probe --mqtt robot:1883 'sensors/#' --duration 10s
      mwperf probe --zenoh tcp/robot:7447 'robot/**' --duration 10s
      mwperf probe --ros1 http://robot:11311 --write-graph robot.yaml
    """
    if sum(x is not None for x in (master, mqtt, zenoh)) != 1:
        raise UsageError("probe: give one system to listen to: --ros1 http://HOST:11311, "
                         "--mqtt HOST[:PORT] or --zenoh tcp/HOST:PORT")
    try:
        duration_ns = parse_duration(duration)
    except ValueError:
        raise UsageError(f"--duration: expected a duration such as 30s or 500ms, "
                         f"got {duration!r}") from None
    if duration_ns <= 0:
        raise UsageError(f"--duration: must be > 0, got {duration!r}")
    if not gap_factor > 1:
        raise UsageError(f"--gap-factor: must be > 1, got {gap_factor:g}")
    if zenoh is not None:
        result = probe_zenoh(zenoh, list(topics), duration_ns / 1e9, gap_factor)
    elif mqtt is not None:
        result = probe_mqtt(mqtt, list(topics), duration_ns / 1e9, gap_factor)
    else:
        result = probe_ros1(str(master), list(topics), duration_ns / 1e9, gap_factor)
    text = render(result)
    if not emit_json(result.to_dict(), as_json, json_out):
        click.echo(text, nl=False)
    if not no_save:
        folder = save_probe(Path(results), result.to_dict(), text)
        click.echo(f"saved in {folder}", err=as_json)
    if write_graph is not None:
        click.echo(write_probe_graph(result.to_dict(), write_graph), err=as_json)
