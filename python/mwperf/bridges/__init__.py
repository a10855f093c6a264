"""Bridges in the measured path (``--bridge NAME``, scenario key ``bridge``; docs/bridges.md).

A bridge is a real third-party program that carries one middleware's messages to another place
(or another middleware): the agents talk to its two halves, bridge A beside the sender and
bridge B beside the server, and the emulated WAN (``--link``) lies between the halves.
``direct`` is the same middleware end to end without any bridge, over the same hosts and links,
so a bridge's own cost is a same-run difference.

Modules: ``base`` (the contract every bridge implements: which transports it carries, how its
daemons start, what it needs installed), one module per bridge (``mqtt_bridge``,
``zenoh_ros2dds``), ``build`` (bridges compiled on demand), ``topology`` (where the halves run
with ``--link``), ``rate`` (achieved vs offered rate and the warning).
"""

from .base import Bridge, BridgePlan, BridgeSetup
from .registry import BRIDGES, DIRECT, bridge, check_pair, names

__all__ = ["BRIDGES", "DIRECT", "Bridge", "BridgePlan", "BridgeSetup", "bridge", "check_pair",
           "names"]
