"""Transports on the control plane's side: what each one is comes from the agent
(``profiles.py``: ``mwperf-agent transports --json``, the Rust descriptors), what Python must do
for it lives in one hook module per transport (``udp.py``, ``ros1.py``, ...; the defaults and
the hooks' contract in ``hooks.py``).

``config.TRANSPORTS`` stays the one list of names Python knows, in side-by-side order: scenarios
are validated and expanded without asking the agent (dry runs, an agent built without some
middleware must still accept their names). tests/test_transport_registry.py checks that it, the
agent's descriptors, the hook modules, the conformance suite and the docs tables agree.
"""

from .hooks import hook
from .profiles import Profile, crossing_transports, profile, profiles

__all__ = ["Profile", "crossing_transports", "hook", "profile", "profiles"]
