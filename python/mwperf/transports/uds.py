"""Unix domain sockets: a socket file in the point's scratch folder; each further subscriber a
file of its own, named apart from the topics' files (path.1, path.2, ... are topics)."""

from ..errors import RunError
from .hooks import DoctorChecks, Hooks, Plan, Setup

MAX_SOCKET_PATH = 107
"""sun_path holds 108 bytes with the terminating NUL"""


def prepare(setup: Setup) -> Plan:
    path = str(setup.workdir / "mwperf.sock")
    if len(path.encode()) > MAX_SOCKET_PATH:
        raise RunError(f"the socket path {path} is longer than {MAX_SOCKET_PATH} bytes; "
                       f"set TMPDIR to a shorter directory")
    return Plan(path)


def subscriber_listen(planned: str, index: int) -> str:
    return f"{planned}.s{index}"


def doctor(check: DoctorChecks) -> list:
    return [check.built_in("uds", "sockets")]


HOOKS = Hooks(prepare=prepare, doctor=doctor, subscriber_listen=subscriber_listen)
