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

NO_DDS_SECURITY = {
    "ros2": "the ROS 2 wheels' Fast DDS (rmw_fastrtps_cpp's: libfastrtps 2.14 in Jazzy, "
            "libfastdds in Kilted) is built without DDS-Security: its library has no "
            "builtin.PKI-DH authentication or AES-GCM-GMAC plugin (Debian's Fast DDS 2.9.1 has "
            "them: --transport fastdds), so SROS 2 cannot run here"}
"""DDS transports without DDS-Security here, and why (tests/test_ros2_no_security_e2e.py checks
the wheels' libraries)"""

BROKERED = ("mqtt", "foxglove")
"""TLS transports whose agents are only clients (of a broker, which holds the server
certificate): under ``tls`` they present no certificate of their own"""


def client_only(transport: str) -> bool:
    """Whether ``transport``'s agents only ever connect (BROKERED)."""
    return transport in BROKERED

ZENOH_LINKS = ("tcp", "tls", "quic")
"""zenoh's links as ``--opt link`` names them: plain TCP, TLS over TCP, QUIC (TLS 1.3 over
UDP); the agent's descriptor lists the same"""


def zenoh_link(secure: str | None, chosen: str | None) -> str:
    """The link of a zenoh run's endpoints: ``--opt link`` (``chosen``) when given, else tls
    under a TLS mode and tcp otherwise; UsageError where it and ``--secure`` disagree (a
    secured link needs the certificates only a TLS mode makes; a TLS mode secures a link)."""
    from ..errors import UsageError
    if chosen is None:
        return "tls" if secure in TLS_MODES else "tcp"
    if chosen not in ZENOH_LINKS:
        raise UsageError(f"--opt link={chosen}: allowed: {', '.join(ZENOH_LINKS)}")
    if chosen != "tcp" and secure not in TLS_MODES:
        raise UsageError(f"--opt link={chosen}: needs --secure tls or mtls (mwperf makes the "
                         f"certificates a {chosen}/ link needs)")
    if chosen == "tcp" and secure in TLS_MODES:
        raise UsageError(f"--opt link=tcp: not with --secure {secure}, which runs on tls/ or "
                         "quic/ links (drop --opt link, or give link=quic)")
    return chosen


def mode_label(secure: str, opts: "list[str] | tuple[str, ...]") -> str:
    """How a report names a point's mode: ``secure``, with ``+quic`` for a TLS mode over
    zenoh's QUIC link (``--opt link=quic``), which is measured beside its TLS link."""
    links = [o.partition("=")[2].strip() for o in opts if o.partition("=")[0].strip() == "link"]
    return f"{secure}+quic" if secure in TLS_MODES and links[-1:] == ["quic"] else secure


TUNNEL = "wireguard"
"""every packet between the run's emulated hosts through a WireGuard tunnel (security/
wireguard.py): any transport that crosses a link"""

MODES = (*DDS_MODES, *TLS_MODES, TUNNEL)

PROTECTION = {"auth": "NONE", "sign": "SIGN", "encrypt": "ENCRYPT"}
"""the DDS-Security protection kind of rtps, metadata and data under each mode"""

TRANSPORTS = ("cyclonedds", "fastdds", "rustdds")
"""the transports the DDS modes secure (each through its own configuration)"""

IDENTITY_OPT = ("fastdds", "rustdds")
"""the DDS transports whose agent takes its identity as ``--opt security=`` (identity_opt.py);
cyclonedds takes it in its XML configuration (cyclonedds.py)"""


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
