"""The ``--secure`` modes: DDS-Security's (and the protection each asks the governance document
for), TLS's (the middleware's own TLS links) and the network's (a WireGuard tunnel between
emulated hosts)."""

DDS_MODES = ("auth", "sign", "encrypt")
"""``auth``: authentication and access control, data and metadata unprotected; ``sign``: every
RTPS message, each writer's metadata and its data signed (GMAC); ``encrypt``: all of them
encrypted (AES-GCM)"""

TLS_MODES = ("tls", "mtls")
"""``tls``: the middleware's links are TLS, the listening side authenticated by a certificate the
run's CA signed; ``mtls``: mutual TLS, every side presents one (security/tls.py)"""

TLS_TRANSPORTS = ("mqtt", "zenoh", "foxglove")
"""the transports the TLS modes secure (zenoh: its TLS link; mqtt: mosquitto's TLS listener and
the agent's own client over rustls; foxglove: the foxglove-sdk server's wss and the agent's own
WebSocket client over rustls)"""

NO_MTLS = {"foxglove": "the foxglove-sdk server asks its clients for no certificate (its rustls "
                       "server is built with_no_client_auth), so there is no mutual TLS to "
                       "measure; use --secure tls"}
"""TLS transports without mutual TLS, and why"""

BROKERED = ("mqtt", "foxglove")
"""TLS transports whose agents are only clients (of a broker, which holds the server
certificate): under ``tls`` they present no certificate of their own"""


def client_only(transport: str) -> bool:
    """Whether ``transport``'s agents only ever connect (BROKERED)."""
    return transport in BROKERED

TUNNEL = "wireguard"
"""every packet between the run's emulated hosts through a WireGuard tunnel (security/
wireguard.py): any transport that crosses a link"""

MODES = (*DDS_MODES, *TLS_MODES, TUNNEL)

PROTECTION = {"auth": "NONE", "sign": "SIGN", "encrypt": "ENCRYPT"}
"""the DDS-Security protection kind of rtps, metadata and data under each mode"""

TRANSPORTS = ("cyclonedds", "fastdds")
"""the transports the DDS modes secure (each through its own configuration)"""


def transports_of(mode: str) -> tuple[str, ...]:
    """The transports ``mode`` secures (the tunnel: every one that crosses a link)."""
    if mode == "mtls":
        return tuple(t for t in TLS_TRANSPORTS if t not in NO_MTLS)
    return TLS_TRANSPORTS if mode in TLS_MODES else TRANSPORTS


PLAIN = "plain"
"""``--secure plain``: no security (as without the flag): a scenario's axis
``secure: [plain, wireguard]`` measures plain and secured side by side"""


def parse_secure(value: object) -> str | None:
    """``--secure`` as given (None: not asked, or PLAIN), checked against MODES."""
    from ..errors import UsageError
    if value is None:
        return None
    mode = str(value).strip()
    if mode == PLAIN:
        return None
    if mode not in MODES:
        raise UsageError(f"--secure {mode}: not a mode; allowed: {PLAIN}, {', '.join(MODES)}")
    return mode
