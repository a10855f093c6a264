"""The link spec grammar: what ``--link`` accepts, parsed into per-direction impairments.

A spec is a comma-separated list. It may start with a preset name (``mwperf links``); every
other item is ``KEY=VALUE`` and applies to both directions, or, prefixed ``up:`` or ``down:``,
to one (``up`` = host a -> host b, the ping's/pub's direction; ``down`` = back). Later items win,
so ``wifi-80211n,loss=5%`` is the preset with more loss. Keys:

- ``delay=10ms`` constant one-way delay; ``jitter=1ms`` around it, drawn from ``dist=uniform``
  (±jitter), ``normal`` (σ = jitter) or ``pareto`` (non-negative heavy tail, mean = jitter).
  Jitter never reorders packets; only ``reorder`` does.
- ``loss=1%`` random (Bernoulli) loss; ``ge=P/R[/H/K]`` Gilbert-Elliott bursty loss: P = P(good ->
  bad), R = P(bad -> good) per packet (mean burst 1/R), H and K = P(delivered) in the bad and good
  state (classic notation; defaults 0% and 100%).
- ``corrupt=0.1%`` one bit flipped after the IP header (the receiver's UDP/TCP checksum then drops
  the packet, so corruption shows up as loss to the application, as on a real link).
- ``dup=1%`` sent twice; ``reorder=5%`` skips the delay (overtakes the packets in flight).
- ``rate=115200bit`` (bit, kbit, mbit, gbit per second, decimal prefixes as in tc) with
  ``overhead=8n1`` (serial: 10 bits on the wire per byte; also 8n2, 8e1, 8o1, or a number of bits
  per byte) and ``queue=64KiB`` (the FIFO before the wire, in bytes, the packet on the wire
  included; full = drop).
- ``frame=127/25`` link-layer frames of 127 bytes with 25 bytes of header each (a packet takes
  ceil(len / 102) frames); ``backoff=2.24ms`` a CSMA wait, uniform in [0, backoff], per frame.
- ``mtu=1500`` longer packets are dropped (the devices get this MTU, so the kernel fragments).
- ``outage=5s+2s`` the link is down from 5 s after it came up, for 2 s; with ``every=10s`` it
  goes down again every 10 s (from one start to the next: 5 s, 15 s, 25 s, ... for 2 s each)
  until the run ends: repeated link flaps. ``every`` is a key of its own because the spec is
  comma-separated (``outage=5s+2s,every=10s``, as issue 29 writes it); it repeats the outage of
  its direction(s), so it needs one there, and must be longer than the outage (the link comes
  back between flaps).

Every error names ``--link``, the key, and what is allowed.
"""

import re
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..durations import parse_duration
from ..errors import UsageError
from ..sizes import parse_size

DISTRIBUTIONS = ("uniform", "normal", "pareto")
DIRECTIONS = ("up", "down")
RATE_UNITS = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
SERIAL_FRAMINGS = {"8n1": 10, "8n2": 11, "8e1": 11, "8o1": 11}
"""bits on the wire per data byte: start bit + 8 data bits + parity? + stop bit(s)"""
MTU_RANGE = (68, 65535)
"""IPv4's minimum MTU to the largest IP packet"""
KEYS = ("delay", "jitter", "dist", "loss", "ge", "corrupt", "dup", "reorder", "rate", "overhead",
        "queue", "frame", "backoff", "mtu", "outage", "every")
_RATE = re.compile(r"(\d+(?:\.\d+)?)(bit|kbit|mbit|gbit)")
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)%")


@dataclass(frozen=True)
class Direction:
    """The impairments of one direction, in base units (what mwperf-linkem and netem get)."""

    delay_ns: int = 0
    jitter_ns: int = 0
    dist: str = "uniform"
    loss: float = 0.0
    ge: tuple[float, float, float, float] | None = None
    corrupt: float = 0.0
    dup: float = 0.0
    reorder: float = 0.0
    rate_bps: float = 0.0
    """0 = no rate limit"""
    bits_per_byte: float = 8.0
    queue_bytes: int = 64 * 1024
    frame_bytes: int = 0
    frame_overhead_bytes: int = 0
    backoff_ns: int = 0
    mtu: int = 1500
    outage_at_ns: int = 0
    outage_ns: int = 0
    outage_every_ns: int = 0
    """the outage repeats this often, from one start to the next (0 = once)"""

    def canonical(self) -> str:
        """The ``key=value,...`` form mwperf-linkem parses (crates/mwperf-linkem/src/spec.rs)."""
        items = {
            "delay_ns": self.delay_ns, "jitter_ns": self.jitter_ns, "jitter_dist": self.dist,
            "loss": repr(self.loss), "corrupt": repr(self.corrupt), "dup": repr(self.dup),
            "reorder": repr(self.reorder), "rate_bps": repr(self.rate_bps),
            "bits_per_byte": repr(self.bits_per_byte), "queue_bytes": self.queue_bytes,
            "mtu": self.mtu, "outage_at_ns": self.outage_at_ns, "outage_ns": self.outage_ns,
            "frame_bytes": self.frame_bytes, "frame_overhead_bytes": self.frame_overhead_bytes,
            "backoff_ns": self.backoff_ns,
        }
        if self.ge is not None:
            items["ge"] = ":".join(repr(x) for x in self.ge)
        if self.outage_every_ns:
            items["outage_every_ns"] = self.outage_every_ns
        return ",".join(f"{key}={value}" for key, value in items.items())


@dataclass(frozen=True)
class LinkSpec:
    """A parsed ``--link``: the text as given, the preset it started from, both directions."""

    text: str
    preset: str | None
    up: Direction = field(default_factory=Direction)
    down: Direction = field(default_factory=Direction)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data for the run-result."""
        return {"spec": self.text, "preset": self.preset,
                "up": asdict(self.up), "down": asdict(self.down)}


def parse_link(text: str, presets: dict[str, str] | None = None) -> LinkSpec:
    """Parse a ``--link`` value; raise UsageError naming the key and what is allowed.

    ``presets`` maps a preset name to its own spec text (default: emulation.presets.PRESETS).
    """
    if presets is None:
        from .presets import PRESETS
        presets = {name: preset.spec for name, preset in PRESETS.items()}
    items = [item.strip() for item in text.split(",")]
    if not text.strip() or any(not item for item in items):
        raise UsageError(f"--link: empty item in '{text}'; use a preset (see 'mwperf links') "
                         f"and/or KEY=VALUE items separated by commas, e.g. delay=10ms,loss=1%")
    preset = None
    if "=" not in items[0]:
        preset = items.pop(0)
        if preset not in presets:
            raise UsageError(f"--link: unknown preset '{preset}'; allowed: "
                             f"{', '.join(presets)} (see 'mwperf links'), or KEY=VALUE items")
        items = presets[preset].split(",") + items
    values: dict[str, dict[str, Any]] = {"up": {}, "down": {}}
    for item in items:
        _apply(item.strip(), values)
    up, down = (replace(Direction(), **values[d]) for d in DIRECTIONS)
    for name, direction in zip(DIRECTIONS, (up, down), strict=True):
        _check_every(name, direction)
    return LinkSpec(text=text.strip(), preset=preset, up=up, down=down)


def _apply(item: str, values: dict[str, dict[str, Any]]) -> None:
    scope, _, rest = item.partition(":") if item.split("=", 1)[0].count(":") else ("", "", item)
    if scope and scope not in DIRECTIONS:
        raise UsageError(f"--link: '{item}': a direction prefix is up: or down:, not '{scope}:'")
    key, sep, value = rest.partition("=")
    key, value = key.strip(), value.strip()
    if not sep:
        raise UsageError(f"--link: '{item}' is not KEY=VALUE (a preset name may only come first)")
    if key not in KEYS:
        raise UsageError(f"--link: unknown key '{key}'; allowed: {', '.join(KEYS)}")
    parsed = _PARSERS[key](key, value)
    for direction in ([scope] if scope else DIRECTIONS):
        values[direction].update(parsed)


def _duration(key: str, value: str) -> int:
    try:
        return parse_duration(value)
    except ValueError:
        raise UsageError(f"--link: key '{key}': cannot parse '{value}'; use a duration such as "
                         f"10ms, 250us, 1.5s") from None


def _percent(key: str, value: str) -> float:
    match = _PERCENT.fullmatch(value)
    if match is None or float(match.group(1)) > 100:
        raise UsageError(f"--link: key '{key}': '{value}' is not a percentage from 0% to 100% "
                         f"(write the % sign, e.g. {key}=1%)")
    return float(match.group(1)) / 100


def _delay(key: str, value: str) -> dict[str, Any]:
    return {"delay_ns": _duration(key, value)}


def _jitter(key: str, value: str) -> dict[str, Any]:
    return {"jitter_ns": _duration(key, value)}


def _dist(key: str, value: str) -> dict[str, Any]:
    if value not in DISTRIBUTIONS:
        raise UsageError(f"--link: key 'dist': unknown distribution '{value}'; allowed: "
                         f"{', '.join(DISTRIBUTIONS)}")
    return {"dist": value}


def _probability(name: str) -> Any:
    def parse(key: str, value: str) -> dict[str, Any]:
        return {name: _percent(key, value)}
    return parse


def _ge(key: str, value: str) -> dict[str, Any]:
    parts = value.split("/")
    if len(parts) not in (2, 4):
        raise UsageError(f"--link: key 'ge': '{value}' is not P/R or P/R/H/K (percentages: "
                         f"P(good->bad)/P(bad->good)[/P(delivered|bad)/P(delivered|good)]), "
                         f"e.g. ge=1%/25%")
    numbers = [_percent(key, part.strip()) for part in parts] + [0.0, 1.0][len(parts) - 2:]
    if numbers[1] == 0:
        raise UsageError("--link: key 'ge': R (bad -> good) must be above 0%, or the link "
                         "never leaves the bad state")
    return {"ge": tuple(numbers)}


def _rate(key: str, value: str) -> dict[str, Any]:
    match = _RATE.fullmatch(value)
    if match is None or float(match.group(1)) == 0:
        raise UsageError(f"--link: key 'rate': cannot parse '{value}'; use a number above 0 with "
                         f"a unit {', '.join(RATE_UNITS)} (per second), e.g. rate=115200bit")
    return {"rate_bps": float(match.group(1)) * RATE_UNITS[match.group(2)]}


def _overhead(key: str, value: str) -> dict[str, Any]:
    if value.lower() in SERIAL_FRAMINGS:
        return {"bits_per_byte": float(SERIAL_FRAMINGS[value.lower()])}
    try:
        bits = float(value)
    except ValueError:
        bits = 0.0
    if not 8 <= bits <= 64:
        raise UsageError(f"--link: key 'overhead': '{value}' is not a serial framing "
                         f"({', '.join(SERIAL_FRAMINGS)}) or bits per byte from 8 to 64")
    return {"bits_per_byte": bits}


def _queue(key: str, value: str) -> dict[str, Any]:
    try:
        size = parse_size(value)
    except ValueError:
        size = 0
    if size < 1:
        raise UsageError(f"--link: key 'queue': '{value}' is not a byte size above 0, e.g. "
                         f"queue=64KiB")
    return {"queue_bytes": size}


def _frame(key: str, value: str) -> dict[str, Any]:
    size, _, overhead = value.partition("/")
    if not (size.isdigit() and overhead.isdigit() and int(overhead) < int(size)):
        raise UsageError(f"--link: key 'frame': '{value}' is not BYTES/HEADER_BYTES with the "
                         f"header smaller than the frame, e.g. frame=127/25")
    return {"frame_bytes": int(size), "frame_overhead_bytes": int(overhead)}


def _backoff(key: str, value: str) -> dict[str, Any]:
    return {"backoff_ns": _duration(key, value)}


def _mtu(key: str, value: str) -> dict[str, Any]:
    if not value.isdigit() or not MTU_RANGE[0] <= int(value) <= MTU_RANGE[1]:
        raise UsageError(f"--link: key 'mtu': '{value}' is not a whole number of bytes from "
                         f"{MTU_RANGE[0]} to {MTU_RANGE[1]}")
    return {"mtu": int(value)}


def _outage(key: str, value: str) -> dict[str, Any]:
    start, sep, length = value.partition("+")
    if not sep:
        raise UsageError(f"--link: key 'outage': '{value}' is not START+LENGTH, e.g. "
                         f"outage=5s+2s (down 5 s after the link came up, for 2 s)")
    return {"outage_at_ns": _duration(key, start), "outage_ns": _duration(key, length)}


def _every(key: str, value: str) -> dict[str, Any]:
    every = _duration(key, value)
    if every <= 0:
        raise UsageError(f"--link: key 'every': '{value}' is not a duration above 0, e.g. "
                         f"outage=5s+2s,every=10s")
    return {"outage_every_ns": every}


def _check_every(name: str, direction: Direction) -> None:
    """``every`` repeats an outage of the same direction, and the link comes back in between."""
    every = direction.outage_every_ns
    if every and not direction.outage_ns:
        raise UsageError(f"--link: key 'every': repeats an outage, and the {name} direction has "
                         f"none; give one, e.g. outage=5s+2s,every=10s")
    if every and every <= direction.outage_ns:
        raise UsageError(f"--link: key 'every': {every / 1e9:g} s is not longer than the outage "
                         f"({direction.outage_ns / 1e9:g} s): the link would never come back; "
                         f"every is from one outage's start to the next, e.g. "
                         f"outage=5s+2s,every=10s")


def flap_windows(start_ns: int, end_ns: int, every_ns: int, until_ns: int
                 ) -> list[tuple[int, int]]:
    """The outage [start_ns, end_ns) and its repeats every ``every_ns`` (0: none) that begin
    before ``until_ns``."""
    windows = [(start_ns, end_ns)]
    while every_ns > 0 and windows[-1][0] + every_ns < until_ns:
        windows.append((windows[-1][0] + every_ns, windows[-1][1] + every_ns))
    return windows


_PARSERS = {"delay": _delay, "jitter": _jitter, "dist": _dist, "loss": _probability("loss"),
            "ge": _ge, "corrupt": _probability("corrupt"), "dup": _probability("dup"),
            "reorder": _probability("reorder"), "rate": _rate, "overhead": _overhead,
            "queue": _queue, "frame": _frame, "backoff": _backoff, "mtu": _mtu,
            "outage": _outage, "every": _every}
