"""What a point measures besides its stream, as parts: each one module with the same hooks
(base.py), registered in ``PARTS`` (the way report sections are), called by the runner in that
order.

A part is active for a point when its ``wanted(cfg)`` says so; the runner (runner.py) then calls
its hooks at fixed moments of the point — before anything starts, once the place and its
daemons are up, on every agent's command line and environment, around the sender, and on the
merged result. A new capability is a new module here and one line in ``PARTS``.
"""

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .alloc_sites import AllocSites
from .allocs import CountAllocs
from .base import Part
from .bridge import Bridge
from .calls import CallsPart
from .clock import ClockSync
from .fastdds_distro import FastddsDistro
from .keep_awake import KeepAwake
from .layers import Layers
from .outage import Outage
from .profile import Profile
from .restart import Restarts
from .rclpy_sub import RclpySub
from .ros2 import Ros2
from .resources import Resources
from .samples import Samples
from .secure import Secure
from .sizes import Sizes
from .throughput import Throughput
from .wire_bytes import WireBytes

if TYPE_CHECKING:
    from ..point import Point

PARTS: tuple[Part, ...] = (Ros2(), RclpySub(), FastddsDistro(), CallsPart(), Sizes(), KeepAwake(),
                           Secure(), Bridge(), Outage(),
                           ClockSync(), CountAllocs(),
                           Layers(), AllocSites(), Profile(), WireBytes(), Samples(), Throughput(),
                           Restarts(), Resources())
"""every part, in the order its hooks run (ROS 2's first, then the rclpy sub's, whose
command line is the innermost around the agent's, and the ROS 2 distribution of raw Fast DDS: the others' environment goes on top of
the distribution's, LD_PRELOAD included; whether a transport has services is said before
whether the calls fit it; the bridge's hops read the place's link section,
which the runner writes before any part's; the layers' preload goes ahead of the allocation
counter's; the resources part's gates read what the others wrote, so it comes last)"""


def parts_for(cfg: "Point") -> Sequence[Part]:
    """The parts active for ``cfg``, in registry order."""
    return [part for part in PARTS if part.wanted(cfg)]
