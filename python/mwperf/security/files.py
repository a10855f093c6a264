"""The files of a secured run, made together in one folder: the CA certificate (identity CA and
permissions CA), the mode's governance signed by it, and per identity its certificate, key and
signed permissions."""

from dataclasses import dataclass
from pathlib import Path

from . import smime
from .governance import governance
from .permissions import permissions
from .pki import Issued, issue, make_ca, subject_text


@dataclass(frozen=True)
class Identity:
    """What one participant needs: absolute paths of its files."""

    name: str
    ca: Path
    cert: Path
    key: Path
    governance: Path
    permissions: Path


def make_run_pki(folder: Path, mode: str, names: tuple[str, ...],
                 topics: tuple[str, ...] = ("*",)) -> dict[str, Identity]:
    """Write the PKI of a run in ``folder`` (made, owner-only): one identity per name."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder = folder.resolve()
    ca = make_ca()
    ca_path = folder / "ca.pem"
    ca_path.write_bytes(_pem(ca))
    gov_path = folder / "governance.p7s"
    gov_path.write_bytes(smime.sign(governance(mode), ca))
    made = {}
    for name in names:
        made[name] = write_identity(folder, name, ca, ca_path, gov_path, issue(ca, name), topics)
    return made


def write_identity(folder: Path, name: str, ca: Issued, ca_path: Path, gov_path: Path,
                   issued: Issued, topics: tuple[str, ...] = ("*",)) -> Identity:
    """One identity's certificate, key and permissions (signed by ``ca``) in ``folder``."""
    cert, key = folder / f"{name}.cert.pem", folder / f"{name}.key.pem"
    issued.write(cert, key)
    perm = folder / f"{name}.permissions.p7s"
    perm.write_bytes(smime.sign(permissions(
        subject_text(issued.cert), f"mwperf_{name}", issued.cert.not_valid_before_utc,
        issued.cert.not_valid_after_utc, topics), ca))
    return Identity(name, ca_path, cert, key, gov_path, perm)


def _pem(issued: Issued) -> bytes:
    from cryptography.hazmat.primitives import serialization
    return issued.cert.public_bytes(serialization.Encoding.PEM)
