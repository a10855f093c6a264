"""The values of ``--host NAME=ssh://user@host[:port]`` and ``--place ROLE=HOST,...``.

``LOCAL`` is the machine mwperf runs on. Without ``--place``, the sender (ping/pub) runs on
``local`` and the server (pong/sub) and every daemon on the first ``--host``.
"""

import re
from dataclasses import dataclass

from ..emulation.topology import PLACEABLE
from ..errors import UsageError

LOCAL = "local"
HOST_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")
USER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}")
HOSTNAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]+\]")
SCHEME = "ssh://"


@dataclass(frozen=True)
class SshTarget:
    """Where one real host is reached: ``user@host:port`` (user/port None: ssh's defaults)."""

    host: str
    user: str | None = None
    port: int | None = None

    def __str__(self) -> str:
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port else ""
        return f"{user}{self.host}{port}"

    @property
    def url(self) -> str:
        return SCHEME + str(self)


def parse_target(text: str, flag: str = "--host") -> SshTarget:
    """``ssh://user@host[:port]`` or ``user@host[:port]`` (the scenario's ``ssh:``)."""
    rest = text.strip()
    if rest.startswith(SCHEME):
        rest = rest[len(SCHEME):]
    elif "://" in rest:
        raise UsageError(f"{flag}: '{text}': only ssh:// hosts are supported, e.g. "
                         f"ssh://user@robot.local:22")
    user = None
    if "@" in rest:
        user, rest = rest.split("@", 1)
        if not USER.fullmatch(user):
            raise UsageError(f"{flag}: '{text}': '{user}' is not a user name")
    host, port = rest, None
    if rest.startswith("["):
        end = rest.find("]")
        host, tail = rest[:end + 1], rest[end + 1:]
        port_text = tail[1:] if tail.startswith(":") else (None if not tail else "x")
    else:
        host, _, port_text = rest.partition(":")
        port_text = port_text or None
    if port_text is not None:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise UsageError(f"{flag}: '{text}': the port must be 1..65535")
        port = int(port_text)
    if not HOSTNAME.fullmatch(host) or host.startswith("-"):
        raise UsageError(f"{flag}: '{text}': '{host}' is not a host name or address")
    return SshTarget(host.strip("[]"), user, port)


def parse_hosts(text: str | None, flag: str = "--host") -> tuple[tuple[str, SshTarget], ...]:
    """``b=ssh://user@robot,c=ssh://...`` -> ((name, target), ...), names checked."""
    if not text:
        return ()
    hosts: dict[str, SshTarget] = {}
    for item in (part.strip() for part in text.split(",")):
        name, sep, url = item.partition("=")
        if not sep or not url:
            raise UsageError(f"{flag}: '{item}' is not NAME=ssh://user@host[:port]")
        if not HOST_NAME.fullmatch(name) or name == LOCAL:
            raise UsageError(f"{flag}: '{name}' is not a host name (lower-case letters, digits "
                             f"and _, starting with a letter; '{LOCAL}' is this machine)")
        if name in hosts:
            raise UsageError(f"{flag}: host '{name}' is given twice")
        hosts[name] = parse_target(url, flag)
    return tuple(hosts.items())


def parse_place(text: str | None, hosts: tuple[str, ...], roles: tuple[str, str],
                flag: str = "--place") -> tuple[tuple[str, str], ...]:
    """Every placeable name -> host: ``--place`` entries, else the default (module doc).
    ``roles``: the point's (server, sender)."""
    server, sender = roles
    place = {name: hosts[0] for name in PLACEABLE}
    place.update({"ping": LOCAL, "pub": LOCAL} if sender in ("ping", "pub") else {})
    place[server] = hosts[0]
    known = (LOCAL, *hosts)
    for item in (part.strip() for part in (text or "").split(",") if part.strip()):
        role, sep, host = item.partition("=")
        if not sep:
            raise UsageError(f"{flag}: '{item}' is not ROLE=HOST (e.g. pong=b,rosmaster=b)")
        if role not in PLACEABLE:
            raise UsageError(f"{flag}: '{role}' cannot be placed; one of {', '.join(PLACEABLE)}")
        if host not in known:
            raise UsageError(f"{flag}: '{role}={host}': no host '{host}'; the hosts are "
                             f"{', '.join(known)} (give others with --host NAME=ssh://...)")
        place[role] = host
    return tuple(sorted(place.items()))
