"""zenoh-ros2dds: zenoh-plugin-ros2dds 1.10.2 (the bridge ROS 2 users deploy), in a zenoh runtime
of the same zenoh version as the agent's zenoh transport (crates/mwperf-bridge-zenoh, built on
demand: build.py). The seed-002 path (``--transport cyclonedds``): a cyclonedds ping in DDS domain A ->
bridge A -> zenoh over the WAN -> bridge B -> a cyclonedds pong in DDS domain B, and back. The
mixed path (``--transport zenoh``): a cyclonedds ping -> bridge A -> a zenoh pong (a client of
bridge A's router, ``--opt cdr=true``: the plugin forwards the CDR sample), and back.

- The two DDS sides use different domain ids (from the point's tag), so nothing reaches the
  other side except through the bridges, even on loopback.
- The plugin routes a DDS topic only once a ROS 2 node owns it (it follows the ROS 2 graph on
  ``ros_discovery_info``): the agents announce themselves as nodes (``--opt ros-node=...``,
  Humble GIDs; the bridges get ROS_DISTRO=humble to read them alike).
- Each bridge runs Cyclone DDS (built by cyclors) with the same configuration as its side's
  agent: loopback unicast as the agents' default, or with --link the unicast discovery of that
  side's two hosts (the agent's --opt config= and the bridge's CYCLONEDDS_URI).
- Bridge A listens for zenoh (router, TCP, no scouting), bridge B connects to it.
"""

import os
from pathlib import Path

from ..agent import Agent
from ..daemons.base import DaemonProcess, DaemonSpec, free_port
from ..transports.cyclonedds import loopback_config, unicast_config
from .base import Bridge, BridgePlan, BridgeSetup
from .build import BINARY, ensure_zenoh_bridge

ROS_DISTRO = "humble"
"""the GID layout the agents announce (24 bytes) and the bridges read"""
FIRST_DOMAIN = 100
DOMAIN_PAIRS = 60
"""side A's domain is 100 + 2k, side B's 101 + 2k (k from the point's tag): < 232, DDS's limit"""


def domains(tag: int) -> tuple[int, int]:
    first = FIRST_DOMAIN + 2 * (tag % DOMAIN_PAIRS)
    return first, first + 1


def zenoh_config(domain: int, node: str, listen: str | None, connect: str | None) -> str:
    """The zenoh runtime's JSON5: a router, TCP only, no scouting, the plugin on ``domain``."""
    endpoints = (f'listen: {{ endpoints: ["{listen}"] }}' if listen
                 else f'connect: {{ endpoints: ["{connect}"] }}, listen: {{ endpoints: [] }}')
    return ("{ mode: \"router\", " + endpoints + ", "
            "scouting: { multicast: { enabled: false }, gossip: { enabled: false } }, "
            f'plugins: {{ ros2dds: {{ domain: {domain}, nodename: "{node}" }} }} }}\n')


def _spec(binary: Path, workdir: Path, half: str, config: str, cyclone: str,
          where: tuple[str, Path | None], address: str) -> DaemonSpec:
    path = workdir / "daemons" / f"{half}.json5"

    def ready(daemon: DaemonProcess) -> bool:
        if any(line.strip() == "ready" for line in daemon.log_text().splitlines()):
            daemon.address = address
            return True
        return False

    return DaemonSpec(name=half, argv=[str(binary), str(path)], package="make bridges",
                      ready=ready, version=_version, netns=where[1], ready_timeout_s=20.0,
                      env={"CYCLONEDDS_URI": cyclone, "ROS_DISTRO": ROS_DISTRO,
                           "RUST_LOG": os.environ.get("MWPERF_BRIDGE_LOG", "warn")},
                      files={str(path): config})


def _version(daemon: DaemonProcess) -> str | None:
    import subprocess
    done = subprocess.run([daemon.spec.argv[0], "--version"], capture_output=True, text=True,
                          timeout=5, check=False)
    return done.stdout.strip().removeprefix(f"{BINARY} ") or None


def prepare(setup: BridgeSetup) -> BridgePlan:
    binary = ensure_zenoh_bridge(BRIDGE.name)
    domain_a, domain_b = domains(setup.tag)
    host_a, _ = setup.where("bridge-a")
    port = free_port()
    endpoint = f"tcp/{host_a}:{port}"
    zenoh_pong = setup.cfg.transport == "zenoh"  # the mixed path: no DDS side B, no bridge B
    configs: dict[str, str | None] = {}  # each side's agent and bridge: one DDS island
    for agent_role, half in (("ping", "bridge-a"), ("pong", "bridge-b"))[:1 if zenoh_pong else 2]:
        near, far = setup.facing(agent_role, half), setup.facing(half, agent_role)
        for name, own in ((agent_role, near), (half, far)):
            configs[name] = (None if own is None
                             else unicast_config([near, far], own))  # type: ignore[list-item]
    halves = (("bridge-a", domain_a, endpoint, None), ("bridge-b", domain_b, None, endpoint))
    for half, domain, listen, connect in halves[:1 if zenoh_pong else 2]:
        given = configs[half]
        cyclone = given.removeprefix("config=") if given else loopback_config(setup.agent)
        config = zenoh_config(domain, half.replace("-", "_"), listen, connect)
        setup.daemons.start(lambda h=half, c=config, x=cyclone: _spec(
            binary, setup.workdir, h, c, x, setup.where(h), endpoint))

    def sender(ready: str) -> str:
        _, _, base = ready.rpartition("#") if zenoh_pong else ready.partition("/")
        return f"{domain_a}/{base}"

    ping_own = (configs["ping"],) if configs["ping"] else ()
    if zenoh_pong:
        # the pong is a zenoh client of bridge A's router; its keys are the plugin's names for
        # the ROS 2 topics (rt/mwperf/<base>/x -> mwperf/<base>/x), so the base has no '-'
        # (the DDS side writes it as '_')
        return BridgePlan(listen=f"{endpoint}#b{setup.tag}", sender=sender,
                          sender_transport="cyclonedds",
                          sender_opts=("ros-node=mwperf_ping",) + ping_own,
                          server_opts=("mode=client", "cdr=true"),
                          facts={"dds_domains": [domain_a], "zenoh_endpoint": endpoint,
                                 "ros_distro": ROS_DISTRO})
    pong_own = (configs["pong"],) if configs["pong"] else ()
    return BridgePlan(listen=f"{domain_b}/auto", sender=sender,
                      sender_opts=("ros-node=mwperf_ping",) + ping_own,
                      server_opts=("ros-node=mwperf_pong",) + pong_own,
                      facts={"dds_domains": [domain_a, domain_b], "zenoh_endpoint": endpoint,
                             "ros_distro": ROS_DISTRO})


def ensure(agent: Agent) -> None:
    ensure_zenoh_bridge(BRIDGE.name)


BRIDGE = Bridge(
    name="zenoh-ros2dds",
    description="zenoh-plugin-ros2dds: ROS 2 DDS <-> zenoh, one bridge per DDS side",
    transports=("cyclonedds", "zenoh"),
    prepare=prepare, ensure=ensure,
    path=lambda transport: ("cyclonedds (domain A) -> zenoh-plugin-ros2dds A =zenoh=> "
                            + ("a zenoh pong (client of bridge A's router, CDR unwrapped)"
                               if transport == "zenoh" else
                               "zenoh-plugin-ros2dds B -> cyclonedds (domain B)")),
    modes=("roundtrip", "oneway"),
)
