"""Each transport's profile: its Rust descriptor as ``mwperf-agent transports --json`` prints it
(crates/mwperf-transports/src/descriptor.rs), read once per agent binary."""

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agent import Agent, find_agent, query_json
from ..errors import RunError, UsageError
from ..wire import HEADER_BYTES

FIELDS = ("name", "built", "daemon", "address", "description", "discovery", "framing",
          "max_message", "max_payload", "local_only", "crosses_hosts", "fanout", "node_session", "opts", "defaults",
          "qos", "services")
"""every key of one descriptor in the agent's listing"""


@dataclass(frozen=True)
class Profile:
    """What one transport is (the agent's descriptor of it)."""

    name: str
    built: bool
    daemon: str | None
    """the daemon every run needs (mosquitto, rosmaster)"""
    address: str
    """what an ADDR looks like"""
    description: str
    discovery: bool
    """peers meet through discovery (plain sockets do not: nothing to wait for)"""
    framing: str
    """datagram, stream or middleware"""
    max_message: int | None
    """the largest message one send carries, header included (None: no limit of its own)"""
    max_payload: int
    """the largest payload (after mwperf's header) one message carries with this agent: the
    largest message less the header, never above the agent's payload limit; every sized option
    is checked against it before anything starts (:meth:`check_fits`)"""
    local_only: bool
    """host-local IPC: nothing crosses a network"""
    crosses_hosts: bool
    """agents on two hosts (emulated or real) can meet over it"""
    fanout: str
    """sender-loops (one address per subscriber), counted or uncounted (native)"""
    node_session: bool
    """a graph node's endpoints share one middleware session (participant, node, connection)
    instead of opening one each"""
    opts: dict[str, str]
    """--opt key -> one line of help"""
    defaults: dict[str, str]
    """--opt key -> the value it takes when not given, where the control plane needs the same
    text (Cyclone DDS's loopback config)"""
    qos: dict[str, Any]
    """the reliability/history/durability values honoured, and a note"""
    services: dict[str, Any]
    """request/response (``--mode service``): ``supported`` and ``how`` (the mechanism, or why
    there is none)"""

    def check_fits(self, what: str, size: int) -> None:
        """A usage error naming ``what`` (a flag, a graph's topic), the transport and its
        limit when ``size`` payload bytes do not fit one message."""
        if size > self.max_payload:
            own = self.max_message is not None  # else the agent's limit, whatever the transport
            whose = f"--transport {self.name}" if own else "the agent, over any transport,"
            raise UsageError(f"{what}: a payload of {size} bytes does not fit one {self.name} "
                             f"message ({whose} carries at most {self.max_payload} bytes after "
                             f"mwperf's {HEADER_BYTES}-byte header)"
                             + ("; use a smaller payload or tcp/uds" if own else ""))

    @property
    def native_fanout(self) -> bool:
        """Subscribers share one address (middleware), instead of one each (sockets)."""
        return self.fanout != "sender-loops"


def profiles(agent: Agent | None = None) -> dict[str, Profile]:
    """Every transport the agent describes (built in or not), by name, in its order."""
    return _profiles((agent or find_agent()).path)


def profile(name: str, agent: Agent | None = None) -> Profile:
    """The profile of transport ``name``; RunError when the agent does not describe it."""
    known = profiles(agent)
    if name not in known:
        raise RunError(f"--transport {name}: the agent describes no such transport (it knows "
                       f"{', '.join(known)}); is it an up-to-date build? run 'make build'")
    return known[name]


def crossing_transports(agent: Agent | None = None) -> list[str]:
    """Transports whose agents can meet across hosts, emulated or real (not host-local IPC)."""
    return [p.name for p in profiles(agent).values() if p.crosses_hosts]


@functools.cache
def _profiles(path: Path) -> dict[str, Profile]:
    entries = query_json(path, "transports", "--json")
    if not isinstance(entries, list):
        raise RunError(f"'{path} transports --json' did not print a JSON list of transports")
    found = {}
    for entry in entries:
        missing = [key for key in FIELDS if not isinstance(entry, dict) or key not in entry]
        if missing:
            name = entry.get("name", "?") if isinstance(entry, dict) else "?"
            raise RunError(f"'{path} transports --json': transport '{name}' lacks "
                           f"{', '.join(missing)}; is it an up-to-date build? run 'make build'")
        found[entry["name"]] = Profile(**{key: entry[key] for key in FIELDS})
    return found
