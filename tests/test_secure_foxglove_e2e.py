"""``--secure tls`` over foxglove with the real agent and the real foxglove-sdk server (issue
42): the server serves wss with the run's certificate; the agent's own WebSocket client speaks
TLS through rustls. A secured run delivers every message the sender counts and leaves no
certificate behind; the open (the TLS handshake is in it) is in the result; a client that does
not trust the server's CA, or one speaking plain WebSocket to it, gets no session and says why;
``--secure mtls`` is refused before anything starts (the SDK's server asks for no client
certificate)."""

import subprocess
from pathlib import Path

import pytest

from conftest import REAL_AGENT, read_saved, run_mwperf
from secured_runs import every_message_delivered
from mwperf.daemons import DaemonSet, foxglove
from mwperf.security.tls import client_opt, make_tls_pki

pytestmark = pytest.mark.agent


def mwperf(*args: str) -> subprocess.CompletedProcess[str]:
    return run_mwperf("run", "--no-save", "--transport", "foxglove", "--duration", "1s", "--warmup",
                      "200ms", *args, timeout=120)


@pytest.mark.parametrize("mode", ["roundtrip", "oneway"])
def test_a_wss_run_delivers_every_message(tmp_path: Path, mode: str) -> None:
    out = tmp_path / "result.json"
    done = mwperf("--secure", "tls", "--mode", mode, "--rate", "200", "--payload", "256",
                  "--json-out", str(out))
    assert done.returncode == 0, done.stderr
    result = read_saved(out)
    every_message_delivered(result, "tls", mode)
    for report in result["agents"]:
        opts = dict(report["config"]["opt"])
        assert opts["tls"].startswith("ca=/") and "cert=" not in opts["tls"], opts
        ca = Path(opts["tls"].split("ca=")[1].split(",")[0])
        assert not ca.exists() and not ca.parent.exists(), ca  # gone with the run
    (server,) = result["daemons"]
    assert server["name"] == foxglove.NAME and "--tls-cert" in server["argv"], server
    # the sender's open: TCP, the TLS handshake and the WebSocket upgrade, before the match
    assert result["discovery"]["open_ns"] > 0, result["discovery"]


def test_mtls_is_refused_naming_why() -> None:
    done = mwperf("--secure", "mtls")
    assert done.returncode == 2 and "asks its clients for no certificate" in done.stderr, done


def agent(role: str, *args: str) -> list[str]:
    return [str(REAL_AGENT), role, "--transport", "foxglove", "--quiet", *args]


def test_a_client_that_does_not_trust_the_server_or_speaks_plain_gets_no_session(
        tmp_path: Path) -> None:
    ids = make_tls_pki(tmp_path / "pki", ("broker",), ())
    strangers = make_tls_pki(tmp_path / "other", ("pub",), ())  # another CA's
    with DaemonSet(tmp_path) as daemons:
        server = daemons.start(lambda: foxglove.spec(tls=ids["broker"]))
        base = f"{server.address}/mwperf-tls-{tmp_path.name}"
        for what, opts, says in (
                # (both CAs have one name: the signature is what fails)
                ("another CA's", ["--opt", client_opt(strangers["pub"], False)],
                 "invalid peer certificate"),
                ("plain", [], "closed during the WebSocket handshake (a wss server?")):
            done = subprocess.run(agent("pub", "--connect", base, *opts, "--rate", "100",
                                        "--duration", "1s"),
                                  capture_output=True, text=True, timeout=60)
            assert done.returncode == 1 and says in done.stderr, (what, done)
