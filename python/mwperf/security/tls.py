"""The files of a TLS run (``--secure tls|mtls``): the run's CA and, per agent role (and the
daemon the agents meet at: zenoh's router, the MQTT broker), a certificate and key signed by it, in the point's
scratch folder; and the agent option that names one side's files
(``--opt tls=ca=PATH,cert=PATH,key=PATH[,mtls=on]``, crates/mwperf-transports/src/tls_files.rs).

Each certificate names every address of the run's hosts and ``localhost`` (a TLS client checks
the server's subjectAltName against the address it dialled) and serves both ends (a zenoh peer
listens and connects with one identity): extended key usage serverAuth and clientAuth. Under
``tls`` only the listening side's certificate is checked; under ``mtls`` both are."""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

CA = "ca.pem"
"""the CA's certificate in the run's folder"""
BROKER = "broker"
"""the identity of the daemon the agents meet at: the router a zenoh client-mode run starts
(daemons/zenoh.py), mosquitto (daemons/mosquitto.py), the foxglove-sdk server
(daemons/foxglove.py)"""


@dataclass(frozen=True)
class TlsIdentity:
    """One side's files: absolute paths."""

    name: str
    ca: Path
    cert: Path
    key: Path


def identity(folder: Path, name: str) -> TlsIdentity:
    """Where identity ``name``'s files are in ``folder`` (made by make_tls_pki)."""
    folder = folder.resolve()
    return TlsIdentity(name, folder / CA, folder / f"{name}.cert.pem",
                       folder / f"{name}.key.pem")


def make_tls_pki(folder: Path, names: Sequence[str], addresses: Sequence[str]
                 ) -> dict[str, TlsIdentity]:
    """Write a CA and one identity per name in ``folder`` (made, owner-only), each certificate
    naming ``addresses`` (and 127.0.0.1, localhost)."""
    # cryptography (~0.1 s of CPU to import) only for a secured run, not for every run of the
    # transports that import this module for its names
    from .pki import TLS_USAGES, issue, make_ca
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    ca = make_ca()
    made = {}
    for name in names:
        files = identity(folder, name)
        issue(ca, name, addresses=sorted({"127.0.0.1", *addresses}), names=("localhost",),
              usages=TLS_USAGES).write(files.cert, files.key)
        made[name] = files
    from cryptography.hazmat.primitives import serialization
    identity(folder, "").ca.write_bytes(ca.cert.public_bytes(serialization.Encoding.PEM))
    return made


def tls_opt(files: TlsIdentity, mtls: bool) -> str:
    """The agent option naming ``files``: ``tls=ca=...,cert=...,key=...[,mtls=on]``."""
    return (f"tls=ca={files.ca},cert={files.cert},key={files.key}"
            + (",mtls=on" if mtls else ""))


def client_opt(files: TlsIdentity, mtls: bool) -> str:
    """A client's option (mqtt's: it never listens): the CA to trust, and under mTLS the
    certificate it presents; under TLS alone it has none to present."""
    return tls_opt(files, mtls) if mtls else f"tls=ca={files.ca}"
