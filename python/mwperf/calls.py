"""A service point (``--mode service``): the calls' options, checked, and what they add to the
client's and the server's command lines (docs/services.md).

A client agent runs ``--clients`` clients, each calling the one server at ``--rate`` with at
most ``--in-flight`` calls outstanding; the server answers with ``--reply-payload`` bytes after
``--server-work`` of CPU work. Everything else of a point (transport, QoS, --link, --host, CPU
limits, --samples, --count-allocs ...) applies as to a round trip.
"""

from dataclasses import asdict, dataclass
from typing import Any, Callable

from .agent import option_default, option_limit
from .durations import format_duration_arg, parse_duration
from .errors import UsageError
from .sizes import payload_size

OPTIONS = ("reply_payload", "server_work", "in_flight", "clients", "call_timeout")
"""the point options that only a service point takes"""
NOT_WITH_SERVICE = {"subscribers": "--clients N", "pong": None, "replay": None,
                    "clock_sync": None, "busy_loop": "--server-work", "bridge": None,
                    "topics": "--clients N"}
"""point options a service point refuses -> what to use instead (None: nothing)"""


@dataclass(frozen=True)
class ServicePoint:
    """The calls of a service point."""

    reply_payload: str | None
    """as given (a catalogue name or bytes); None = the request's size"""
    reply_payload_bytes: int
    server_work_ns: int
    in_flight: int
    clients: int
    call_timeout_ns: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def client_args(self) -> list[str]:
        """What the client's command line adds."""
        args = ["--in-flight", str(self.in_flight), "--clients", str(self.clients),
                "--call-timeout", format_duration_arg(self.call_timeout_ns)]
        return args + (["--reply-payload", str(self.reply_payload_bytes)]
                       if self.reply_payload is not None else [])

    def server_args(self) -> list[str]:
        """What the server's command line adds."""
        args = (["--server-work", format_duration_arg(self.server_work_ns)]
                if self.server_work_ns else [])
        return args + (["--reply-payload", str(self.reply_payload_bytes)]
                       if self.reply_payload is not None else [])


def refuse_service_options(options: dict[str, Any], mode: str) -> None:
    """The service options given to a point of another mode: a usage error naming the first."""
    for key in OPTIONS:
        if options.get(key) is not None:
            raise UsageError(f"--{key.replace('_', '-')}: only with --mode service (got --mode "
                             f"{mode})")


def build_service(options: dict[str, Any], payload_bytes: int,
                  payload_catalogue: dict[str, int]) -> ServicePoint:
    """The calls' options, each checked on its own; every error names the flag. What the
    transport can carry is checked before the point runs (:func:`check_transport`), so that a
    sweep over every transport marks the others "not supported" instead of refusing it all."""
    for key, instead in NOT_WITH_SERVICE.items():
        value = options.get(key)
        if value in (None, False, "", "agent", "1", 1) or (key == "busy_loop" and
                                                           str(value).strip() in ("0", "0s")):
            continue
        hint = f"; use {instead}" if instead else ""
        raise UsageError(f"--{key.replace('_', '-')}: not with --mode service{hint}")
    reply = options.get("reply_payload")
    reply_text = None if reply in (None, "") else str(reply).strip()
    reply_bytes = (payload_bytes if reply_text is None
                   else payload_size("--reply-payload", reply_text, payload_catalogue))
    def given(key: str) -> Any:  # as given, else the agent's default (its limits: the agent's)
        value = options.get(key)
        return option_default(key) if value in (None, "") else value

    return ServicePoint(
        reply_payload=reply_text, reply_payload_bytes=reply_bytes,
        server_work_ns=_duration("--server-work", given("server_work"), 0),
        in_flight=_bounded("--in-flight", given("in_flight"), option_limit("in_flight"),
                           "outstanding calls per client"),
        clients=_bounded("--clients", given("clients"), option_limit("clients"), "clients"),
        call_timeout_ns=_duration("--call-timeout", given("call_timeout"), 1))


def check_transport(transport: str, services: dict[str, Any],
                    with_services: Callable[[], list[str]]) -> None:
    """Whether ``transport`` has request/response (``services``: its descriptor's); a usage
    error otherwise. Whether the request and the reply fit is the sizes part's check."""
    if not services.get("supported"):
        raise UsageError(f"--mode service: --transport {transport} has no request/response "
                         f"({services.get('how')}); transports with services: "
                         f"{', '.join(with_services())}")


def _duration(flag: str, text: Any, minimum_ns: int) -> int:
    try:
        ns = parse_duration(str(text).strip())
    except ValueError:
        raise UsageError(f"{flag}: cannot parse '{text}'; use e.g. 1s, 500ms, 20us") from None
    if ns < minimum_ns:
        raise UsageError(f"{flag}: must be longer than 0, got '{text}'")
    return ns


def _bounded(flag: str, text: Any, most: int, what: str) -> int:
    try:
        number = int(str(text).strip())
    except ValueError:
        raise UsageError(f"{flag}: cannot parse '{text}'; use a whole number of {what} from 1 "
                         f"to {most}") from None
    if not 1 <= number <= most:
        raise UsageError(f"{flag}: must be from 1 to {most}, got {number}")
    return number
