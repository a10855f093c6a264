"""The security part (``--secure MODE``, issue 42). ``wireguard`` is the network's, not the
agents': emulation/network.py brings the tunnel up with the emulated hosts (security/
wireguard.py); this part only checks it has hosts to join. The DDS modes: before any agent starts, a PKI for the run in
its scratch folder (security/files.py: a CA, an identity per agent role, the mode's governance
and each identity's permissions, signed), each identity checked (security/check.py); then each
agent (on a graph: each node) joins the domain with its own identity, the DDS-Security block merged after the
configuration it would otherwise use (the user's ``--opt config``, else the agent's loopback
one). The TLS modes (``tls``, ``mtls``): a CA and a certificate per agent role (on a graph:
per node) and for the broker, router or servers (security/tls.py), each agent given its own
files (``--opt tls=``), the daemons theirs (transports/zenoh.py, mqtt.py, foxglove.py; a graph's
foxglove servers: graph/run.py). The files go with the scratch folder when the point ends, interrupted
or not (session.scratch_folder, leased)."""

from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..roles import ROLES
from ..security import FOLDER, modes
from .base import P, Part

if TYPE_CHECKING:
    from ..agent import Agent
    from ..point import Point
    from ..security.files import Identity
    from ..security.tls import TlsIdentity
    from .state import PointState



def _text(path: Any) -> str:
    try:
        return str(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return ""


class Secure(Part):
    name = "secure"
    on_graphs = True
    """a graph's nodes each get an identity of their own (a node is a participant)"""

    def __init__(self) -> None:
        self.identities: dict[str, "Identity"] = {}
        self.tls: dict[str, "TlsIdentity"] = {}

    def wanted(self, cfg: "Point") -> bool:
        return getattr(cfg, "secure", None) is not None

    def validate(self, cfg: P, options: dict[str, Any]) -> P:
        mode = getattr(cfg, "secure", None)
        if mode == modes.TUNNEL:
            return _tunnelled(cfg)
        if mode == "mtls" and cfg.transport in modes.NO_MTLS:
            raise UsageError(f"--secure mtls: not with --transport {cfg.transport}: "
                             f"{modes.NO_MTLS[cfg.transport]}")
        if mode in modes.DDS_MODES and cfg.transport in modes.NO_DDS_SECURITY:
            raise UsageError(f"--secure {mode}: not with --transport {cfg.transport}: "
                             f"{modes.NO_DDS_SECURITY[cfg.transport]}")
        secured = modes.transports_of(mode)
        if cfg.transport not in secured:
            raise UsageError(f"--secure {mode}: not with --transport {cfg.transport}; "
                             f"--secure {mode} works with --transport {', '.join(secured)}")
        if mode in modes.TLS_MODES and cfg.option("tls") is not None:
            raise UsageError(f"--secure {mode}: not together with --opt tls (mwperf makes the "
                             "certificates)")
        for flag, given in (("--host", cfg.remote is not None),
                            ("--bridge", getattr(cfg, "bridge", None) is not None),
                            ("--pong relay / --pong-cmd", getattr(cfg, "pong", "agent") != "agent"),
                            ("--opt client=rclpy", getattr(cfg, "client", "agent") != "agent"),
                            ("--opt distro (a ROS 2 distribution's Fast DDS)",
                             cfg.transport == "fastdds" and cfg.option("distro") is not None),
                            ("--opt security (mwperf makes the identities)",
                             cfg.option("security") is not None)):
            if given:
                raise UsageError(f"--secure {mode}: not together with {flag} (yet): only "
                                 "mwperf's own agents on this machine get identities")
        return cfg

    def check(self, cfg: "Point", agent: "Agent") -> None:
        graph = getattr(cfg, "graph", None)
        if graph is None:
            return
        if cfg.secure in modes.TLS_MODES and graph.graph.services():
            raise UsageError(f"--secure {cfg.secure}: not with a graph's services yet "
                             f"({', '.join(graph.graph.services()[:3])}): their calls would "
                             "go over plain links")
        from ..graph.clients import rclpy_nodes
        from ..graph.commands import is_command
        foreign = rclpy_nodes(graph.graph) + [n.name for n in graph.graph.nodes if is_command(n)]
        if foreign and cfg.secure == modes.TUNNEL:
            raise UsageError(f"--secure {cfg.secure}: node '{foreign[0]}' is not mwperf's agent "
                             "(client: rclpy or a command): mwperf does not choose its "
                             "interfaces, and it could cross the link outside the tunnel")
        if foreign:
            raise UsageError(f"--secure {cfg.secure}: node '{foreign[0]}' is not mwperf's agent "
                             "(client: rclpy or a command): only the agent's nodes get "
                             "DDS-Security identities (yet)")

    def start(self, run: "PointState") -> None:
        if run.cfg.secure == modes.TUNNEL:
            return  # the network's: up before this
        if run.cfg.secure in modes.TLS_MODES:
            from ..security.check import check_tls_identity
            from ..security.tls import BROKER, make_tls_pki
            addresses = ["127.0.0.1", *run.place.host_addresses()]
            self.tls = make_tls_pki(run.workdir / FOLDER, (*_participants(run.cfg), BROKER),
                                    addresses)
            for files in self.tls.values():
                check_tls_identity(files, addresses)
            return
        # the PKI's modules (cryptography: ~0.1 s of CPU to import) only for a secured point,
        # not for every mwperf command (each loads the parts)
        from ..security.check import check_identity
        from ..security.files import make_run_pki

        names = _participants(run.cfg)
        self.identities = make_run_pki(run.workdir / FOLDER, run.cfg.secure, names)
        for identity in self.identities.values():
            check_identity(identity)

    def section(self, run: "PointState", result: Any) -> None:
        """``--secure wireguard``: what crossed the link beside the tunnel (link.tunnel.outside,
        security/wireguard.py's ``outside_bytes``) is said as a warning; zenoh over TLS: its
        link's known race, where it showed (security/zenoh_tls_race.py; not its QUIC link,
        another implementation)."""
        if run.cfg.transport == "zenoh" and run.cfg.secure in modes.TLS_MODES:
            from ..security import zenoh_tls_race
            died = {a.name: _text(a.stderr_path) for a in
                    (run.agents.agents if run.agents else []) if (a.exit_code or 0) < 0}
            died |= {d.name: d.log_text() for d in run.daemons.daemons if d.died is not None}
            result.setdefault("warnings", []).extend(zenoh_tls_race.warnings(
                run.cfg.transport, run.cfg.secure, result, died, run.cfg.option("link")))
        tunnel = (result.get("link") or {}).get("tunnel") or {}
        leaked = [o for o in tunnel.get("outside") or [] if o["bytes"] > 0]
        if leaked:
            from ..merge import make_warning
            said = ", ".join(f"{o['bytes']} B from host {o['host']} ({o['link']} "
                             f"{o['direction']})" for o in leaked)
            result.setdefault("warnings", []).append(make_warning(
                "outside-tunnel", f"--secure wireguard: the link carried at least {said} "
                "beyond WireGuard's own packets: some traffic crossed in the clear",
                "a process chose its own interface or address: every process must use its "
                "host's tunnel address (docs/links.md)"))

    def args(self, run: "PointState", role: str) -> list[str]:
        if run.cfg.secure in modes.TLS_MODES:
            from ..security.tls import client_opt, tls_opt
            opt = client_opt if modes.client_only(run.cfg.transport) else tls_opt
            return ["--opt", opt(self.tls[_identity_name(run.cfg, role)],
                                 run.cfg.secure == "mtls")]
        if run.cfg.secure == modes.TUNNEL or run.cfg.transport not in modes.IDENTITY_OPT:
            return []  # cyclonedds: its configuration, in placed_opts
        from ..security.identity_opt import security_opt
        return ["--opt", security_opt(self.identities[_identity_name(run.cfg, role)])]

    def placed_opts(self, run: "PointState", role: str, opts: tuple[str, ...]
                    ) -> tuple[str, ...]:
        """cyclonedds: the configuration the agent would otherwise have (the one its place
        gives it, e.g. a link's unicast peers; else the user's ``--opt config``; else the
        agent's loopback one) with the identity's ``<Security>`` block merged after it. It goes
        last on the command line, so no unsecured configuration can win over it."""
        if run.cfg.secure not in modes.DDS_MODES or run.cfg.transport != "cyclonedds":
            return opts
        from ..security.cyclonedds import merged_config
        from ..transports.cyclonedds import loopback_config

        identity = self.identities[_identity_name(run.cfg, role)]
        given = [o for o in opts if o.startswith("config=")]
        base = (given[-1].removeprefix("config=") if given
                else run.cfg.option("config") or loopback_config(run.agent))
        return (*(o for o in opts if not o.startswith("config=")),
                f"config={merged_config(base, identity)}")


OWN_INTERFACES = {
    "rustdds": "RustDDS binds every interface and discovers by multicast, which a WireGuard "
               "tunnel does not carry",
    "ros2": "the RMW picks its interfaces and discovers by multicast itself, which a "
            "WireGuard tunnel does not carry",
}
"""transports whose middleware would cross the link outside the tunnel (their own interface
choice), and why"""


def _tunnelled(cfg: P) -> P:
    """``--secure wireguard``: emulated hosts to join, nothing that runs elsewhere, and only
    processes mwperf can bind to the tunnel's addresses (anything else would cross the link in
    the clear beside it)."""
    tunnel = f"--secure {modes.TUNNEL}"
    if getattr(cfg, "link", None) is None and getattr(cfg, "topology", None) is None:
        raise UsageError(f"{tunnel}: needs emulated hosts (--link, or a scenario's hosts:): "
                         "the tunnel joins them; on one host everything stays on loopback")
    if cfg.remote is not None:
        raise UsageError(f"{tunnel}: not with --host (yet): the tunnel joins emulated hosts "
                         "only")
    if cfg.transport in OWN_INTERFACES:
        raise UsageError(f"{tunnel}: not with --transport {cfg.transport}: "
                         f"{OWN_INTERFACES[cfg.transport]}; its packets would cross the link "
                         "outside the tunnel")
    for flag, given in (("--pong relay / --pong-cmd", getattr(cfg, "pong", "agent") != "agent"),
                        ("--opt client=rclpy", getattr(cfg, "client", "agent") != "agent")):
        if given:
            raise UsageError(f"{tunnel}: not together with {flag}: mwperf does not choose that "
                             "program's interfaces, and it could cross the link outside the "
                             "tunnel")
    return cfg


def _participants(cfg: Any) -> tuple[str, ...]:
    """Who gets an identity: a stream's agent roles, or a graph's nodes (by their files'
    names: graph/node_files.py)."""
    if cfg.graph is None:
        return tuple(ROLES[cfg.mode])
    return tuple(_identity_name(cfg, node.name) for node in cfg.graph.graph.nodes)


def _identity_name(cfg: Any, role: str) -> str:
    """The identity of agent role or graph node ``role``."""
    if cfg.graph is None:
        return role
    from ..graph.node_files import file_name
    return file_name(role)
