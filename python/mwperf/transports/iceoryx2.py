"""iceoryx2: shared memory on one host, no daemon; the listening agent picks a service base."""

from pathlib import Path
from typing import TYPE_CHECKING

from .hooks import DoctorChecks, Hooks, Plan, Setup

if TYPE_CHECKING:
    from ..leases import Lease
    from ..point import Point

SHM = Path("/dev/shm")


def own_domain(cfg: "Point", lease: "Lease") -> tuple[str, ...]:
    """``--opt`` settings that keep a run's files apart: iceoryx2 in a domain named after the
    lease, whose files (iceoryx2 keeps a node counter in /dev/shm for good) the lease removes;
    nothing for another transport or when the user chose a domain."""
    if cfg.transport != "iceoryx2" or cfg.option("domain") is not None:
        return ()
    lease.add("path", f"{SHM}/{lease.prefix}_*")
    return (f"domain={lease.prefix}",)


def prepare(setup: Setup) -> Plan:
    return Plan("auto")


def doctor(check: DoctorChecks) -> list:
    return [check.built_in("iceoryx2", "iceoryx2 crate")]


HOOKS = Hooks(prepare=prepare, doctor=doctor)
