"""This machine's IPv4 addresses held still while a test needs them to be.

Fast DDS decides whether a peer shares its host by a hash of the host's IPv4 addresses, taken
once in each process. A robot test (ssh_support.Robot) adds an address on a veth in this
namespace and removes it again; should that happen between the start of a run's two Fast DDS
processes, each sees the other as remote and every message goes over UDP instead of shared
memory (reproduced 2026-11-30: 1 run of 5 beside an address added and removed every 0.3 s; the
cause of the stress runs' "every message over UDP" in the Kilted shared-memory --layers test).

A test that needs shared memory holds the lock shared for as long as it runs (``unchanged``);
a change of this namespace's addresses holds it alone (``changing``). Machine-wide (a file
lock): pytest-xdist's workers are processes, and a stress run may run beside a developer's.
"""

import contextlib
import fcntl
from collections.abc import Iterator

LOCK = "/tmp/mwperf-tests-ipv4-addresses.lock"


@contextlib.contextmanager
def _held(mode: int) -> Iterator[None]:
    with open(LOCK, "a") as f:
        fcntl.flock(f, mode)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def unchanged() -> contextlib.AbstractContextManager[None]:
    """No address of this namespace is added or removed meanwhile."""
    return _held(fcntl.LOCK_SH)


def changing() -> contextlib.AbstractContextManager[None]:
    """This namespace's addresses may change meanwhile (waits for every ``unchanged``)."""
    return _held(fcntl.LOCK_EX)
