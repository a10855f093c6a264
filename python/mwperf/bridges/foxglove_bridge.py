"""foxglove: a Foxglove WebSocket server bridging ROS 2 DDS to WebSocket clients, as
foxglove_bridge does on a robot: mwperf's foxglove-sdk server (foxglove_server.py) in DDS mode.
The path: a cyclonedds ping (the robot's ROS 2 side) -> the bridge's DDS reader -> a server
channel -> WebSocket -> the pong, a WebSocket client (the operator's app) subscribed to it; the
pong's reply is client-published -> the bridge's DDS writer -> the ping. So each message crosses
the WebSocket hop each way.

- One half (``bridge-a``), beside the sender: with ``--link`` on host ga, so the WebSocket
  crosses the WAN to the pong on host b, as an operator's connection to a robot does.
- The bridge and the ping form one DDS island: the ping's own configuration (loopback
  unicast, or with --link the unicast discovery of hosts a and ga) as the bridge's
  CYCLONEDDS_URI, in a domain of the point's own (so nothing else on the machine joins).
- The bridge's DDS QoS is the point's reliability and depth.
"""

from ..agent import Agent
from ..daemons import foxglove
from ..errors import RunError
from ..transports.cyclonedds import loopback_config, unicast_config
from .base import Bridge, BridgePlan, BridgeSetup
from .zenoh_ros2dds import domains

PACKAGES = ("foxglove-sdk", "cyclonedds")
INSTALL = "pip install 'mwperf[bridges]' (foxglove-sdk and cyclonedds)"


def prepare(setup: BridgeSetup) -> BridgePlan:
    domain, _ = domains(setup.tag)
    near, far = setup.facing("ping", "bridge-a"), setup.facing("bridge-a", "ping")
    ping_config = None if near is None else unicast_config([near, far], near)
    bridge_config = (loopback_config(setup.agent) if far is None
                     else unicast_config([near, far], far).removeprefix("config="))
    cfg = setup.cfg
    depth = 0 if cfg.history == "keep-all" else cfg.max_queued or 1
    args = ("--dds-domain", str(domain), "--reliability", cfg.reliability, "--depth", str(depth))
    server = setup.daemons.start(lambda: foxglove.spec(
        *setup.where("bridge-a"), name="bridge-a", bridge=args,
        env={"CYCLONEDDS_URI": bridge_config}))

    def sender(ready: str) -> str:
        _, _, base = ready.partition("/")
        return f"{domain}/{base}"

    return BridgePlan(listen=f"{server.address}/auto", sender=sender,
                      server_transport="foxglove",
                      sender_opts=(ping_config,) if ping_config else (),
                      facts={"dds_domains": [domain], "websocket": f"ws://{server.address}",
                             "foxglove_sdk": foxglove.sdk_version()})


def ensure(agent: Agent) -> None:
    missing = [p for p in PACKAGES if not _installed(p)]
    if missing:
        raise RunError(f"--bridge foxglove: the Python package{'s' if len(missing) > 1 else ''} "
                       f"{' and '.join(missing)} {'are' if len(missing) > 1 else 'is'} not "
                       f"installed; install with {INSTALL}")
    if "foxglove" not in agent.transports():
        raise RunError("--bridge foxglove: the agent was built without the foxglove transport "
                       "(the pong's WebSocket client); rebuild it with 'make build'")


def _installed(package: str) -> bool:
    from importlib import metadata
    try:
        metadata.version(package)
        return True
    except metadata.PackageNotFoundError:
        return False


BRIDGE = Bridge(
    name="foxglove",
    description="a Foxglove WebSocket server (foxglove-sdk) bridging ROS 2 DDS to WebSocket clients",
    transports=("cyclonedds",),
    prepare=prepare, ensure=ensure,
    path=lambda transport: ("cyclonedds -> foxglove-sdk server (DDS reader -> channel) "
                            "=WebSocket=> foxglove client (pong), and back by client publish"),
    modes=("roundtrip", "oneway"),
)
