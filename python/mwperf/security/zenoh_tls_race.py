"""zenoh's TLS link shares one rustls connection between its reading and its writing task
through an ``UnsafeCell`` (zenoh-link-tls ``LinkUnicastTls``, zenoh 1.x; eclipse-zenoh/zenoh
issue 2557, open as of zenoh 1.10): rustls supports no concurrent read and write on one
connection, so when both run at once the connection's state is torn. Measured here (zenoh
1.10.2, round trip at 200 Hz over ``--secure mtls``, peer mode, 1 s, beside two busy loops):
a reliable link lost messages in 9 of 30 runs and a process aborted inside rustls
(``Error::clone`` of a garbage error, "memory allocation of 139973521078096 bytes failed") in 1;
over ``tcp/`` the same runs lost nothing (0 of 15). Not mwperf's: it says so where it shows."""

from collections.abc import Mapping
from typing import Any

from ..merge import make_warning
from ..result_types import Warning
from .modes import TLS_MODES, zenoh_link

ISSUE = "https://github.com/eclipse-zenoh/zenoh/issues/2557"
FRAME = "zenoh_link_tls"
"""the crate whose frames a process that died in the race has in its backtrace"""
CODE = "zenoh-tls-race"
HINT = (f"zenoh's TLS link reads and writes one rustls connection from two tasks at once "
        f"({ISSUE}): not mwperf's; tcp/ links lose nothing in the same runs. Under CPU "
        "contention it is likelier: measure on a quiet machine, and count runs, not one")


def warnings(transport: str, secure: str | None, result: Mapping[str, Any],
             died: Mapping[str, str], chosen_link: str | None = None) -> list[Warning]:
    """The warnings of one zenoh point secured over its TLS link: a process that died inside
    zenoh's TLS link (``died``: name -> what it wrote on stderr, for the processes a signal
    ended), or messages a reliable link lost. None for any other point, a point over zenoh's
    QUIC link (``chosen_link``: its ``--opt link``) included: another implementation."""
    if transport != "zenoh" or secure not in TLS_MODES or zenoh_link(secure, chosen_link) != "tls":
        return []
    crashed = [name for name, text in died.items() if FRAME in text]
    if crashed:
        return [make_warning(CODE, f"{', '.join(crashed)} died inside zenoh's TLS link "
                             f"({FRAME} in its backtrace): the race of {ISSUE}", HINT)]
    lost = ((result.get("measurement") or {}).get("accounting") or {}).get("lost") or 0
    lost += sum(e.get("lost") or 0 for e in result.get("edges") or [])  # a graph's edges
    reliable = (result.get("config") or {}).get("reliability") == "reliable"
    if lost and reliable:
        return [make_warning(CODE, f"{lost} messages lost on a reliable zenoh TLS link, which "
                             f"zenoh's TLS link race ({ISSUE}) loses", HINT)]
    return []
