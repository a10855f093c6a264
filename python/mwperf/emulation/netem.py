"""The kernel backend: a veth pair between two hosts' ports with a netem qdisc on each end.

Chosen automatically when the kernel has sch_netem (probed on a veth device in host a: many
kernels, this project's machines among them, have no netem), or with ``--link-backend netem``.
Each end's egress carries its direction (a's end: ``up``, b's end: ``down``). netem cannot
express everything the grammar can: a scheduled outage and CSMA back-off need the userspace
backend, and its queue limit counts packets (queue bytes / MTU here), not bytes.
"""

import re
import subprocess
from typing import Any

from ..errors import RunError, UsageError
from ..leases import Lease
from .hosts import Host, Port, ip
from .links import Direction, LinkSpec

UNSUPPORTED = {"outage_ns": "outage", "backoff_ns": "backoff"}
"""Direction fields netem has no equivalent for -> the --link key"""
_STATS = re.compile(r"Sent (\d+) bytes (\d+) pkt \(dropped (\d+), overlimits (\d+) requeues (\d+)\)")


def available(host: Host, lease: Lease) -> bool:
    """True when a netem qdisc can be added in ``host``'s namespace (probed on a veth device;
    kernels without netem may have no dummy devices either)."""
    probe = f"{lease.prefix}p"
    lease.add("link", probe)
    ip("-n", host.netns, "link", "add", probe, "type", "veth", "peer", "name", f"{probe}q")
    try:
        return tc(host, "qdisc", "add", "dev", probe, "root", "netem").returncode == 0
    finally:
        ip("-n", host.netns, "link", "delete", probe)


def expresses(spec: LinkSpec) -> bool:
    """True when netem can do everything ``spec`` asks for (else auto picks userspace)."""
    return not any(getattr(d, name) for d in (spec.up, spec.down) for name in UNSUPPORTED)


def netem_args(direction: Direction) -> list[str]:
    """netem's arguments for one direction; UsageError for what netem cannot do."""
    for name, key in UNSUPPORTED.items():
        if getattr(direction, name):
            raise UsageError(f"--link: key '{key}' needs --link-backend userspace (netem has no "
                             f"equivalent)")
    args = ["limit", str(max(1, direction.queue_bytes // direction.mtu))]
    if direction.delay_ns or direction.jitter_ns:
        args += ["delay", f"{direction.delay_ns / 1000:g}us"]
        if direction.jitter_ns:
            args += [f"{direction.jitter_ns / 1000:g}us"]
            if direction.dist != "uniform":
                args += ["distribution", direction.dist]
    if direction.ge is not None:
        p, r, h, k = direction.ge
        args += ["loss", "gemodel", *(f"{100 * x:g}%" for x in (p, r, 1 - h, 1 - k))]
    elif direction.loss:
        args += ["loss", "random", f"{100 * direction.loss:g}%"]
    for name, value in (("corrupt", direction.corrupt), ("duplicate", direction.dup),
                        ("reorder", direction.reorder)):
        if value:
            args += [name, f"{100 * value:g}%"]
    if direction.rate_bps:
        bits = direction.rate_bps * 8 / direction.bits_per_byte  # framing bits as a lower rate
        args += ["rate", f"{bits:.0f}bit"]
        if direction.frame_bytes:
            args += ["0", str(direction.frame_bytes - direction.frame_overhead_bytes),
                     str(direction.frame_overhead_bytes)]
    return args


class NetemLink:
    """A veth pair whose ends carry netem qdiscs."""

    def __init__(self, a: Port, b: Port) -> None:
        self.hosts = (a, b)

    @classmethod
    def start(cls, spec: LinkSpec, a: Port, b: Port, lease: Lease) -> "NetemLink":
        """Create the veth pair in the two namespaces and attach netem to each end."""
        arguments = (netem_args(spec.up), netem_args(spec.down))
        create_veth(a, b, lease)
        for host, args in zip((a, b), arguments):
            done = tc(host, "qdisc", "add", "dev", host.device, "root", "netem", *args)
            if done.returncode != 0:
                raise RunError(f"--link: 'tc qdisc add dev {host.device} root netem "
                               f"{' '.join(args)}' failed: {done.stderr.strip()}")
        return cls(a, b)

    def stop(self) -> dict[str, Any]:
        """The qdiscs' counters (the devices go with the namespaces)."""
        return {"emulator": "netem",
                **{name: _stats(host) for name, host in zip(("up", "down"), self.hosts)}}


def create_veth(a: Port, b: Port, lease: Lease) -> None:
    """A veth pair with one end in each host (a plain link: also the emulator's cost baseline)."""
    lease.add("link", a.device)
    ip("link", "add", a.device, "type", "veth", "peer", "name", b.device)
    for host in (a, b):
        ip("link", "set", host.device, "netns", host.netns)


def tc(host: Host | Port, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``tc ARGS`` in ``host``'s namespace (``ip netns exec`` execs tc: no extra fork)."""
    return subprocess.run(["ip", "netns", "exec", host.netns, "tc", *args], capture_output=True,
                          text=True, check=False)


def _stats(host: Port) -> dict[str, Any]:
    done = tc(host, "-s", "qdisc", "show", "dev", host.device)
    match = _STATS.search(done.stdout)
    if match is None:
        return {"error": done.stderr.strip() or "no netem statistics"}
    sent_bytes, sent, dropped, overlimits, requeues = (int(x) for x in match.groups())
    return {"forwarded": sent, "forwarded_bytes": sent_bytes, "dropped": {"qdisc": dropped},
            "overlimits": overlimits, "requeues": requeues}
