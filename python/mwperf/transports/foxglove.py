"""Foxglove WebSocket: a foxglove-sdk relay server per point (python/mwperf/bridges/
foxglove_server.py, daemons/foxglove.py) on the host it is placed on; the agents are WebSocket
clients of it and meet at its address. ``--secure tls``: the server serves wss with the run's
broker certificate (security/tls.py, made by the secure part before this); the agents trust the
run's CA."""

from ..daemons import foxglove
from ..errors import RunError
from ..security import FOLDER
from ..security.tls import BROKER, identity
from .hooks import DoctorChecks, Hooks, Plan, Setup


def prepare(setup: Setup) -> Plan:
    require_sdk("--transport foxglove")
    tls = (identity(setup.workdir / FOLDER, BROKER)
           if getattr(setup.cfg, "secure", None) == "tls" else None)
    server = setup.daemons.start(lambda: foxglove.spec(*setup.where(foxglove.NAME), tls=tls))
    return Plan(server.address)


def require_sdk(what: str) -> None:
    if foxglove.sdk_version() is None:
        raise RunError(f"{what}: the Python package foxglove-sdk is not installed; install it "
                       f"with 'pip install foxglove-sdk' (mwperf's own install brings it)")


def doctor(check: DoctorChecks) -> list:
    return [check.python_package("foxglove", "foxglove-sdk", "WebSocket server (relay, bridge)")]


HOOKS = Hooks(prepare=prepare, doctor=doctor)
