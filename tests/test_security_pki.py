"""The per-run DDS-Security PKI (python/mwperf/security/): X.509 v3 certificates issued by the
run's CA, governance and permissions whose S/MIME signatures verify against that CA (checked
with openssl, an independent implementation), the protection kinds of each mode, and the check
that names the file and what is wrong with it (missing, expired, another CA's, a key not the
certificate's, a grant without the topic or partition)."""

import datetime
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from cryptography import x509

from mwperf.errors import UsageError
from mwperf.security import smime
from mwperf.security.check import check_identity, signed_text
from mwperf.security.cyclonedds import merged_config
from mwperf.security.files import make_run_pki, write_identity
from mwperf.security.modes import PROTECTION
from mwperf.security.permissions import permissions
from mwperf.security.pki import issue, make_ca, subject_text

OPENSSL = shutil.which("openssl")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return make_run_pki(tmp_path_factory.mktemp("pki") / "security", "sign", ("ping", "pong"))


def test_certificates_are_v3_issued_by_the_ca(pki: dict) -> None:
    ca = x509.load_pem_x509_certificate(pki["ping"].ca.read_bytes())
    assert ca.version == x509.Version.v3
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    for name, identity in pki.items():
        cert = x509.load_pem_x509_certificate(identity.cert.read_bytes())
        assert cert.version == x509.Version.v3
        assert cert.subject.rfc4514_string() == f"O=mwperf,CN={name}"
        cert.verify_directly_issued_by(ca)
        assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert oct(pki["ping"].key.stat().st_mode & 0o777) == "0o600"


@pytest.mark.skipif(OPENSSL is None, reason="openssl not installed")
def test_smime_signatures_verify_against_the_ca_with_openssl(pki: dict, tmp_path: Path) -> None:
    identity = pki["pong"]
    for document in (identity.governance, identity.permissions):
        done = subprocess.run([OPENSSL, "smime", "-verify", "-text", "-CAfile", str(identity.ca),
                               "-in", str(document)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("<?xml") and "<dds" in done.stdout
        assert done.stdout == signed_text(document.read_bytes()).replace("\r\n", "\n")
    other = make_ca("another CA")
    (tmp_path / "other.pem").write_bytes(other.cert.public_bytes(
        __import__("cryptography.hazmat.primitives.serialization",
                   fromlist=["Encoding"]).Encoding.PEM))
    done = subprocess.run([OPENSSL, "smime", "-verify", "-text", "-CAfile",
                           str(tmp_path / "other.pem"), "-in", str(identity.permissions)],
                          capture_output=True, text=True)
    assert done.returncode != 0  # signed by the run's CA, not any CA


@pytest.mark.parametrize("mode", ["auth", "sign", "encrypt"])
def test_governance_protection_kinds_per_mode(tmp_path: Path, mode: str) -> None:
    identity = make_run_pki(tmp_path, mode, ("sub",))["sub"]
    root = ET.fromstring(signed_text(identity.governance.read_bytes()))
    rule = root.find("domain_access_rules/domain_rule")
    assert rule is not None
    expected = {"auth": "NONE", "sign": "SIGN", "encrypt": "ENCRYPT"}[mode]
    assert PROTECTION[mode] == expected
    assert rule.findtext("rtps_protection_kind") == expected
    assert rule.findtext("topic_access_rules/topic_rule/metadata_protection_kind") == expected
    assert rule.findtext("topic_access_rules/topic_rule/data_protection_kind") == expected
    assert rule.findtext("allow_unauthenticated_participants") == "false"
    assert rule.findtext("enable_join_access_control") == "true"


def test_permissions_grant_every_topic_and_partition_to_the_subject(pki: dict) -> None:
    root = ET.fromstring(signed_text(pki["ping"].permissions.read_bytes()))
    grant = root.find("permissions/grant")
    assert grant is not None and grant.findtext("subject_name") == "O=mwperf,CN=ping"
    for action in ("publish", "subscribe"):
        assert grant.findtext(f"allow_rule/{action}/topics/topic") == "*"
        assert grant.findtext(f"allow_rule/{action}/partitions/partition") == "*"
    assert grant.findtext("default") == "DENY"


def test_a_made_identity_passes_the_check(pki: dict) -> None:
    for identity in pki.values():
        check_identity(identity)


def test_a_missing_certificate_is_named(pki: dict, tmp_path: Path) -> None:
    gone = replace(pki["ping"], cert=tmp_path / "nowhere.pem")
    with pytest.raises(UsageError, match=rf"^--secure: {tmp_path}/nowhere.pem: the identity "
                       "certificate is missing$"):
        check_identity(gone)


def _issued(tmp_path: Path, **validity: datetime.datetime) -> tuple:
    ca = make_ca()
    ca_path = tmp_path / "ca.pem"
    ca_path.write_bytes(ca.cert.public_bytes(
        __import__("cryptography.hazmat.primitives.serialization",
                   fromlist=["Encoding"]).Encoding.PEM))
    gov = tmp_path / "governance.p7s"
    gov.write_bytes(b"x")
    return ca, ca_path, gov, issue(ca, "pub", **validity)


def test_an_expired_certificate_is_named(tmp_path: Path) -> None:
    now = datetime.datetime.now(datetime.timezone.utc)
    ca, ca_path, gov, old = _issued(tmp_path, not_before=now - datetime.timedelta(days=3),
                                    not_after=now - datetime.timedelta(days=2))
    identity = write_identity(tmp_path, "pub", ca, ca_path, gov, old)
    with pytest.raises(UsageError, match=rf"^--secure: {identity.cert}: the identity "
                       r"certificate of pub expired at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$"):
        check_identity(identity)


def test_a_certificate_of_another_ca_is_named(pki: dict) -> None:
    stranger = replace(pki["ping"], ca=pki["ping"].ca.parent / "other-ca.pem")
    stranger.ca.write_bytes(make_ca("another CA").cert.public_bytes(
        __import__("cryptography.hazmat.primitives.serialization",
                   fromlist=["Encoding"]).Encoding.PEM))
    with pytest.raises(UsageError, match="is not signed by the CA .*other-ca.pem"):
        check_identity(stranger)


def test_a_key_of_another_identity_is_named(pki: dict) -> None:
    swapped = replace(pki["ping"], key=pki["pong"].key)
    with pytest.raises(UsageError, match=rf"{pki['pong'].key}: the private key is not the key "
                       "of .*ping.cert.pem"):
        check_identity(swapped)


def test_permissions_without_the_topic_are_named(tmp_path: Path) -> None:
    ca, ca_path, gov, issued = _issued(tmp_path)
    identity = write_identity(tmp_path, "pub", ca, ca_path, gov, issued, topics=("rt/chatter",))
    with pytest.raises(UsageError, match=rf"^--secure: {identity.permissions}: the permissions: "
                       "grant 'mwperf_pub' does not allow publish on every topic \\(it lists "
                       "rt/chatter;"):
        check_identity(identity)


def test_permissions_for_another_subject_are_named(tmp_path: Path) -> None:
    ca, ca_path, gov, issued = _issued(tmp_path)
    identity = write_identity(tmp_path, "pub", ca, ca_path, gov, issued)
    start, end = issued.cert.not_valid_before_utc, issued.cert.not_valid_after_utc
    identity.permissions.write_bytes(smime.sign(permissions(subject_text(issue(ca, "sub").cert), "g", start, end),
                                                ca))
    with pytest.raises(UsageError, match="the permissions have no grant for O=mwperf,CN=pub"):
        check_identity(identity)


def test_the_security_block_goes_after_the_base_configuration(pki: dict) -> None:
    text = merged_config("<CycloneDDS><Domain/></CycloneDDS>", pki["ping"])
    base, block = text.split(",", 1)
    assert base == "<CycloneDDS><Domain/></CycloneDDS>"
    assert f"<IdentityCertificate>file:{pki['ping'].cert}</IdentityCertificate>" in block
    assert f"<Permissions>file:{pki['ping'].permissions}</Permissions>" in block
