"""The ``--secure`` modes: DDS-Security's (and the protection each asks the governance document
for) and the network's (a WireGuard tunnel between emulated hosts)."""

DDS_MODES = ("auth", "sign", "encrypt")
"""``auth``: authentication and access control, data and metadata unprotected; ``sign``: every
RTPS message, each writer's metadata and its data signed (GMAC); ``encrypt``: all of them
encrypted (AES-GCM)"""

TUNNEL = "wireguard"
"""every packet between the run's emulated hosts through a WireGuard tunnel (security/
wireguard.py): any transport that crosses a link"""

MODES = (*DDS_MODES, TUNNEL)

PROTECTION = {"auth": "NONE", "sign": "SIGN", "encrypt": "ENCRYPT"}
"""the DDS-Security protection kind of rtps, metadata and data under each mode"""

TRANSPORTS = ("cyclonedds", "fastdds")
"""the transports the DDS modes secure (each through its own configuration)"""


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
