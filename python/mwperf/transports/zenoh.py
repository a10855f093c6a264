"""zenoh: peer mode listens on a free port of the listening host; client mode (``--opt
mode=client``) first starts a router (the agent itself, ``mwperf-agent router``), where several
subscribers can meet a pub (in peer mode a pub reaches only the peer it connects to)."""

from ..agent import Agent
from ..daemons import zenoh as router
from ..errors import RunError, UsageError
from ..security import FOLDER
from ..security.modes import zenoh_link
from ..security.tls import BROKER, identity, tls_opt
from .hooks import DoctorChecks, Hooks, Plan, Setup


def prepare(setup: Setup) -> Plan:
    """Peer mode: the listening agent's endpoint; client mode: the router's. ``--secure
    tls|mtls``: tls/ endpoints (quic/ with ``--opt link=quic``), the router with its own
    certificate (security/tls.py, made by the secure part before this)."""
    secure = getattr(setup.cfg, "secure", None)
    link = zenoh_link(secure, setup.cfg.option("link"))
    if setup.cfg.option("mode") == "client":
        opts = ()
        if link != "tcp":
            files = identity(setup.workdir / FOLDER, BROKER)
            opts = (tls_opt(files, secure == "mtls"),)
        started = setup.daemons.start(lambda: router.router_spec(
            setup.agent.path, _agent_version(setup.agent), *setup.where("zenohd"),
            link=link, opts=opts))
        return Plan(started.address)
    return Plan(f"{link}/{setup.server}:0")


def check_subscribers(point: object, flag: str) -> None:
    if point.option("mode") != "client":  # type: ignore[attr-defined]
        raise UsageError(f"{flag} with zenoh needs --opt mode=client (subscribers and pub meet "
                         f"at a router); in peer mode the pub reaches only the first subscriber")


def doctor(check: DoctorChecks) -> list:
    return [check.built_in("zenoh", "zenoh crate; its client-mode router is the agent itself")]


def _agent_version(agent: Agent) -> str | None:
    try:
        return agent.version()
    except RunError:
        return None


HOOKS = Hooks(prepare=prepare, doctor=doctor, check_subscribers=check_subscribers)
