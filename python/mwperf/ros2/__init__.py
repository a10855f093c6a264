"""ROS 2 on this machine (issue 39): the installations mwperf can use and what each has.

    from mwperf import ros2
    dist = ros2.pick()                 # or pick("jazzy"); a sourced /opt/ros/<distro> wins
    rmw = dist.rmw()                   # RMW_IMPLEMENTATION, default rmw_fastrtps_cpp
    env = dist.child_env(rmw)          # LD_LIBRARY_PATH etc. for the agent or dist.python
    ros2.discovery.from_environment()  # ROS_AUTOMATIC_DISCOVERY_RANGE, ROS_STATIC_PEERS

Modules: wheels (the managed distributions' packages and folder), install (``python3 -m
mwperf.ros2.install``: the managed environments; not imported here, so ``-m`` runs it cleanly),
stamp (what was installed into one), distributions (finding and picking),
rmw (the RMWs, their middleware versions, the message packages), discovery (the discovery
variables)."""

from . import discovery
from .distributions import Distribution, find, pick
from .rmw import Rmw

__all__ = ["Distribution", "Rmw", "discovery", "find", "pick"]
