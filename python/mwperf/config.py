"""One measurement point, validated: what the user asked for, resolved against the agent.

Every error names the flag it is about, what was given and what is allowed.
"""

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from .durations import parse_duration
from .errors import UsageError
from .sizes import parse_size

MODES = ("roundtrip", "oneway")
ROLES = {"roundtrip": ("pong", "ping"), "oneway": ("sub", "pub")}
"""mode -> (server role, sender role)"""
SENDERS = ("ping", "pub")
MEASURING_ROLE = {"roundtrip": "ping", "oneway": "sub"}
"""mode -> the role whose report carries the measurement"""
DEFAULTS: dict[str, str] = {
    "transport": "udp", "mode": "roundtrip", "rate": "1000", "payload": "Array1k", "duration": "10s",
    "warmup": "1s", "peer_timeout": "2s", "spin_margin": "100us",
}
DURATION_HINT = "use e.g. 10s, 500ms, 2m"


@dataclass(frozen=True)
class PointConfig:
    """A single measurement: one transport, one mode, one rate, one payload."""

    transport: str
    mode: str
    rate: float
    """messages per second; 0 = as fast as possible (roundtrip: closed loop, one in flight)"""
    payload: str
    """as given: a catalogue name or a byte count"""
    payload_bytes: int
    duration_ns: int | None
    """measured time after warm-up; None when ``count`` is used instead"""
    count: int | None
    warmup_ns: int
    peer_timeout_ns: int
    busy_poll: bool = False
    prevent_cpu_idle: bool = False
    spin_margin_ns: int = 100_000
    samples: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The point as plain JSON-able data (the run-result's ``config``)."""
        return asdict(self)


class Catalogue(Protocol):
    """What validation needs from the agent (an ``agent.Agent`` provides it)."""

    def transports(self) -> list[str]: ...

    def payloads(self) -> dict[str, int]: ...


def build_point(options: dict[str, Any], agent: Callable[[], Catalogue]) -> PointConfig:
    """Validate raw option values (strings as typed, None = not given) into a PointConfig.

    ``options`` keys: transport, mode, rate, payload, duration, count, warmup, peer_timeout,
    spin_margin (strings) and busy_poll, prevent_cpu_idle, samples (booleans). ``agent`` is
    called only once the values that need no agent are valid, so those errors come first.
    """
    def given(key: str) -> str:
        value = options.get(key)
        return str(DEFAULTS[key] if value is None else value)

    if options.get("count") is not None and options.get("duration") is not None:
        raise UsageError("--count and --duration are mutually exclusive; give one of them")
    count = _count(options["count"]) if options.get("count") is not None else None
    mode = _choice("--mode", "mode", given("mode"), MODES)
    rate = _rate(given("rate"))
    duration_ns = None if count is not None else _duration("--duration", given("duration"), 1)
    warmup_ns = _duration("--warmup", given("warmup"), 0)
    peer_timeout_ns = _duration("--peer-timeout", given("peer_timeout"), 1)
    spin_margin_ns = _duration("--spin-margin", given("spin_margin"), 0)
    catalogue = agent()
    transport = _choice("--transport", "transport", given("transport"), catalogue.transports())
    payload = given("payload").strip()
    return PointConfig(
        transport=transport, mode=mode, rate=rate, payload=payload,
        payload_bytes=_payload_bytes(payload, catalogue.payloads()),
        duration_ns=duration_ns, count=count, warmup_ns=warmup_ns,
        peer_timeout_ns=peer_timeout_ns, busy_poll=bool(options.get("busy_poll")),
        prevent_cpu_idle=bool(options.get("prevent_cpu_idle")),
        spin_margin_ns=spin_margin_ns, samples=bool(options.get("samples")),
    )


def _choice(flag: str, what: str, value: str, allowed: list[str] | tuple[str, ...]) -> str:
    if value not in allowed:
        raise UsageError(f"{flag}: unknown {what} '{value}'; allowed: {', '.join(allowed)}")
    return value


def _rate(text: str) -> float:
    try:
        rate = float(text)
    except ValueError:
        raise UsageError(f"--rate: cannot parse '{text}'; use messages per second, "
                         f"e.g. 1000 (0 = as fast as possible)") from None
    if not math.isfinite(rate):
        raise UsageError(f"--rate: must be a finite number of messages per second, got {text}")
    if rate < 0:
        raise UsageError(f"--rate: must be >= 0 (0 = as fast as possible), got {text}")
    return rate


def _payload_bytes(payload: str, catalogue: dict[str, int]) -> int:
    if payload in catalogue:
        return catalogue[payload]
    try:
        return parse_size(payload)
    except ValueError:
        names = list(catalogue)  # smallest first
        span = f"{names[0]} \u2026 {names[-1]}, " if names else ""
        raise UsageError(f"--payload: unknown payload '{payload}'; use a catalogue name "
                         f"({span}see 'mwperf payloads') or a byte count") from None


def _duration(flag: str, text: str, minimum_ns: int) -> int:
    try:
        ns = parse_duration(text)
    except ValueError:
        raise UsageError(f"{flag}: cannot parse '{text}'; {DURATION_HINT}") from None
    if ns < minimum_ns:
        raise UsageError(f"{flag}: must be longer than 0, got '{text}'")
    return ns


def _count(text: Any) -> int:
    try:
        count = int(str(text).strip())
    except ValueError:
        raise UsageError(f"--count: cannot parse '{text}'; use a whole number of messages, "
                         f"e.g. 500") from None
    if count < 1:
        raise UsageError(f"--count: must be >= 1, got {count}")
    return count
