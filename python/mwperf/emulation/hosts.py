"""Emulated hosts: one network namespace each, with loopback up and an address on the link.

Two hosts ``a`` and ``b`` (ping/pub on ``a``, pong/sub on ``b``) share the subnet
``10.X.Y.0/24`` (X.Y from the lease tag, so concurrent runs differ, though namespaces would
keep them apart anyway): ``a`` is ``.1``, ``b`` is ``.2``. Every namespace is added to the
lease before it exists; leaving the lease's ``with`` block deletes it, and with it every device
inside it.
"""

import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import RunError
from ..leases import Lease

NETNS_DIR = Path("/run/netns")
PREFIX_LEN = 24


@dataclass(frozen=True)
class Host:
    """One emulated host."""

    name: str
    """'a' (the sender's host) or 'b' (the server's)"""
    netns: str
    """the network namespace's name (``ip netns``)"""
    address: str
    device: str
    """the link's device inside the namespace"""

    @property
    def netns_path(self) -> Path:
        """The namespace's file, for setns(2)."""
        return NETNS_DIR / self.netns


def create_hosts(lease: Lease) -> tuple[Host, Host]:
    """Create hosts a and b (namespaces with loopback up); their link devices come later."""
    subnet = f"10.{int(lease.tag[0:2], 16)}.{int(lease.tag[2:4], 16)}"
    hosts = tuple(Host(name, f"{lease.prefix}-{name}", f"{subnet}.{octet}",
                       f"{lease.prefix}{name}") for name, octet in (("a", 1), ("b", 2)))
    for host in hosts:
        lease.add("netns", host.netns)
        ip("netns", "add", host.netns)
        ip("-n", host.netns, "link", "set", "lo", "up")
    return hosts[0], hosts[1]


def address_link(host: Host, mtu: int) -> None:
    """Give ``host``'s link device its address and MTU, and bring it up (without IPv6 link-local
    addresses: their router solicitations would be counted as traffic on the link)."""
    ip("-n", host.netns, "addr", "add", f"{host.address}/{PREFIX_LEN}", "dev", host.device)
    ip("-n", host.netns, "link", "set", "dev", host.device, "addrgenmode", "none")
    ip("-n", host.netns, "link", "set", "dev", host.device, "mtu", str(mtu), "up")


def ip(*args: str) -> None:
    """Run ``ip ARGS``; a failure is a RunError quoting ip's message."""
    try:
        done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise RunError("--link: the 'ip' command (iproute2) is not installed") from None
    if done.returncode != 0:
        raise RunError(f"'ip {' '.join(args)}' failed: {done.stderr.strip()}")
