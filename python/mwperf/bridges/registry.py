"""Every bridge mwperf knows, in side-by-side order, and the checks of ``--bridge``."""

from ..errors import UsageError
from . import foxglove_bridge, mqtt_bridge, zenoh_ros2dds
from .base import Bridge

DIRECT = "direct"
"""no bridge: the same middleware end to end (over the same hosts and links)"""
BRIDGES: dict[str, Bridge] = {b.name: b for b in (mqtt_bridge.BRIDGE, zenoh_ros2dds.BRIDGE,
                                                   foxglove_bridge.BRIDGE)}


def names() -> tuple[str, ...]:
    """Every allowed ``--bridge`` value: ``direct`` and each bridge."""
    return (DIRECT, *BRIDGES)


def bridge(name: str) -> Bridge:
    """The bridge ``name`` (a usage error naming the allowed values otherwise)."""
    if name not in BRIDGES:
        raise UsageError(f"--bridge: unknown bridge '{name}'; allowed: {', '.join(names())}")
    return BRIDGES[name]


def check_pair(name: str, transport: str, mode: str) -> None:
    """Refuse a bridge/transport (or mode) pair that cannot work, naming both."""
    if name == DIRECT:
        return
    found = bridge(name)
    if transport not in found.transports:
        raise UsageError(f"--bridge {name} --transport {transport}: {name} does not carry "
                         f"{transport} ({found.description}); use --transport "
                         f"{' or '.join(found.transports)}, or --bridge direct")
    if mode not in found.modes:
        raise UsageError(f"--bridge {name} --mode {mode}: only --mode {' or '.join(found.modes)}")
