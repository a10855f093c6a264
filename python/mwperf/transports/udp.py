"""UDP: the listening agent takes any free port on its host's address; nothing to start."""

from .hooks import DoctorChecks, Hooks, Plan, Setup


def prepare(setup: Setup) -> Plan:
    return Plan(f"{setup.server}:0")


def doctor(check: DoctorChecks) -> list:
    return [check.built_in("udp", "sockets")]


HOOKS = Hooks(prepare=prepare, doctor=doctor)
