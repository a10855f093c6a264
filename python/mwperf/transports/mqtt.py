"""MQTT: a mosquitto broker per point (its queue bound = the history depth), on the host it is
placed on; the agents meet at its address. ``--secure tls|mtls``: its listener is TLS with the
run's broker certificate (security/tls.py, made by the secure part before this); under mtls it
demands the agents' certificates."""

from ..daemons import mosquitto
from ..security import FOLDER
from ..security.modes import TLS_MODES
from ..security.tls import BROKER, identity
from .hooks import DoctorChecks, Hooks, Plan, Setup


def prepare(setup: Setup) -> Plan:
    secure = getattr(setup.cfg, "secure", None)
    tls = (mosquitto.BrokerTls(identity(setup.workdir / FOLDER, BROKER), secure == "mtls")
           if secure in TLS_MODES else None)
    broker = setup.daemons.start(lambda: mosquitto.spec(setup.workdir, setup.cfg.max_queued,
                                                        *setup.where("mosquitto"), tls=tls))
    return Plan(broker.address)


def doctor(check: DoctorChecks) -> list:
    return [check.program("mqtt", mosquitto.PROGRAM, mosquitto.PACKAGE, "broker", needed=True)]


HOOKS = Hooks(prepare=prepare, doctor=doctor)
