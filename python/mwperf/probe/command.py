"""The ``mwperf probe`` command (registered by cli.py)."""

import os
from pathlib import Path

import click

from ..durations import parse_duration
from ..errors import UsageError
from ..ros2 import discovery as ros2_discovery
from ..graph.from_probe import graph_out, write_probe_graph
from ..jsonout import emit_json, json_options
from .listen import ProbeResult, probe_ros1
from .mqtt import probe_mqtt
from .ros2 import probe_ros2
from .ros2_document import Ros2ProbeResult, Ros2Request
from .ros2_names import dds_topic_of
from .zenoh import probe_zenoh
from ..store.probes import save_probe
from ..transports.dds_domain import DOMAIN_ENV, DOMAIN_MAX, checked_domain, domain_from_env
from .render import render
from .render_ros2 import render_ros2

CYCLONEDDS_URI_ENV = "CYCLONEDDS_URI"


@click.command(name="probe")
@click.argument("topics", nargs=-1)
@click.option("--ros1", "master", metavar="URI",
              help="The ROS 1 master to probe, e.g. http://robot:11311.")
@click.option("--mqtt", metavar="HOST[:PORT]",
              help="The MQTT broker to probe (TOPICS are topic filters, default '#').")
@click.option("--zenoh", metavar="ENDPOINT",
              help="The zenoh router or listening peer to probe, e.g. tcp/robot:7447 (TOPICS are "
              "key expressions, default '**').")
@click.option("--ros2", is_flag=True,
              help="Probe the ROS 2 system on a DDS domain (TOPICS are ROS 2 names such as "
              "/chatter or DDS names such as rt/chatter; default: every published topic), "
              "discovering as a ROS 2 node started in this shell would: $ROS_DOMAIN_ID, "
              "$ROS_AUTOMATIC_DISCOVERY_RANGE, $ROS_STATIC_PEERS, $CYCLONEDDS_URI.")
@click.option("--domain", metavar="N",
              help=f"--ros2: the DDS domain, 0-{DOMAIN_MAX}.  [default: ${DOMAIN_ENV}, else 0]")
@click.option("--interface", metavar="IF",
              help="--ros2: the network interface to use (lo, eth0, ...; lo: this host only, "
              "unicast discovery; default: Cyclone DDS's choice, discovery as the environment "
              "says).")
@click.option("--reliable", is_flag=True,
              help="--ros2: subscribe reliably (reliable writers then keep and resend samples "
              "for the probe: use it only to see what a reliable subscriber would get).")
@click.option("--discovery-time", metavar="DURATION",
              help="--ros2: how long to discover participants and endpoints before measuring.  "
              "[default: 3s]")
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
          ros2: bool, domain: str | None, interface: str | None, reliable: bool,
          discovery_time: str | None, duration: str, gap_factor: float, as_json: bool,
          json_out: str | None, results: str, no_save: bool, write_graph: Path | None) -> None:
    """Listen to a live ROS 1 or ROS 2 system's (or MQTT broker's, or zenoh system's) TOPICS (default: every
    published topic) as an ordinary subscriber, publishing nothing, and report per topic: rate and its stability,
    inter-arrival gaps (p50/p99/max), gaps and bursts, sizes, and the age of messages with a std_msgs/Header.
    ROS 2 adds each topic's publishers and subscribers (nodes, QoS), bandwidth, samples lost, services, and the
    QoS incompatibilities that keep data from flowing.

    \b
    Examples:
      mwperf probe --ros1 http://robot:11311 --duration 30s
      mwperf probe --ros1 http://robot:11311 /scan /camera/image_raw --json
      mwperf probe --mqtt robot:1883 'sensors/#' --duration 10s
      mwperf probe --zenoh tcp/robot:7447 'robot/**' --duration 10s
      mwperf probe --ros2 --domain 7 --interface eth0 --duration 30s
      mwperf probe --ros2 /chatter /scan --duration 10s
      mwperf probe --ros2 --write-graph robot.yaml && mwperf run --graph robot.yaml --transport zenoh
    """
    if sum(x is not None for x in (master, mqtt, zenoh)) + ros2 != 1:
        raise UsageError("probe: give one system to listen to: --ros1 http://HOST:11311, "
                         "--ros2, --mqtt HOST[:PORT] or --zenoh tcp/HOST:PORT")
    if not ros2:
        for flag, given in (("--domain", domain is not None), ("--interface", interface is not None),
                            ("--reliable", reliable), ("--discovery-time", discovery_time is not None)):
            if given:
                raise UsageError(f"{flag}: only with --ros2")
    duration_ns = _positive_duration("--duration", duration)
    if not gap_factor > 1:
        raise UsageError(f"--gap-factor: must be > 1, got {gap_factor:g}")
    result: ProbeResult
    if ros2:
        request = Ros2Request(domain=_domain(domain), interface=_interface(interface),
                              topics=list(dict.fromkeys(dds_topic_of(t) for t in topics)),
                              reliable=reliable,
                              discovery_ns=_positive_duration("--discovery-time",
                                                                discovery_time or "3s"),
                              gap_factor=gap_factor, discovery=_discovery(),
                              cyclonedds_uri=os.environ.get(CYCLONEDDS_URI_ENV) or None)
        result = probe_ros2(request, duration_ns / 1e9)
    elif zenoh is not None:
        result = probe_zenoh(zenoh, list(topics), duration_ns / 1e9, gap_factor)
    elif mqtt is not None:
        result = probe_mqtt(mqtt, list(topics), duration_ns / 1e9, gap_factor)
    else:
        result = probe_ros1(str(master), list(topics), duration_ns / 1e9, gap_factor)
    text = render_ros2(result) if isinstance(result, Ros2ProbeResult) else render(result)
    if not emit_json(result.to_dict(), as_json, json_out):
        click.echo(text, nl=False)
    if not no_save:
        folder = save_probe(Path(results), result.to_dict(), text)
        click.echo(f"saved in {folder}", err=as_json)
    if write_graph is not None:
        click.echo(write_probe_graph(result.to_dict(), write_graph), err=as_json)


def _positive_duration(flag: str, text: str) -> int:
    try:
        ns = parse_duration(text)
    except ValueError:
        raise UsageError(f"{flag}: expected a duration such as 30s or 500ms, "
                         f"got {text!r}") from None
    if ns <= 0:
        raise UsageError(f"{flag}: must be > 0, got {text!r}")
    return ns


def _domain(given: str | None) -> int:
    """--domain, else $ROS_DOMAIN_ID, else 0; UsageError naming where a bad one came from."""
    return domain_from_env() if given is None else checked_domain("--domain", given)


def _discovery() -> ros2_discovery.Discovery:
    """The environment's discovery settings; OFF is a usage error: a node started here
    discovers no other process, so there is nothing a probe could see."""
    found = ros2_discovery.from_environment()
    if found.range == "OFF":
        raise UsageError(f"${ros2_discovery.RANGE_ENV}=OFF: a ROS 2 node started here discovers "
                         f"no other process, so there is nothing to probe; unset it or set "
                         f"LOCALHOST or SUBNET, as the system to probe has it")
    return found


def _interface(given: str | None) -> str | None:
    if given is not None and (not given or "/" in given or any(c.isspace() for c in given)):
        raise UsageError(f"--interface: expected a network interface name such as lo or eth0 "
                         f"(or auto), got {given!r}")
    return given
