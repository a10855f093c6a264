"""A zenoh router for client mode, from the agent itself (``mwperf-agent router``): the same zenoh
build as the agents, no second installation. It prints ``READY zenoh-router <endpoint>``.
"""

import re
from collections.abc import Sequence
from pathlib import Path

from .base import DaemonProcess, DaemonSpec

READY = re.compile(r"^READY zenoh-router (\S+)\s*$", re.MULTILINE)


def router_spec(agent_path: Path, version: str | None, host: str = "127.0.0.1",
                netns: Path | None = None, link: str = "tcp",
                opts: Sequence[str] = ()) -> DaemonSpec:
    """The router listening on a free port of ``host`` (port 0: it prints the real one), in
    namespace ``netns`` (an emulated host's) when given; ``link`` tcp, tls or quic (``opts``: the
    router's ``--opt tls=`` files, security/tls.py)."""

    def ready(daemon: DaemonProcess) -> bool:
        found = READY.search(daemon.log_text())
        if found:
            daemon.address = found.group(1)
        return found is not None

    return DaemonSpec(name="zenoh-router",
                      argv=[str(agent_path), "router", "--transport", "zenoh",
                            "--listen", f"{link}/{host}:0",
                            *(arg for opt in opts for arg in ("--opt", opt))], netns=netns,
                      package="(build mwperf-agent with the zenoh feature: make build)",
                      ready=ready, version=lambda d: version)
