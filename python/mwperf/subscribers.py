"""N subscribers per topic (``--subscribers N``, seed 000's "more nodes" scalability question):
one pub, N sub agents, each a process of its own like separate ROS nodes (separate processes
also keep one subscriber's crash or CPU load from touching the others' numbers).

How they meet: plain sockets have no fan-out, so every subscriber listens on its own address
and the pub sends each message to each subscriber in turn (what a TCPROS publisher does with its
subscriber links; the agent's fanout.rs), its ``--connect`` listing the subscribers' READY
addresses separated by ';'. Middleware fans out natively: the first subscriber picks the topic
base, the others subscribe to the same one, and the pub waits until discovery matched N
subscribers (DDS, iceoryx2, ROS 1 count them; mqtt and zenoh cannot, there the pub starts once
every subscriber printed READY, i.e. had subscribed). zenoh needs its router (``mode=client``):
in peer mode a pub reaches only the peer it connects to.

Round trip has one pong: ``--subscribers`` > 1 is a usage error there.
"""

from typing import Any

from .errors import UsageError
from .transports import hook, profile

SEPARATOR = ";"
"""between the subscribers' addresses in the pub's --connect (sockets)"""


def parse_subscribers(value: Any, limit: int) -> int:
    """``--subscribers`` as given (None = 1), checked against 1..``limit``."""
    text = "1" if value is None else str(value).strip()
    try:
        count = int(text)
    except ValueError:
        raise UsageError(f"--subscribers: cannot parse '{text}'; use a whole number from 1 to "
                         f"{limit}, e.g. 3") from None
    if not 1 <= count <= limit:
        raise UsageError(f"--subscribers: must be from 1 to {limit} (each subscriber is an "
                         f"agent process of its own), got {count}")
    return count


def check_subscribers(point: Any, options: dict[str, Any]) -> None:
    """Refuse what several subscribers cannot do (``point`` is a config.PointConfig)."""
    flag = f"--subscribers {point.subscribers}"
    if point.mode not in ("oneway", "throughput"):
        raise UsageError(f"{flag}: only with --mode oneway or throughput (one pub, each sub measuring its own "
                         f"stream); a round trip has one pong, use --subscribers 1")
    if point.samples:
        raise UsageError(f"--samples: raw samples are kept only with --subscribers 1 (got "
                         f"{flag})")
    hook(point.transport).check_subscribers(point, flag)
    for key in ("cpu_quota", "cpu_pin"):
        if options.get(key) is not None:
            raise UsageError(f"--{key.replace('_', '-')}: limits one agent per role; not with "
                             f"{flag}")


def names(count: int) -> list[str]:
    """The sub agents' names: ``sub`` for one (files as before), ``sub.0`` ... for several."""
    return ["sub"] if count == 1 else [f"sub.{i}" for i in range(count)]


def listen_address(transport: str, planned: str, index: int, first: str | None) -> str:
    """Where subscriber ``index`` listens: sockets each their own address, middleware the topic
    base the first one printed (``first``, its READY address)."""
    if index == 0 or first is None:
        return planned
    if not profile(transport).native_fanout:
        return hook(transport).subscriber_listen(planned, index)
    return first


def connect_address(transport: str, ready: list[str]) -> str:
    """The pub's --connect: every subscriber's addresses (sockets) or the shared one."""
    return ready[0] if profile(transport).native_fanout else SEPARATOR.join(ready)
