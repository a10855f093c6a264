"""A point's real hosts as configuration: ``--host``, ``--place``, ``--ssh-config`` and
``--accept-new-host-key``, checked before anything connects."""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..transports import crossing_transports
from .target import LOCAL, SshTarget, parse_hosts, parse_place


@dataclass(frozen=True)
class RemotePlan:
    """The real hosts of a point and where every role and daemon runs."""

    hosts: tuple[tuple[str, SshTarget], ...]
    place: tuple[tuple[str, str], ...]
    ssh_config: str | None = None
    accept_new_host_key: bool = False

    def host_of(self, name: str) -> str:
        return dict(self.place).get(name, LOCAL)

    def away(self) -> tuple[tuple[str, str], ...]:
        """(role or daemon, real host) of what does not run here: where CPU limits by host
        apply (--cpu-quota HOST=PCT; emulation/cpu.py)."""
        return tuple((name, host) for name, host in self.place if host != LOCAL)

    def to_dict(self) -> dict[str, Any]:
        return {"hosts": {name: target.url for name, target in self.hosts},
                "place": dict(self.place), "ssh_config": self.ssh_config,
                "accept_new_host_key": self.accept_new_host_key}


def parse_remote(options: dict[str, Any], roles: tuple[str, str], transport: str | None
                 ) -> RemotePlan | None:
    """The point's RemotePlan from its options, or None without ``--host``."""
    hosts = parse_hosts(options.get("host"))
    if not hosts:
        for key, flag in (("remote_place", "--place"), ("ssh_config", "--ssh-config"),
                          ("accept_new_host_key", "--accept-new-host-key")):
            if options.get(key):
                raise UsageError(f"{flag}: only together with --host NAME=ssh://user@host")
        return None
    if options.get("link") is not None or options.get("topology") is not None:
        raise UsageError(f"--host {hosts[0][0]}: a real host cannot be on an emulated link "
                         f"(--link / a scenario's links join emulated hosts); the network "
                         f"between {LOCAL} and {hosts[0][0]} is the real one")
    crossing = crossing_transports()  # what crosses between hosts: the transports' profiles
    if transport is not None and transport not in crossing:
        raise UsageError(f"--host: --transport {transport} cannot cross between hosts (it is "
                         f"host-local IPC); use {', '.join(crossing)}")
    config = options.get("ssh_config")
    if config is not None and not Path(str(config)).is_file():
        raise UsageError(f"--ssh-config: no file '{config}'")
    place = parse_place(options.get("remote_place"), tuple(n for n, _ in hosts), roles)
    return RemotePlan(hosts, place, None if config is None else str(Path(str(config)).resolve()),
                      bool(options.get("accept_new_host_key")))
