"""TCP: addressed as UDP is (any free port on the listening host); nothing to start."""

from . import udp
from .hooks import DoctorChecks, Hooks


def doctor(check: DoctorChecks) -> list:
    return [check.built_in("tcp", "sockets")]


HOOKS = Hooks(prepare=udp.prepare, doctor=doctor)
