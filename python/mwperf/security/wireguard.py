"""``--secure wireguard``: a userspace WireGuard tunnel between a run's emulated hosts (the only
protection ROS 1 can have, and one any transport can use).

This kernel has no WireGuard module, so each host runs ``wireguard-go`` (Debian's), started in
the host's network namespace and in a mount namespace of its own where the run's scratch folder
is bound over ``/run``: its configuration socket (``/run/wireguard/<device>.sock`` as it sees
it) is then a file of the run (``<workdir>/wireguard/<host>/wireguard/``), never a system
one, and goes with the scratch folder. Each host gets a fresh X25519 key pair, a tunnel
address in ``10.X.(Y+TUNNEL_SUBNET_OFFSET).0/24`` (X.Y: the lease tag the links' subnets count
from, so never one of theirs) and every other host as a peer, reached at its link address on
``PORT``. The agents and daemons then meet at the tunnel addresses (emulation/network.py's
``Network.address_of``), so everything they send crosses the links encrypted. wireguard-go is
killed with mwperf (PDEATHSIG), leased as a process, and its device vanishes with it.

The handshake is made before any agent starts, as a robot's tunnel is up before its software:
for each pair of hosts the first sends one empty datagram into the tunnel towards the other and
the handshake's time is from that send to the moment the initiator's WireGuard records it as
done (its own wall-clock stamp, read back over the socket): a round trip of the link plus both
sides' key work. A handshake the link loses is retried by WireGuard 5 s later; mwperf waits
HANDSHAKE_TIMEOUT_S, then records none and goes on (the agents' first packets trigger it).

What the result keeps (``link.tunnel``): the program's version, the MTU, each host's tunnel
address, each pair's handshake, per host and peer WireGuard's own byte counters at the end
(its encrypted packets' UDP payloads: the handshake and that first datagram included), and each
host's wireguard-go CPU time (the encryption, which no agent's CPU figure includes).
"""

import ctypes
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.serialization import (Encoding, NoEncryption, PrivateFormat,
                                                          PublicFormat)

from ..emulation.hosts import Host, inside, ip
from ..errors import RunError, UsageError
from ..leases import Lease, process_id, stop_leased
from ..process_group import usage
from ..procs import _die_with_parent, interrupts_deferred
from ..result_types import (RunResultLinkTunnel, RunResultLinkTunnelHandshakesItem,
                            RunResultLinkTunnelOutsideItem, RunResultLinkTunnelPeersItem)
from . import wg_uapi

PROGRAM = "wireguard-go"
ENV_VAR = "MWPERF_WIREGUARD_GO"
"""another wireguard-go than the one on PATH (e.g. one built from source)"""
INSTALL = "apt-get install wireguard-go (make setup installs it)"
DEVICE = "mwperf-wg"
PORT = 51820
"""WireGuard's usual port, on every host's link address"""
TUNNEL_SUBNET_OFFSET = 200
"""the tunnel's third octet counts this far from the links' first (topology.py numbers at most
MAX_LINKS = 99 links from it)"""
OVERHEAD = 60
"""bytes WireGuard adds to each packet over IPv4: 20 IP + 8 UDP + 16 header + 16 tag"""
MIN_MTU = 576
"""the smallest tunnel MTU given (IPv4's minimum datagram every host must take)"""
READY_TIMEOUT_S = 5.0
STOP_TIMEOUT_S = 3.0
SOCKET_TIMEOUT_S = 2.0
HANDSHAKE_TIMEOUT_S = 6.0
"""longer than WireGuard's retry of a lost initiation (REKEY_TIMEOUT, 5 s): one retry"""
DISCARD_PORT = 9
"""where the datagram that starts a handshake goes (nothing listens: it is only a packet)"""

_LIBC = ctypes.CDLL(None, use_errno=True)
_CLONE_NEWNS = 0x00020000
_MS_BIND, _MS_REC, _MS_PRIVATE = 4096, 16384, 1 << 18


def find_program() -> str:
    """``$MWPERF_WIREGUARD_GO``, else wireguard-go on PATH; a RunError naming how to install
    it."""
    configured = os.environ.get(ENV_VAR)
    if configured:
        if not os.path.isfile(configured) or not os.access(configured, os.X_OK):
            raise RunError(f"--secure wireguard: {ENV_VAR}={configured}: no executable file "
                           "there")
        return configured
    found = shutil.which(PROGRAM)
    if found is None:
        raise RunError(f"--secure wireguard: {PROGRAM} not found on PATH; {INSTALL}")
    return found


def tunnel_mtu(link_mtus: list[int]) -> int:
    """The tunnel's MTU: the smallest link MTU less WireGuard's overhead; a UsageError when
    that leaves less than MIN_MTU."""
    smallest = min(link_mtus)
    mtu = smallest - OVERHEAD
    if mtu < MIN_MTU:
        raise UsageError(f"--secure wireguard: a link MTU of {smallest} bytes leaves {mtu} for "
                         f"the tunnel ({OVERHEAD} bytes of WireGuard per packet); it needs a "
                         f"link MTU of at least {MIN_MTU + OVERHEAD} (--link mtu=)")
    return mtu


def tunnel_addresses(hosts: list[str], base: tuple[int, int]) -> dict[str, str]:
    """Each host's tunnel address: ``10.X.(Y+TUNNEL_SUBNET_OFFSET).N``, N = 1, 2, ... in order."""
    x, y = base
    net = f"10.{x}.{(y + TUNNEL_SUBNET_OFFSET) % 256}"
    return {host: f"{net}.{number}" for number, host in enumerate(hosts, start=1)}


def _private_run(folder: Path) -> Any:
    """After entering the host's namespace (preexec): a mount namespace of its own with
    ``folder`` bound over ``/run``, so wireguard-go's socket lands in ``folder``."""
    def then() -> None:
        if _LIBC.unshare(_CLONE_NEWNS) != 0 or \
                _LIBC.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0 or \
                _LIBC.mount(str(folder).encode(), b"/run", None, _MS_BIND, None) != 0:
            os.write(2, f"mwperf: cannot bind {folder} over /run: errno "
                        f"{ctypes.get_errno()}\n".encode())
            os._exit(1)
    return then


@dataclass
class Device:
    """One host's wireguard-go."""

    host: Host
    address: str
    """its tunnel address"""
    link_address: str
    private_key: X25519PrivateKey
    popen: subprocess.Popen
    lease_id: str
    folder: Path

    @property
    def public_key(self) -> bytes:
        return self.private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    @property
    def socket(self) -> Path:
        return self.folder / "wireguard" / f"{DEVICE}.sock"


@dataclass
class Tunnel:
    """The running tunnel: a device per host, every host every other's peer."""

    mtu: int
    version: str
    devices: dict[str, Device] = field(default_factory=dict)
    handshakes: list["RunResultLinkTunnelHandshakesItem"] = field(default_factory=list)
    """per pair of hosts: ``from`` (the initiator), ``to``, ``ms`` (None: none within
    HANDSHAKE_TIMEOUT_S)"""
    peers: list["RunResultLinkTunnelPeersItem"] = field(default_factory=list)
    """per host and peer, read as the tunnel stops (``describe``)"""
    cpu_s: dict[str, float] = field(default_factory=dict)
    """host -> the CPU its wireguard-go used over the whole run (user + system, from /proc as
    it stopped): the encryption the agents' own CPU figures do not include"""

    @property
    def addresses(self) -> dict[str, str]:
        """host -> its tunnel address"""
        return {name: device.address for name, device in self.devices.items()}

    def stop(self, lease: Lease) -> None:
        """Take every device down (nothing more enters the tunnel, so what each counts sending
        is final), read their counters, then stop them (SIGINT, SIGKILL after STOP_TIMEOUT_S);
        a device that cannot be read is stopped all the same."""
        by_key = {device.public_key.hex(): name for name, device in self.devices.items()}
        for device in self.devices.values():
            try:
                ip("-n", device.host.netns, "link", "set", "dev", DEVICE, "down")
            except RunError:
                pass  # not up yet (a failed start): nothing sent through it
        for name, device in self.devices.items():
            try:
                sections = wg_uapi.exchange(device.socket, wg_uapi.GET_REQUEST, SOCKET_TIMEOUT_S)
            except RunError:
                sections = []
            self.peers += [_peer_counters(name, section, by_key) for section in sections[1:]]
            used = usage(device.popen.pid)  # its own process group
            self.cpu_s[name] = round(used.cpu_user_s + used.cpu_sys_s, 3)
        for device in self.devices.values():
            stop_leased(device.popen, lease, device.lease_id, STOP_TIMEOUT_S)

    def describe(self, wires: list[dict[str, str]],
                 reports: list[dict[str, Any] | None] | None) -> "RunResultLinkTunnel":
        """The result's ``link.tunnel`` (schema/result.v2.json); ``wires`` and ``reports``: the
        link emulators' (None: a backend whose counters are not per IP packet, netem)."""
        return {"kind": "wireguard", "program": f"{PROGRAM} {self.version}", "mtu": self.mtu,
                "port": PORT, "overhead_bytes": OVERHEAD, "addresses": self.addresses,
                "handshakes": self.handshakes, "peers": self.peers, "cpu_s": self.cpu_s,
                "outside": (None if reports is None or not self.peers
                            else outside_bytes(self.peers, wires, reports))}


def _peer_counters(host: str, section: dict[str, str], by_key: dict[str, str]
                   ) -> "RunResultLinkTunnelPeersItem":
    """One peer of ``host``'s device as the result keeps it: WireGuard's byte counters."""
    return {"host": host, "peer": by_key.get(section.get("public_key", ""), "?"),
            "tx_bytes": int(section.get("tx_bytes", "0")),
            "rx_bytes": int(section.get("rx_bytes", "0"))}


OUTER = 20 + 8
"""the IPv4 and UDP headers of each WireGuard packet on the link"""


def outside_bytes(peers: list["RunResultLinkTunnelPeersItem"], wires: list[dict[str, str]],
                  reports: list[dict[str, Any] | None]
                  ) -> list["RunResultLinkTunnelOutsideItem"]:
    """What crossed the link beside the tunnel, per host on a single wire and per direction out
    of it that lost, duplicated and corrupted nothing: the bytes that wire forwarded from the
    host beyond what its WireGuard counts sending to every peer plus OUTER per packet. Every
    packet of n bytes outside the tunnel adds n - OUTER: more than 0 means traffic in the clear
    (a bare empty UDP datagram alone would go unseen). ``wires``: each wire's ``link``,
    ``from`` (its up direction's sender) and ``to``; ``reports`` the emulators', in order."""
    sent: dict[str, int] = {}
    for peer in peers:
        sent[peer["host"]] = sent.get(peer["host"], 0) + peer["tx_bytes"]
    wires_of: dict[str, int] = {}
    for wire in wires:
        for end in (wire["from"], wire["to"]):
            wires_of[end] = wires_of.get(end, 0) + 1
    found: list["RunResultLinkTunnelOutsideItem"] = []
    for wire, report in zip(wires, reports):
        ways: tuple[tuple[str, Literal["up", "down"]], ...] = ((wire["from"], "up"),
                                                              (wire["to"], "down"))
        for host, way in ways:
            counters = (report or {}).get(way)
            if host not in sent or wires_of[host] != 1 or not counters:
                continue
            dropped = sum((counters.get("dropped") or {}).values())
            if counters.get("received") != counters.get("forwarded") or dropped or \
                    counters.get("duplicated") or counters.get("corrupted"):
                continue  # the emulator's count is not what the host sent
            found.append({"host": host, "link": wire["link"], "direction": way,
                          "bytes": counters["forwarded_bytes"] - sent[host]
                          - OUTER * counters["forwarded"]})
    return found


def handshake_ns(sections: list[dict[str, str]], public_key: bytes) -> int | None:
    """When the peer with ``public_key`` last completed a handshake (CLOCK_REALTIME ns), from a
    ``get=1`` reply; None before its first."""
    for section in sections[1:]:
        if section.get("public_key") == public_key.hex():
            stamp = (int(section.get("last_handshake_time_sec", "0")) * 1_000_000_000
                     + int(section.get("last_handshake_time_nsec", "0")))
            return stamp or None
    return None


def _handshake(initiator: Device, responder: Device) -> "RunResultLinkTunnelHandshakesItem":
    """Start the handshake from ``initiator`` to ``responder`` and time it (module doc)."""
    def poke() -> int:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            stamp = time.time_ns()  # right at the send: not the namespace switch before it
            sock.sendto(b"", (responder.address, DISCARD_PORT))
            return stamp

    sent = inside(initiator.host.netns_path, poke)
    deadline = time.monotonic() + HANDSHAKE_TIMEOUT_S
    done = None
    while done is None and time.monotonic() < deadline:
        done = handshake_ns(wg_uapi.exchange(initiator.socket, wg_uapi.GET_REQUEST,
                                             SOCKET_TIMEOUT_S), responder.public_key)
        if done is None:
            time.sleep(0.001)
    return {"from": initiator.host.name, "to": responder.host.name,
            "ms": None if done is None else round((done - sent) / 1e6, 3)}


def program_version(program: str) -> str:
    """``wireguard-go --version``'s version word (``v0.0.20220316``); a RunError naming the
    program when it cannot be run."""
    try:
        done = subprocess.run([program, "--version"], capture_output=True, text=True,
                              check=False, timeout=READY_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RunError(f"--secure wireguard: cannot run {program} --version: {exc}") from None
    words = done.stdout.split()
    return words[1] if len(words) > 1 else "unknown"


def start_tunnel(hosts: dict[str, Host], link_addresses: dict[str, str], base: tuple[int, int],
                 link_mtus: list[int], workdir: Path, lease: Lease) -> Tunnel:
    """Start and configure a device on every host (see the module doc); on any failure the
    devices started so far are stopped and the error raised."""
    program = find_program()
    tunnel = Tunnel(tunnel_mtu(link_mtus), program_version(program))
    addresses = tunnel_addresses(list(hosts), base)
    try:
        for name, host in hosts.items():
            tunnel.devices[name] = _start_device(program, host, addresses[name],
                                                 link_addresses[name], workdir, lease)
        for name, device in tunnel.devices.items():
            peers = [wg_uapi.Peer(other.public_key, f"{other.link_address}:{PORT}",
                                  f"{other.address}/32")
                     for other_name, other in tunnel.devices.items() if other_name != name]
            raw = device.private_key.private_bytes(Encoding.Raw, PrivateFormat.Raw,
                                                   NoEncryption())
            wg_uapi.exchange(device.socket, wg_uapi.set_request(raw, PORT, peers),
                             SOCKET_TIMEOUT_S)
            netns = device.host.netns
            ip("-n", netns, "addr", "add", f"{device.address}/24", "dev", DEVICE)
            ip("-n", netns, "link", "set", "dev", DEVICE, "mtu", str(tunnel.mtu), "up")
        devices = list(tunnel.devices.values())
        tunnel.handshakes = [_handshake(a, b) for i, a in enumerate(devices)
                             for b in devices[i + 1:]]
    except BaseException:
        tunnel.stop(lease)
        raise
    return tunnel


def _start_device(program: str, host: Host, address: str, link_address: str, workdir: Path,
                  lease: Lease) -> Device:
    """wireguard-go in ``host``, returned once its configuration socket exists."""
    folder = workdir / "wireguard" / host.name
    folder.mkdir(parents=True, exist_ok=True)
    err_path = workdir / f"wireguard-{host.name}.stderr"
    with open(err_path, "wb") as err, interrupts_deferred():
        try:
            popen = subprocess.Popen([program, "-f", DEVICE], stdin=subprocess.DEVNULL,
                                     stdout=err, stderr=err, process_group=0,
                                     preexec_fn=_die_with_parent(os.getpid(), host.netns_path,
                                                                 _private_run(folder)))
        except OSError as exc:
            raise RunError(f"--secure wireguard: cannot start {program}: {exc}") from None
        lease_id = process_id(popen.pid)
        lease.add("process", lease_id)
    device = Device(host, address, link_address, X25519PrivateKey.generate(), popen, lease_id,
                    folder)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not device.socket.exists():
        code = popen.poll()
        if code is not None or time.monotonic() > deadline:
            stop_leased(popen, lease, lease_id, STOP_TIMEOUT_S)
            why = _last_line(err_path) or (
                f"it exited with code {code}" if code is not None
                else f"no configuration socket within {READY_TIMEOUT_S:g} s")
            raise RunError(f"--secure wireguard: {program} did not start in {host.netns}: {why}")
        time.sleep(0.005)
    return device


def _last_line(path: Path) -> str:
    """The last line of ``path`` that says something (wireguard-go's banner is boxed)."""
    try:
        lines = [ln.strip(" │┌┐└┘─") for ln in path.read_text(errors="replace").splitlines()]
    except OSError:
        return ""
    said = [ln for ln in lines if ln.strip()]
    return said[-1].strip() if said else ""
