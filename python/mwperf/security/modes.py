"""The ``--secure`` modes for DDS and the protection each asks the governance document for."""

MODES = ("auth", "sign", "encrypt")
"""``auth``: authentication and access control, data and metadata unprotected; ``sign``: every
RTPS message, each writer's metadata and its data signed (GMAC); ``encrypt``: all of them
encrypted (AES-GCM)"""

PROTECTION = {"auth": "NONE", "sign": "SIGN", "encrypt": "ENCRYPT"}
"""the DDS-Security protection kind of rtps, metadata and data under each mode"""

TRANSPORTS = ("cyclonedds", "fastdds")
"""the transports ``--secure`` secures (each through its own configuration)"""


def parse_secure(value: object) -> str | None:
    """``--secure`` as given (None: not asked), checked against MODES."""
    from ..errors import UsageError
    if value is None:
        return None
    mode = str(value).strip()
    if mode not in MODES:
        raise UsageError(f"--secure {mode}: not a mode; allowed: {', '.join(MODES)}")
    return mode
