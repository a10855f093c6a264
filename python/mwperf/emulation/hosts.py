"""Emulated hosts: one network namespace each, with loopback up, and their ports on links.

A host (or a segment's hub) is the namespace ``<lease prefix>-<name>``; ``--link`` alone makes
``a`` (ping/pub) and ``b`` (pong/sub). Every namespace is added to the lease before it exists;
leaving the lease's ``with`` block deletes it, and with it every device inside it. A ``Port``
is one link device in a host, with the address emulation/topology.py planned for it.
"""

import ctypes
import os
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ..errors import RunError
from ..leases import Lease

NETNS_DIR = Path("/run/netns")
_CLONE_NEWNET = 0x40000000
_LIBC = ctypes.CDLL(None, use_errno=True)
T = TypeVar("T")


@dataclass(frozen=True)
class Host:
    """One emulated host (or hub): a network namespace."""

    name: str
    netns: str
    """the network namespace's name (``ip netns``)"""

    @property
    def netns_path(self) -> Path:
        """The namespace's file, for setns(2)."""
        return NETNS_DIR / self.netns


@dataclass(frozen=True)
class Port:
    """A link device inside a host, with its address (``/prefix_len``)."""

    host: Host
    device: str
    address: str
    prefix_len: int

    @property
    def netns(self) -> str:
        return self.host.netns

    @property
    def netns_path(self) -> Path:
        return self.host.netns_path


def create_host(lease: Lease, name: str) -> Host:
    """Create host ``name`` (a namespace with loopback up); its ports come later."""
    host = Host(name, f"{lease.prefix}-{name.replace(':', '-')}")
    lease.add("netns", host.netns)
    ip("netns", "add", host.netns)
    ip("-n", host.netns, "link", "set", "lo", "up")
    return host


def address_port(port: Port, mtu: int) -> None:
    """Give ``port`` its address and MTU, and bring it up (without IPv6 link-local addresses:
    their router solicitations would be counted as traffic on the link)."""
    netns = port.netns
    ip("-n", netns, "addr", "add", f"{port.address}/{port.prefix_len}", "dev", port.device)
    ip("-n", netns, "link", "set", "dev", port.device, "addrgenmode", "none")
    ip("-n", netns, "link", "set", "dev", port.device, "mtu", str(mtu), "up")


def add_route(host: Host, subnet: str, gateway: str, device: str) -> None:
    """Route ``subnet`` through ``gateway`` on ``device`` (onlink: no neighbour lookup first)."""
    ip("-n", host.netns, "route", "add", subnet, "via", gateway, "dev", device, "onlink")


def enable_forwarding(host: Host) -> None:
    """Let ``host`` route between its links (a host on several links, a hub)."""
    done = subprocess.run(["ip", "netns", "exec", host.netns, "sysctl", "-qw",
                           "net.ipv4.ip_forward=1"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RunError(f"cannot enable forwarding in {host.netns}: {done.stderr.strip()}")


def inside(netns: Path | None, call: Callable[[], T]) -> T:
    """``call()`` with its sockets in network namespace ``netns`` (None: mwperf's own).

    setns(2) switches only the calling thread, so the call runs in a short-lived thread of its
    own (a readiness probe of a daemon on an emulated host); its exception is re-raised here.
    """
    if netns is None:
        return call()
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            fd = os.open(netns, os.O_RDONLY)
            try:
                if _LIBC.setns(fd, _CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), f"cannot enter network namespace {netns}")
            finally:
                os.close(fd)
            outcome.append(call())
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            failure.append(exc)

    thread = threading.Thread(target=run, name="mwperf-netns", daemon=True)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return outcome[0]


def ip(*args: str) -> None:
    """Run ``ip ARGS``; a failure is a RunError quoting ip's message."""
    try:
        done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise RunError("--link: the 'ip' command (iproute2) is not installed") from None
    if done.returncode != 0:
        raise RunError(f"'ip {' '.join(args)}' failed: {done.stderr.strip()}")
