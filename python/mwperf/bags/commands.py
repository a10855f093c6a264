"""The ``mwperf bag`` commands: ``info``, ``graph`` and ``example`` (registered by cli.py)."""

from pathlib import Path

import click

from ..durations import parse_duration
from ..errors import UsageError
from ..graph.from_recording import recording_graph
from ..graph.outfile import check_out, write_whole
from ..jsonout import emit_json, json_options
from ..sizes import format_bytes
from . import example as example_module
from . import info as info_module


@click.group(name="bag")
def bag_group() -> None:
    """Recordings: ROS 1 .bag, ROS 2 .mcap and rosbag2 folders (see docs/replay-and-probe.md)."""


@bag_group.command(name="info")
@click.argument("recording", type=click.Path(path_type=Path))
@click.option("--topics", metavar="A,B", help="Only these topics.")
@json_options("the summary")
def info(recording: Path, topics: str | None, as_json: bool, json_out: str | None) -> None:
    """Summarise RECORDING (a .bag, an .mcap or a rosbag2 folder): per topic its type, count,
    sizes (p50/max), rate, inter-arrival gaps (p50/p99/max) and gaps longer than 3x the median.

    \b
    Examples:
      mwperf bag info example.bag
      mwperf bag info example.mcap --topics /scan --json
    """
    wanted = [t.strip() for t in topics.split(",") if t.strip()] if topics else None
    summary = info_module.inspect(recording, wanted)
    if not emit_json(summary.to_dict(), as_json, json_out):
        click.echo(info_module.render(summary), nl=False)


@bag_group.command(name="graph")
@click.argument("recording")
@click.option("--out", "out", metavar="FILE",
              help="Write the graph file here (whole or not at all; an existing file is "
              "replaced) instead of printing it.")
@click.option("--topics", metavar="A,B", help="Only these topics.")
def graph(recording: str, out: str | None, topics: str | None) -> None:
    """Write RECORDING (a .bag, an .mcap, a rosbag2 folder, or 'example') as a graph file for
    'mwperf run --graph FILE': per topic its recorded rate and sizes, its publishing nodes
    (a ROS 1 bag's callerids) and QoS (a rosbag2 recording's), and a 'recorder' node that
    subscribes to every topic; comments say where each figure came from (docs/graphs.md).

    \b
    Examples:
      mwperf bag graph robot.bag --out robot.yaml
      mwperf run --graph robot.yaml --transport zenoh --link wifi-80211n
      mwperf bag graph example
    """
    target = check_out(out, "--out") if out is not None else None
    wanted = [t.strip() for t in topics.split(",") if t.strip()] if topics else None
    if recording == "example":
        path, spec = example_module.example_bag(), "example"
    else:
        path, spec = Path(recording), str(Path(recording).resolve())
    text, count = recording_graph(path, spec, target, wanted)
    if target is None:
        click.echo(text, nl=False)
        return
    write_whole(target, text, "--out")
    click.echo(f"graph of {count} topics written to {target} (mwperf run --graph {target} "
               f"--transport ...)")


@bag_group.command(name="example")
@click.argument("out_dir", type=click.Path(path_type=Path), default=".", required=False)
@click.option("--duration", default="10s", show_default=True,
              help="Recorded time (seed 000 recorded 60s).")
@click.option("--image", default="640x480", show_default=True, metavar="WxH",
              help="Camera image size, mono8 (640x480 = 308 KB a frame).")
@click.option("--ranges", default=1000, show_default=True, type=int,
              help="Laser ranges per scan (1000 = ~4 KB a scan).")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the recorded jitter.")
@click.option("--name", default="example", show_default=True, help="File name stem.")
@click.option("--force", is_flag=True, help="Replace existing files.")
def example(out_dir: Path, duration: str, image: str, ranges: int, seed: int, name: str,
            force: bool) -> None:
    """Write OUT_DIR/NAME.bag (ROS 1, by Debian's rosbag) and OUT_DIR/NAME.mcap (the same
    recording as ROS 2 CDR in MCAP, by rosbags): sensor_msgs/LaserScan on /scan at 40 Hz and
    sensor_msgs/Image on /camera/image_raw at 30 Hz, with recorded jitter.

    \b
    Examples:
      mwperf bag example recordings/
      mwperf bag example recordings/ --duration 60s      # seed 000's 60 s
    """
    try:
        seconds = parse_duration(duration) / 1e9
    except ValueError:
        raise UsageError(f"--duration: expected a duration such as 10s or 500ms, "
                         f"got {duration!r}") from None
    if ranges <= 0:
        raise UsageError(f"--ranges: must be > 0, got {ranges}")
    width, height = example_module.parse_image(image)
    spec = example_module.ExampleSpec(seconds, width, height, ranges, seed, name)
    for path in example_module.write_example(out_dir, spec, force):
        click.echo(f"{path}  {format_bytes(path.stat().st_size)}")
