"""iceoryx2: shared memory on one host, no daemon; the listening agent picks a service base."""

from .hooks import DoctorChecks, Hooks, Plan, Setup


def prepare(setup: Setup) -> Plan:
    return Plan("auto")


def doctor(check: DoctorChecks) -> list:
    return [check.built_in("iceoryx2", "iceoryx2 crate")]


HOOKS = Hooks(prepare=prepare, doctor=doctor)
