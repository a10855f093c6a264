"""A certificate authority and X.509 v3 identity certificates, made per run (``cryptography``).

Keys are ECDSA P-256 (DDS-Security's builtin PKI-DH accepts it and RSA-2048; EC is the quicker
to make and to handshake). Every certificate is version 3 with basic constraints and key usage,
as DDS-Security's identity verification and TLS stacks require (a v1 certificate is refused).
"""

import datetime
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

TLS_USAGES = (ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH)
"""a TLS identity's extended key usages: one identity both listens and connects (a zenoh peer)"""

ORGANIZATION = "mwperf"
VALIDITY = datetime.timedelta(days=1)
"""a run's certificates are valid one day (from an hour before now: clocks between hosts)"""


@dataclass(frozen=True)
class Issued:
    """A certificate and its private key."""

    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    def write(self, cert_path: Path, key_path: Path) -> None:
        """PEM files, the key readable by its owner alone."""
        cert_path.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))
        key_path.touch(mode=0o600)
        key_path.write_bytes(self.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption()))


def subject(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORGANIZATION)])


def subject_text(cert: x509.Certificate) -> str:
    """The certificate's subject as a permissions document's ``subject_name`` states it: its
    RFC 4514 string, in the order OpenSSL prints it (Fast DDS compares the two in order;
    Cyclone DDS in any order)."""
    return cert.subject.rfc4514_string()


def make_ca(common_name: str = "mwperf run CA", now: datetime.datetime | None = None) -> Issued:
    """A self-signed CA (identity CA and permissions CA alike)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = subject(common_name)
    start = (now or datetime.datetime.now(datetime.timezone.utc)) - datetime.timedelta(hours=1)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(start + VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, key_cert_sign=True, crl_sign=True,
                                         encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                           critical=False)
            .sign(key, hashes.SHA256()))
    return Issued(cert, key)


def issue(ca: Issued, common_name: str, *, not_before: datetime.datetime | None = None,
          not_after: datetime.datetime | None = None, addresses: Sequence[str] = (),
          names: Sequence[str] = (),
          usages: Sequence[x509.ObjectIdentifier] = ()) -> Issued:
    """An identity certificate for ``common_name`` signed by ``ca`` (the validity may be given:
    tests make expired ones). A TLS identity also names the addresses and host names it is
    reached at (subjectAltName: a TLS client checks the server's against the address it dialled;
    the common name is not looked at) and its ``usages`` (extended key usage); a DDS identity
    has neither."""
    key = ec.generate_private_key(ec.SECP256R1())
    start = not_before or ca.cert.not_valid_before_utc
    end = not_after or ca.cert.not_valid_after_utc
    builder = x509.CertificateBuilder()
    if addresses or names:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address(a)) for a in addresses]
            + [x509.DNSName(n) for n in names]), critical=False)
    if usages:
        builder = builder.add_extension(x509.ExtendedKeyUsage(list(usages)), critical=False)
    cert = (builder.subject_name(subject(common_name))
            .issuer_name(ca.cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False,
                                         key_agreement=True, key_cert_sign=False, crl_sign=False,
                                         encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                ca.key.public_key()), critical=False)
            .sign(ca.key, hashes.SHA256()))
    return Issued(cert, key)
