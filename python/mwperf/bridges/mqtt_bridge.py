"""mqtt-bridge: two mosquitto brokers joined by mosquitto's own bridge (``connection`` in
mosquitto.conf). Broker A (``bridge-a``) runs beside the sender, broker B (``bridge-b``) beside
the server; A holds the bridge connection to B (the robot dials out, as deployments do), with
``topic mwperf/# both <qos>`` so both directions of a round trip cross it. The sender connects
to A, the server to B. Health check: a probe crosses the bridge each way.
"""

from pathlib import Path

from ..agent import Agent
from ..daemons import mosquitto
from ..daemons.base import DaemonProcess, DaemonSpec, free_port
from ..errors import RunError
from . import mqtt_probe
from .base import Bridge, BridgePlan, BridgeSetup

TOPICS = "mwperf/#"
PROBE_TOPIC = "mwperf/bridge-probe"


def bridge_config(name: str, remote: str, qos: int) -> str:
    """The ``connection`` block broker A gets: bridge everything under mwperf/ both ways."""
    return "\n".join([
        f"connection {name}",
        f"address {remote}",
        f"topic {TOPICS} both {qos}",
        "bridge_protocol_version mqttv311",
        "try_private true",  # the remote broker knows it is a bridge: no echo back
        "cleansession true",
        "start_type automatic",
        "restart_timeout 1",
        "notifications false",
        "",
    ])


def _spec(workdir: Path, half: str, max_queued: int, where: tuple[str, Path | None],
          extra: str = "") -> DaemonSpec:
    host, netns = where
    port = free_port()
    conf = workdir / "daemons" / f"{half}.conf"

    def ready(daemon: DaemonProcess) -> bool:
        if mosquitto.connack(port, host):
            daemon.address = f"{host}:{port}"
            return True
        return False

    return DaemonSpec(name=half, argv=[mosquitto.PROGRAM, "-c", str(conf)],
                      package=mosquitto.PACKAGE, ready=ready, version=_version, netns=netns,
                      files={str(conf): mosquitto.config_text(port, max_queued, host) + extra})


def _version(daemon: DaemonProcess) -> str | None:
    return mosquitto.package_version(mosquitto.PACKAGE)


def _split(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host, int(port)


def prepare(setup: BridgeSetup) -> BridgePlan:
    cfg = setup.cfg
    qos = int(cfg.option("qos") or 0)
    broker_b = setup.daemons.start(lambda: _spec(setup.workdir, "bridge-b", cfg.max_queued,
                                                 setup.where("bridge-b")))
    assert broker_b.address is not None
    broker_a = setup.daemons.start(lambda: _spec(
        setup.workdir, "bridge-a", cfg.max_queued, setup.where("bridge-a"),
        bridge_config(f"mwperf-{setup.tag & 0xFFFF:04x}", broker_b.address, qos)))
    assert broker_a.address is not None
    a, b = _split(broker_a.address), _split(broker_b.address)
    _wait_crossing(setup, a, b)

    def sender(ready: str) -> str:
        _, _, base = ready.partition("/")
        return broker_a.address + (f"/{base}" if base else "")

    return BridgePlan(listen=broker_b.address, sender=sender,
                      facts={"bridge_a": broker_a.address, "bridge_b": broker_b.address,
                             "bridge_qos": qos})


CROSS_TIMEOUT_S = 10.0


def _wait_crossing(setup: BridgeSetup, a: tuple[str, int], b: tuple[str, int]) -> None:
    """Until a probe crosses A -> B and B -> A (from the sender's host: it reaches both)."""
    import time

    from ..emulation.hosts import inside
    _, netns = setup.where("bridge-a")
    deadline = time.monotonic() + CROSS_TIMEOUT_S
    done = {"a->b": False, "b->a": False}
    while time.monotonic() < deadline:
        if not done["a->b"]:
            done["a->b"] = inside(netns, lambda: mqtt_probe.crosses(a, b, PROBE_TOPIC))
        if not done["b->a"]:
            done["b->a"] = inside(netns, lambda: mqtt_probe.crosses(b, a, PROBE_TOPIC))
        if all(done.values()):
            return
    missing = ", ".join(k for k, v in done.items() if not v)
    raise RunError(f"mqtt-bridge: the mosquitto bridge did not carry a probe {missing} within "
                   f"{CROSS_TIMEOUT_S:g} s (see daemons/bridge-a.log)")


def ensure(agent: Agent) -> None:
    import shutil
    if shutil.which(mosquitto.PROGRAM) is None:
        raise RunError(f"--bridge mqtt-bridge: {mosquitto.PROGRAM} is not installed; install it "
                       f"with 'apt-get install {mosquitto.PACKAGE}' (or 'make setup')")


BRIDGE = Bridge(
    name="mqtt-bridge",
    description="two mosquitto brokers joined by mosquitto's own bridge",
    transports=("mqtt",),
    prepare=prepare, ensure=ensure,
    path=lambda transport: "mqtt -> mosquitto A =bridge=> mosquitto B -> mqtt",
    fanout=True,
    graphs=True,
)
