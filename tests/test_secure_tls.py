"""``--secure tls|mtls`` without an agent (issue 42): the run's TLS certificates (security/tls.py)
are X.509 v3 identities that name the run's addresses (subjectAltName, what a TLS client checks)
and serve both ends (extended key usage), verified with openssl as an independent
implementation; a DDS identity gains neither; the check names a certificate for another address
or of another CA; the agent options (a broker's client presents a certificate only under mTLS),
the router's command line and the broker's TLS listener; and the usage errors."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from conftest import run_mwperf
from mwperf.daemons import foxglove, mosquitto
from mwperf.daemons.zenoh import router_spec
from mwperf.errors import UsageError
from mwperf.security.check import check_tls_identity
from mwperf.security.modes import mode_label, zenoh_link
from mwperf.security.pki import issue, make_ca
from mwperf.security.tls import client_opt, identity, make_tls_pki, tls_opt

ADDRESSES = ("10.1.0.2", "10.1.0.3")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return make_tls_pki(tmp_path_factory.mktemp("tls") / "security", ("ping", "pong", "router"),
                        ADDRESSES)


def _cert(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_each_identity_names_the_runs_addresses_and_serves_both_ends(made: dict) -> None:
    assert set(made) == {"ping", "pong", "router"}
    for name, files in made.items():
        cert = _cert(files.cert)
        assert cert.version == x509.Version.v3
        alt = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert {str(a) for a in alt.get_values_for_type(x509.IPAddress)} == {
            "127.0.0.1", *ADDRESSES}
        assert alt.get_values_for_type(x509.DNSName) == ["localhost"]
        usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        assert set(usages) == {ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH}
        assert files == identity(files.cert.parent, name)
        check_tls_identity(files, ["127.0.0.1", *ADDRESSES])
    assert oct(made["pong"].key.stat().st_mode & 0o777) == "0o600"


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_openssl_verifies_each_certificate_for_its_purpose_and_address(made: dict) -> None:
    for purpose in ("sslserver", "sslclient"):
        done = subprocess.run(["openssl", "verify", "-CAfile", str(made["pong"].ca), "-purpose",
                               purpose, "-verify_ip", ADDRESSES[1], str(made["pong"].cert)],
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0 and done.stdout.strip().endswith(": OK"), done
    wrong = subprocess.run(["openssl", "verify", "-CAfile", str(made["pong"].ca), "-verify_ip",
                            "10.9.9.9", str(made["pong"].cert)], capture_output=True, text=True,
                           check=False)
    assert wrong.returncode != 0


def test_a_dds_identity_names_no_address_and_no_usage() -> None:
    cert = issue(make_ca(), "pong").cert
    for extension in (x509.SubjectAlternativeName, x509.ExtendedKeyUsage):
        with pytest.raises(x509.ExtensionNotFound):
            cert.extensions.get_extension_for_class(extension)


def test_a_certificate_for_another_address_or_of_another_ca_is_named(made: dict) -> None:
    with pytest.raises(UsageError, match=r"pong.cert.pem: the certificate of pong does not name "
                                         r"10\.9\.9\.9 \(it names 10\.1\.0\.2, 10\.1\.0\.3, "
                                         r"127\.0\.0\.1\): a TLS client would refuse it"):
        check_tls_identity(made["pong"], ["10.9.9.9"])
    other = made["ping"].cert.parent.parent / "other"
    stranger = make_tls_pki(other, ("pong",), ADDRESSES)["pong"]
    swapped = type(stranger)("pong", made["pong"].ca, stranger.cert, stranger.key)
    with pytest.raises(UsageError, match="is not signed by the CA"):
        check_tls_identity(swapped, ADDRESSES)


def test_the_agent_option_names_one_sides_files(made: dict) -> None:
    files = made["ping"]
    assert tls_opt(files, mtls=False) == (
        f"tls=ca={files.ca},cert={files.cert},key={files.key}")
    assert tls_opt(files, mtls=True).endswith(f"key={files.key},mtls=on")
    assert client_opt(files, mtls=False) == f"tls=ca={files.ca}"
    assert client_opt(files, mtls=True) == tls_opt(files, mtls=True)


@pytest.mark.parametrize("mtls", [False, True])
def test_the_brokers_one_listener_is_tls_with_the_runs_files(made: dict, mtls: bool) -> None:
    files = made["router"]
    text = mosquitto.config_text(1883, 0, "10.1.0.2", mosquitto.BrokerTls(files, mtls))
    lines = text.splitlines()
    assert [line for line in lines if line.startswith("listener")] == ["listener 1883 10.1.0.2"]
    assert lines[1:6] == [f"cafile {files.ca}", f"certfile {files.cert}",
                          f"keyfile {files.key}", "tls_version tlsv1.2",
                          f"require_certificate {'true' if mtls else 'false'}"]
    # mosquitto reads its certificates after dropping root's privileges: as root it stays root
    assert ("user root" in lines) == (os.geteuid() == 0)
    assert "cafile" not in mosquitto.config_text(1883, 0)


def test_the_foxglove_server_serves_wss_with_the_runs_files(made: dict) -> None:
    files = made["router"]
    argv = foxglove.spec(tls=files).argv
    assert argv[argv.index("--tls-cert"):] == ["--tls-cert", str(files.cert), "--tls-key",
                                               str(files.key)]
    assert "--tls-cert" not in foxglove.spec().argv


def test_the_router_listens_on_its_link_with_its_options() -> None:
    spec = router_spec(Path("/a/mwperf-agent"), None, "10.1.0.2", link="tls",
                       opts=("tls=ca=/s/ca.pem,cert=/s/r.pem,key=/s/r.key",))
    assert spec.argv == ["/a/mwperf-agent", "router", "--transport", "zenoh", "--listen",
                         "tls/10.1.0.2:0", "--opt", "tls=ca=/s/ca.pem,cert=/s/r.pem,key=/s/r.key"]
    assert router_spec(Path("/a/mwperf-agent"), None).argv[-2:] == ["--listen", "tcp/127.0.0.1:0"]
    assert router_spec(Path("/a/mwperf-agent"), None, link="quic").argv[-2:] == [
        "--listen", "quic/127.0.0.1:0"]


@pytest.mark.parametrize(("secure", "chosen", "link"), [
    (None, None, "tcp"), ("tls", None, "tls"), ("mtls", None, "tls"), ("tls", "quic", "quic"),
    ("mtls", "quic", "quic"), ("mtls", "tls", "tls"), (None, "tcp", "tcp"),
    ("encrypt", None, "tcp"), ("wireguard", "tcp", "tcp")])
def test_zenohs_link_follows_secure_and_opt_link(secure: str | None, chosen: str | None,
                                                 link: str) -> None:
    assert zenoh_link(secure, chosen) == link


def test_a_report_names_quic_beside_tls() -> None:
    assert mode_label("tls", ["mode=client", "link=quic"]) == "tls+quic"
    assert mode_label("mtls", ["link=quic"]) == "mtls+quic"
    assert mode_label("tls", ["link=quic", "link=tls"]) == "tls"  # the last one given
    assert mode_label("tls", []) == "tls" and mode_label("auth", ["link=quic"]) == "auth"


@pytest.mark.parametrize(("args", "said"), [
    (("--transport", "udp", "--secure", "mtls"),
     "--secure mtls: not with --transport udp; --secure mtls works with --transport mqtt, "
     "zenoh"),
    (("--transport", "foxglove", "--secure", "mtls"),
     "--secure mtls: not with --transport foxglove: the foxglove-sdk server asks its clients "
     "for no certificate (its rustls server is built with_no_client_auth), so there is no "
     "mutual TLS to measure; use --secure tls"),
    (("--transport", "zenoh", "--secure", "encrypt"),
     "--secure encrypt: not with --transport zenoh; --secure encrypt works with --transport "
     "cyclonedds, fastdds, rustdds"),
    (("--transport", "zenoh", "--secure", "tls", "--opt", "tls=ca=/x.pem"),
     "--secure tls: not together with --opt tls (mwperf makes the certificates)"),
    (("--transport", "zenoh", "--secure", "tlss"),
     "--secure tlss: not a mode; allowed: plain, auth, sign, encrypt, tls, mtls, wireguard"),
    (("--transport", "zenoh", "--opt", "link=quic"),
     "--opt link=quic: needs --secure tls or mtls (mwperf makes the certificates a quic/ link "
     "needs)"),
    (("--transport", "zenoh", "--secure", "wireguard", "--link", "delay=1ms", "--opt",
      "link=tls"),
     "--opt link=tls: needs --secure tls or mtls (mwperf makes the certificates a tls/ link "
     "needs)"),
    (("--transport", "zenoh", "--secure", "mtls", "--opt", "link=tcp"),
     "--opt link=tcp: not with --secure mtls, which runs on tls/ or quic/ links (drop --opt "
     "link, or give link=quic)"),
    (("--transport", "zenoh", "--secure", "tls", "--opt", "link=udp"),
     "--opt link=udp: allowed: tcp, tls, quic"),
    (("--graph", "mont_blanc", "--transport", "zenoh", "--opt", "link=quic"),
     "--opt link=quic: needs --secure tls or mtls (mwperf makes the certificates a quic/ link "
     "needs)"),
])
def test_usage_errors_are_one_line(fake_env: dict, args: tuple[str, ...], said: str) -> None:
    done = run_mwperf("run", "--no-save", *args, env={**fake_env,
                                                       "FAKE_AGENT_TRANSPORTS": "zenoh,foxglove"})
    assert done.returncode == 2, done.stderr
    # a graph's own checks come after the line naming the graph: nothing started before them
    lines = [line for line in done.stderr.strip().splitlines()
             if not line.startswith("mwperf: running graph ")]
    assert lines == [f"mwperf: error: {said}"]


def test_a_graphs_services_are_not_secured_by_tls_yet(fake_env: dict, tmp_path: Path) -> None:
    """A graph's nodes get their TLS files (tests/test_secure_graph_tls_e2e.py); its service
    calls would not: refused, naming them, before anything starts."""
    graph = tmp_path / "g.yaml"
    graph.write_text("name: calls\nnodes:\n  - name: caller\n    clients: [{service: /svc, "
                     "rate: 10, size: 64}]\n  - name: answerer\n    servers: [{service: /svc}]\n")
    done = run_mwperf("run", "--no-save", "--graph", str(graph), "--transport", "zenoh",
                      "--secure", "mtls", env={**fake_env, "FAKE_AGENT_TRANSPORTS": "zenoh"})
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.strip().splitlines()
             if not line.startswith("mwperf: running graph ")]
    assert lines == ["mwperf: error: --secure mtls: not with a graph's services yet (/svc): "
                     "their calls would go over plain links"]
