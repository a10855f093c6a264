"""A scenario's real hosts: ``hosts:`` as a mapping whose entries carry ``ssh:``::

    hosts:
      robot: {ssh: pi@robot.local}          # user@host[:port], as --host takes it
      base:  {ssh: ops@base-station:2222}
    place: {pong: robot, rosmaster: robot, ping: local}   # 'local' = this machine

The same as ``--host robot=ssh://pi@robot.local --host base=... --place pong=robot,...`` on
every point. Real hosts take no ``links:`` (the network between them is the real one); a
scenario mixing emulated and real hosts is refused, naming both. Errors are
``FILE:LINE: field 'NAME': ...``.
"""

from typing import Any

from ..errors import UsageError
from ..remote.target import LOCAL, parse_hosts, parse_target
from .source import Item

HOST_KEYS = ("ssh",)


def parse_real_hosts(top: dict[str, Item], where: str) -> dict[str, Any] | None:
    """``{"host": ..., "remote_place": ...}`` for every point, or None when the scenario's
    ``hosts`` is not the mapping form with ``ssh:`` (emulated hosts: scenario/hosts.py)."""
    hosts = top.get("hosts")
    if hosts is None or not isinstance(hosts.value, dict):
        return None
    real: dict[str, str] = {}
    emulated: list[str] = []
    for name, entry in hosts.value.items():
        line = hosts.key_line(name)
        if entry.value is None or entry.value == {}:
            emulated.append(name)
            continue
        if not isinstance(entry.value, dict) or set(entry.value) - set(HOST_KEYS):
            raise _error(where, line, "hosts", f"host '{name}': give {{ssh: user@host[:port]}} "
                         f"for a real machine (keys allowed: {', '.join(HOST_KEYS)})")
        ssh = entry.value.get("ssh")
        if ssh is None or not isinstance(ssh.value, str):
            raise _error(where, line, "hosts", f"host '{name}': 'ssh' must be user@host[:port]")
        try:
            parse_target(ssh.value, "ssh")
        except UsageError as exc:
            raise _error(where, ssh.line, "hosts", str(exc)) from None
        real[name] = ssh.value.strip()
    if emulated and real:
        raise _error(where, hosts.line, "hosts", f"'{emulated[0]}' is emulated and "
                     f"'{next(iter(real))}' is real: one scenario cannot mix them yet")
    if not real:
        raise _error(where, hosts.line, "hosts", "a mapping of hosts gives each {ssh: "
                     "user@host}; emulated hosts are a list, e.g. [master, sender, echoer]")
    if "links" in top:
        raise _error(where, top["links"].line, "links", f"real hosts ({', '.join(real)}) are "
                     f"joined by the real network: an emulated link cannot join them")
    text = ",".join(f"{name}=ssh://{ssh.removeprefix('ssh://')}" for name, ssh in real.items())
    try:
        parse_hosts(text, "hosts")
    except UsageError as exc:
        raise _error(where, hosts.line, "hosts", str(exc)) from None
    return {"host": text, "remote_place": _place(top.get("place"), real, where)}


def _place(item: Item | None, real: dict[str, str], where: str) -> str | None:
    if item is None:
        return None
    if not isinstance(item.value, dict):
        raise _error(where, item.line, "place", "must map roles and daemons to hosts, e.g. "
                     "{pong: robot, ping: local}")
    parts = []
    for role, host in item.value.items():
        if host.value not in (LOCAL, *real):
            raise _error(where, host.line, "place", f"{role} is placed on '{host.plain()}', "
                         f"which is not a host; hosts: {LOCAL}, {', '.join(real)}")
        parts.append(f"{role}={host.value}")
    return ",".join(parts)


def _error(where: str, line: int, name: str, message: str) -> UsageError:
    return UsageError(f"{where}:{line}: field '{name}': {message}")
