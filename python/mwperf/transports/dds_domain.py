"""The DDS domain of mwperf's DDS transports and ROS 2 probe: ``$ROS_DOMAIN_ID`` as a ROS 2 node
started in the same shell would use it, else 0. Measured traffic then stays in the domain the
user's robot and nodes use (and out of the others: what ROS 2 users set it for)."""

import os

from ..errors import UsageError

DOMAIN_ENV = "ROS_DOMAIN_ID"
DOMAIN_MAX = 232
"""highest DDS domain id: the RTPS port formula 7400 + 250 x domain stays below 65536"""


def checked_domain(source: str, text: str) -> int:
    """``text`` as a domain id; UsageError naming ``source`` (a flag or the variable)."""
    if not text.isdigit() or not 0 <= int(text) <= DOMAIN_MAX:
        raise UsageError(f"{source}: must be a DDS domain id 0-{DOMAIN_MAX}, got {text!r}")
    return int(text)


def domain_from_env() -> int:
    """``$ROS_DOMAIN_ID`` (blank or unset: 0); UsageError when it is not a domain id."""
    return checked_domain(f"${DOMAIN_ENV}", os.environ.get(DOMAIN_ENV, "").strip() or "0")
