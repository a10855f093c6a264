"""What is wrong with one identity's files, found before any agent starts: one line naming the
file and the fault (the middleware would otherwise refuse the participant with a code, or
match nothing, and the point would measure nothing).

Checked: each file is there; the certificate is X.509 v3, issued by the CA (its signature
verifies with the CA's key) and valid now; the key is the certificate's; the permissions grant
the certificate's subject, valid now, publishing and subscribing every topic ('*': the run's
topic names are chosen by the listening agent when it starts) in every partition. The S/MIME
signatures themselves are verified by the middleware against the permissions CA.
"""

import datetime
import email
import email.message
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization

from ..errors import UsageError
from .files import Identity

if TYPE_CHECKING:
    from .tls import TlsIdentity


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"--secure: {path}: the {what} is missing") from None
    except OSError as exc:
        raise UsageError(f"--secure: {path}: the {what} cannot be read ({exc.strerror})") from None


def _certificate(path: Path, what: str) -> x509.Certificate:
    try:
        return x509.load_pem_x509_certificate(_read(path, what))
    except ValueError:
        raise UsageError(f"--secure: {path}: the {what} is not a PEM X.509 certificate") from None


def check_identity(identity: Identity, now: datetime.datetime | None = None) -> None:
    """Raise UsageError naming the first file that is wrong and what is wrong with it."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    cert = _certificate_of(identity.name, identity.ca, identity.cert, identity.key, now,
                           "DDS-Security")
    _read(identity.governance, "governance document")
    _grant(identity.permissions, cert, now)


def check_tls_identity(identity: "TlsIdentity", addresses: Sequence[str],
                       now: datetime.datetime | None = None) -> None:
    """A TLS identity (security/tls.py): its certificate as a DDS one's, and it names every
    address in ``addresses`` (a TLS client checks the server's name against the address it
    dialled: a certificate for another name is refused at the handshake)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    cert = _certificate_of(identity.name, identity.ca, identity.cert, identity.key, now, "TLS")
    try:
        named = {str(a) for a in cert.extensions.get_extension_for_class(
            x509.SubjectAlternativeName).value.get_values_for_type(x509.IPAddress)}
    except x509.ExtensionNotFound:
        named = set()
    missing = [a for a in addresses if a not in named]
    if missing:
        raise UsageError(f"--secure: {identity.cert}: the certificate of {identity.name} does "
                         f"not name {', '.join(missing)} (it names {', '.join(sorted(named)) or 'no address'}): "
                         "a TLS client would refuse it")


def _certificate_of(name: str, ca_path: Path, cert_path: Path, key_path: Path,
                    now: datetime.datetime, needs: str) -> x509.Certificate:
    """Identity ``name``'s certificate, checked: v3, signed by the CA, valid ``now``, and
    ``key_path`` its key."""
    ca = _certificate(ca_path, "CA certificate")
    cert = _certificate(cert_path, "identity certificate")
    where = f"--secure: {cert_path}: the identity certificate of {name}"
    if cert.version != x509.Version.v3:
        raise UsageError(f"{where} is X.509 {cert.version.name}; {needs} needs v3")
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        raise UsageError(f"{where} is not signed by the CA {ca_path} "
                         f"({cert.issuer.rfc4514_string()} issued it)") from None
    _valid(where, cert.not_valid_before_utc, cert.not_valid_after_utc, now)
    try:
        key = serialization.load_pem_private_key(_read(key_path, "private key"), None)
    except (ValueError, TypeError):
        raise UsageError(f"--secure: {key_path}: the private key is not an unencrypted PEM "
                         "key") from None
    if _public(key) != _public(cert):
        raise UsageError(f"--secure: {key_path}: the private key is not the key of "
                         f"{cert_path}")
    return cert


def _public(holder: object) -> bytes:
    return holder.public_key().public_bytes(  # type: ignore[attr-defined, no-any-return]
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def _valid(where: str, start: datetime.datetime, end: datetime.datetime,
           now: datetime.datetime) -> None:
    if now < start:
        raise UsageError(f"{where} is not valid before {start:%Y-%m-%d %H:%M:%S} UTC (now "
                         f"{now:%Y-%m-%d %H:%M:%S} UTC: check this machine's clock)")
    if now > end:
        raise UsageError(f"{where} expired at {end:%Y-%m-%d %H:%M:%S} UTC")


def signed_text(data: bytes) -> str:
    """The document inside an S/MIME message (multipart/signed: its first part, the
    ``text/plain`` header taken off); a plain XML file as it is."""
    message = email.message_from_bytes(data)
    if not message.is_multipart():
        return data.decode(errors="replace")
    first = message.get_payload(0)
    body = first.get_payload(decode=True) if isinstance(first, email.message.Message) else b""
    return body.decode(errors="replace") if isinstance(body, bytes) else ""


def _grant(path: Path, cert: x509.Certificate, now: datetime.datetime) -> None:
    where = f"--secure: {path}: the permissions"
    try:
        root = ET.fromstring(signed_text(_read(path, "permissions document")))
    except ET.ParseError as exc:
        raise UsageError(f"{where} are not XML ({exc})") from None
    wanted = _subject_parts(cert.subject.rfc4514_string())
    grants = [g for g in root.iter("grant")
              if _subject_parts(g.findtext("subject_name") or "") == wanted]
    if not grants:
        raise UsageError(f"{where} have no grant for {cert.subject.rfc4514_string()}")
    grant = grants[0]
    start = _stamp(grant.findtext("validity/not_before"))
    end = _stamp(grant.findtext("validity/not_after"))
    if start is None or end is None:
        raise UsageError(f"{where}: grant '{grant.get('name')}' has no readable validity")
    _valid(f"{where} (grant '{grant.get('name')}')", start, end, now)
    for action in ("publish", "subscribe"):
        topics = [t.text or "" for rule in grant.iter("allow_rule")
                  for t in rule.findall(f"{action}/topics/topic")]
        partitions = [p.text or "" for rule in grant.iter("allow_rule")
                      for p in rule.findall(f"{action}/partitions/partition")]
        if "*" not in topics:
            raise UsageError(f"{where}: grant '{grant.get('name')}' does not allow {action} on "
                             f"every topic (it lists {', '.join(topics) or 'none'}; the run's "
                             "topics are named when the listening agent starts: grant '*')")
        if "*" not in partitions:
            raise UsageError(f"{where}: grant '{grant.get('name')}' does not allow {action} in "
                             f"every partition (it lists {', '.join(partitions) or 'none'}; "
                             "grant '*')")


def _subject_parts(text: str) -> frozenset[str]:
    """A distinguished name as a set of KEY=VALUE items (order and spacing aside)."""
    return frozenset(part.strip() for part in text.split(",") if part.strip())


def _stamp(text: str | None) -> datetime.datetime | None:
    if not text:
        return None
    try:
        return datetime.datetime.fromisoformat(text.strip().rstrip("Z")).replace(
            tzinfo=datetime.timezone.utc)
    except ValueError:
        return None
