"""S/MIME signing of a DDS-Security document by the permissions CA, as the specification asks
(``openssl smime -sign -text`` does the same): a detached signature over the document with a
``text/plain`` MIME header, which the middleware verifies against its permissions CA."""

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.serialization import pkcs7

from .pki import Issued


def sign(document: str, signer: Issued) -> bytes:
    """``document`` as a signed S/MIME message (multipart/signed)."""
    return (pkcs7.PKCS7SignatureBuilder().set_data(document.encode())
            .add_signer(signer.cert, signer.key, hashes.SHA256())
            .sign(serialization.Encoding.SMIME,
                  [pkcs7.PKCS7Options.DetachedSignature, pkcs7.PKCS7Options.Text]))
