"""A throughput point (``--mode throughput``, docs/throughput.md): one publisher sending as fast
as the middleware takes messages (reliable: its own flow control paces it) or at an offered
``--rate`` (best-effort only) to one or more subscribers; the rules of such a point.

The agents are the one-way stream's (sub, pub), each told ``--throughput``. A reliable stream
keeps every message: where the transport has keep-all history it is the default (a keep-last
writer history overwrites what the reader has not acknowledged yet: that is loss, not flow
control). Plain sockets have no QoS: udp is best-effort by nature, tcp and uds reliable.
"""

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .errors import UsageError

if TYPE_CHECKING:
    from .transports.profiles import Profile

PointConfig = Any
"""config.PointConfig (not imported: config imports the parts, which import this module)"""

INHERENT = {"udp": "best-effort", "tcp": "reliable", "uds": "reliable"}
"""sockets: the delivery they have whatever QoS is asked"""
NOT_WITH_THROUGHPUT = {"topics": "run one point per stream", "replay": None, "pong": None}
"""point options a throughput point refuses -> what to do instead (None: nothing)"""


def delivery(point: PointConfig) -> str:
    """reliable or best-effort: the socket's own, else the --reliability QoS."""
    return INHERENT.get(point.transport, point.reliability)


def refuse_options(options: dict[str, Any]) -> None:
    """The options a throughput point cannot take: a usage error naming the first."""
    for key, instead in NOT_WITH_THROUGHPUT.items():
        value = options.get(key)
        if value in (None, False, "", "agent", "1", 1):
            continue
        hint = f"; {instead}" if instead else ""
        raise UsageError(f"--{key.replace('_', '-')}: not with --mode throughput{hint}")


def complete(point: PointConfig, options: dict[str, Any],
             known: "Profile | None") -> PointConfig:
    """The point with throughput's defaults: as fast as possible unless --rate is given (only
    best-effort may be offered a rate), keep-all history for a reliable stream where the
    transport has it (``known``: the transport's profile, None when unknown yet)."""
    refuse_options(options)
    given_rate = options.get("rate") is not None
    rate = point.rate if given_rate else 0.0
    if rate > 0 and delivery(point) == "reliable":
        raise UsageError(
            f"--rate: a reliable throughput stream is paced by the middleware's own flow "
            f"control, not an offered rate (got --rate {options['rate']}); give --reliability "
            f"best-effort to offer a rate, or leave --rate out")
    point = replace(point, rate=rate)
    histories = known.qos.get("history", []) if known is not None else []
    if (delivery(point) == "reliable" and "history" not in point.qos_given
            and "keep-all" in histories):
        point = replace(point, history="keep-all", qos_given=(*point.qos_given, "history"))
    return point


def check_transport(point: PointConfig) -> None:
    """What the transport cannot do for this stream, before it runs (a sweep: "not
    supported"): a socket asked for the delivery it does not have."""
    inherent = INHERENT.get(point.transport)
    if inherent and "reliability" in point.qos_given and point.reliability != inherent:
        other = ("udp" if inherent == "reliable" else "tcp or uds")
        raise UsageError(
            f"--reliability {point.reliability}: {point.transport} is {inherent} by nature "
            f"(a socket has no QoS); use --transport {other} for a {point.reliability} "
            f"socket stream")
