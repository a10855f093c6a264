"""Foxglove WebSocket: a foxglove-sdk relay server per point (python/mwperf/bridges/
foxglove_server.py, daemons/foxglove.py) on the host it is placed on; the agents are WebSocket
clients of it and meet at its address."""

from ..daemons import foxglove
from ..errors import RunError
from .hooks import DoctorChecks, Hooks, Plan, Setup


def prepare(setup: Setup) -> Plan:
    require_sdk("--transport foxglove")
    server = setup.daemons.start(lambda: foxglove.spec(*setup.where(foxglove.NAME)))
    return Plan(server.address)


def require_sdk(what: str) -> None:
    if foxglove.sdk_version() is None:
        raise RunError(f"{what}: the Python package foxglove-sdk is not installed; install it "
                       f"with 'pip install foxglove-sdk' (mwperf's own install brings it)")


def doctor(check: DoctorChecks) -> list:
    return [check.python_package("foxglove", "foxglove-sdk", "WebSocket server (relay, bridge)")]


HOOKS = Hooks(prepare=prepare, doctor=doctor)
