"""``--secure tls|mtls`` over MQTT with the real agent and a real mosquitto (issue 42): the
broker's one listener is TLS with the run's certificate (under mtls demanding a client
certificate the run's CA signed); the agent's own MQTT client speaks TLS through rustls. A
secured run delivers every message the sender counts and leaves no certificate behind; and
security that holds: at an mTLS broker, a client without a certificate, one of another CA and a
plain one get no session (each fails naming what refused it) while a client with the run's
certificate gets every message; a TLS client refuses a broker whose certificate another CA
signed."""

import json
import subprocess
from pathlib import Path

import pytest

from conftest import REAL_AGENT, read_saved, run_mwperf
from secured_runs import every_message_delivered
from mwperf.daemons import DaemonSet, mosquitto
from mwperf.security.tls import client_opt, make_tls_pki

pytestmark = pytest.mark.agent


def mwperf(*args: str) -> subprocess.CompletedProcess[str]:
    return run_mwperf("run", "--no-save", "--transport", "mqtt", "--duration", "1s", "--warmup",
                      "200ms", *args, timeout=120)


@pytest.mark.parametrize(("secure", "mode"), [
    ("tls", "roundtrip"), ("mtls", "roundtrip"), ("mtls", "oneway")])
def test_a_secured_run_delivers_every_message(tmp_path: Path, secure: str, mode: str) -> None:
    out = tmp_path / "result.json"
    done = mwperf("--secure", secure, "--mode", mode, "--rate", "200", "--payload", "256",
                  "--reliability", "reliable", "--json-out", str(out))
    assert done.returncode == 0, done.stderr
    result = read_saved(out)
    every_message_delivered(result, secure, mode)
    for report in result["agents"]:
        opts = dict(report["config"]["opt"])
        assert opts["tls"].startswith("ca=/"), opts
        # under tls an agent has no certificate to present; under mtls its own
        assert ("cert=/" in opts["tls"]) == (secure == "mtls"), opts
        if secure == "mtls":
            assert f"{report['role']}.cert.pem" in opts["tls"], opts
        ca = Path(opts["tls"].split("ca=")[1].split(",")[0])
        assert not ca.exists() and not ca.parent.exists(), ca  # gone with the run
    (broker,) = result["daemons"]
    assert broker["name"] == "mosquitto" and not broker.get("killed"), broker


def agent(role: str, *args: str) -> list[str]:
    return [str(REAL_AGENT), role, "--transport", "mqtt", "--quiet", *args]


def test_at_an_mtls_broker_only_a_client_with_the_runs_certificate_gets_a_session(
        tmp_path: Path) -> None:
    ids = make_tls_pki(tmp_path / "pki", ("broker", "pub", "sub"), ())
    strangers = make_tls_pki(tmp_path / "other", ("pub",), ())  # another CA's
    with DaemonSet(tmp_path) as daemons:
        broker = daemons.start(lambda: mosquitto.spec(
            tmp_path, 0, tls=mosquitto.BrokerTls(ids["broker"], require_certificate=True)))
        base = f"{broker.address}/mwperf-tls-{tmp_path.name}"
        assert not mosquitto.connack(int(broker.address.split(":")[1]))  # no plain way in
        sub = subprocess.Popen(agent("sub", "--listen", base, "--reliability", "reliable",
                                     "--opt", client_opt(ids["sub"], True), "--json",
                                     str(tmp_path / "sub.json")),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert sub.stdout is not None and sub.stdout.readline().startswith("READY")
            refused = {
                # the CA only: nothing to present when the broker asks
                "no certificate": (f"tls=ca={ids['pub'].ca}", "CertificateRequired"),
                # trusting the broker, but presenting a certificate another CA signed
                "another CA's": (f"tls=ca={ids['pub'].ca},cert={strangers['pub'].cert},"
                                 f"key={strangers['pub'].key}", "UnknownCA"),
            }
            for what, (opt, says) in refused.items():
                done = subprocess.run(agent("pub", "--connect", base, "--opt", opt, "--rate",
                                            "100", "--duration", "1s"),
                                      capture_output=True, text=True, timeout=60)
                assert done.returncode == 1, (what, done)
                assert "TLS" in done.stderr and says in done.stderr, (what, done.stderr)
            plain = subprocess.run(agent("pub", "--connect", base, "--rate", "100",
                                         "--duration", "1s"),
                                   capture_output=True, text=True, timeout=60)
            assert plain.returncode == 1 and "closed the connection at CONNECT" in plain.stderr \
                and "--opt tls" in plain.stderr, plain
            pub = subprocess.run(agent("pub", "--connect", base, "--reliability", "reliable",
                                       "--opt", client_opt(ids["pub"], True), "--rate", "200",
                                       "--payload", "256", "--duration", "1s", "--json",
                                       str(tmp_path / "pub.json")),
                                 capture_output=True, text=True, timeout=60)
            assert pub.returncode == 0, pub.stderr
            assert sub.wait(30) == 0, sub.stderr.read() if sub.stderr else ""
        finally:
            if sub.poll() is None:
                sub.kill()
                sub.wait()
    sent = json.loads((tmp_path / "pub.json").read_text())["sent"]
    got = json.loads((tmp_path / "sub.json").read_text())["measurement"]["accounting"]
    assert sent > 100 and got["received"] == sent, (sent, got)


def test_a_tls_client_refuses_a_broker_another_ca_signed(tmp_path: Path) -> None:
    ids = make_tls_pki(tmp_path / "pki", ("broker",), ())
    strangers = make_tls_pki(tmp_path / "other", ("pub",), ())
    with DaemonSet(tmp_path) as daemons:
        broker = daemons.start(lambda: mosquitto.spec(
            tmp_path, 0, tls=mosquitto.BrokerTls(ids["broker"], require_certificate=False)))
        done = subprocess.run(agent("pub", "--connect", f"{broker.address}/x", "--opt",
                                    client_opt(strangers["pub"], False), "--rate", "100",
                                    "--duration", "1s"),
                              capture_output=True, text=True, timeout=60)
    # (both CAs have one name: the signature is what fails)
    assert done.returncode == 1 and "invalid peer certificate" in done.stderr, done


def test_the_tls_option_names_what_is_wrong(tmp_path: Path) -> None:
    for opt, says, code in (("tls=ca=relative.pem", "not an absolute path", 2),
                            (f"tls=ca={tmp_path}/absent.pem", "absent.pem", 1)):
        done = subprocess.run(agent("pub", "--connect", "127.0.0.1:1/x", "--opt", opt,
                                    "--duration", "1s"),
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == code and says in done.stderr, (opt, done)
