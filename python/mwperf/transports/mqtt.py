"""MQTT: a mosquitto broker per point (its queue bound = the history depth), on the host it is
placed on; the agents meet at its address."""

from ..daemons import mosquitto
from .hooks import DoctorChecks, Hooks, Plan, Setup


def prepare(setup: Setup) -> Plan:
    broker = setup.daemons.start(lambda: mosquitto.spec(setup.workdir, setup.cfg.max_queued,
                                                        *setup.where("mosquitto")))
    return Plan(broker.address)


def doctor(check: DoctorChecks) -> list:
    return [check.program("mqtt", mosquitto.PROGRAM, mosquitto.PACKAGE, "broker", needed=True)]


HOOKS = Hooks(prepare=prepare, doctor=doctor)
