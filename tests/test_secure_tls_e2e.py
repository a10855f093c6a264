"""``--secure tls|mtls`` over zenoh with the real agent (issue 42): zenoh's own TLS link
(rustls), every agent (and the router of client mode) with its own certificate from the run's
CA. A secured run delivers every message the sender counts, over tls/ endpoints, each agent
given its own files, gone with the run — unless zenoh's own TLS link race (eclipse-zenoh/zenoh
#2557: it loses messages or aborts a process, more often under load) struck, which the result
then names (security/zenoh_tls_race.py); and security that holds: beside a secured pair at an
mTLS router, a subscriber without a certificate, one of another CA and a plain tcp/ one get no
session (the agent fails naming the router) while the secured subscriber gets every message;
in peer mode a ping without a certificate is never matched by an mTLS pong. The same over
zenoh's QUIC link (``--opt link=quic``: TLS 1.3 over UDP, quinn; not the TLS link's race)."""

import json
import subprocess
from pathlib import Path

import pytest

from conftest import REAL_AGENT, read_saved, run_mwperf
from secured_runs import every_message_delivered
from mwperf.security.tls import make_tls_pki, tls_opt
from mwperf.security.zenoh_tls_race import CODE as RACE

pytestmark = pytest.mark.agent


def raced(result: dict) -> bool:
    """Whether zenoh's TLS link race struck this run, as the result names it: then the
    messages it did not lose are accounted for (the count stays whole) and TLS carried most."""
    if RACE not in {w["code"] for w in result.get("warnings") or []}:
        return False
    accounting = (result.get("measurement") or {}).get("accounting")
    if accounting is not None:
        assert accounting["received"] + accounting["lost"] == accounting["sent"], accounting
    return True


def mwperf(*args: str) -> subprocess.CompletedProcess[str]:
    return run_mwperf("run", "--no-save", "--transport", "zenoh", "--duration", "1s", "--warmup",
                      "200ms", *args, timeout=120)


@pytest.mark.parametrize(("secure", "mode", "zenoh_mode"), [
    ("tls", "roundtrip", "peer"), ("mtls", "roundtrip", "peer"), ("mtls", "roundtrip", "client"),
    ("tls", "oneway", "client")])
def test_a_secured_run_delivers_every_message(tmp_path: Path, secure: str, mode: str,
                                              zenoh_mode: str) -> None:
    out = tmp_path / "result.json"
    # every message counted: a deep keep-last queue (a ring of 10 drops when the reader is
    # not scheduled)
    done = mwperf("--secure", secure, "--mode", mode, "--rate", "200", "--payload", "256",
                  "--depth", "1000", "--opt", f"mode={zenoh_mode}", "--json-out", str(out))
    result = read_saved(out) if out.exists() else {}
    if not raced(result):
        assert done.returncode == 0, done.stderr
        every_message_delivered(result, secure, mode)
    agents = {a["role"]: a for a in result["agents"]}
    for report in result["agents"]:
        opts = dict(report["config"]["opt"])
        assert opts["tls"].startswith("ca=/") and f"{report['role']}.cert.pem" in opts["tls"]
        assert opts["tls"].endswith(",mtls=on") == (secure == "mtls"), opts
        cert = Path(opts["tls"].split("cert=")[1].split(",")[0])
        assert not cert.exists() and not cert.parent.exists(), cert  # gone with the run
    sender = agents.get("ping" if mode == "roundtrip" else "pub")  # none if the race killed it
    assert sender is not None or raced(result), result.get("status_reason")
    assert sender is None or sender["config"]["connect"].startswith("tls/"), sender


@pytest.mark.parametrize(("secure", "zenoh_mode"), [("tls", "peer"), ("mtls", "client")])
def test_a_quic_run_delivers_every_message_over_quic_endpoints(tmp_path: Path, secure: str,
                                                               zenoh_mode: str) -> None:
    out = tmp_path / "result.json"
    done = mwperf("--secure", secure, "--opt", "link=quic", "--rate", "200", "--payload", "256",
                  "--depth", "1000", "--opt", f"mode={zenoh_mode}", "--json-out", str(out))
    assert done.returncode == 0, done.stderr
    result = read_saved(out)
    every_message_delivered(result, secure, "roundtrip")  # whole: QUIC has not the TLS link's race
    agents = {a["role"]: a for a in result["agents"]}
    endpoint = agents["ping"]["config"]["connect"]
    assert endpoint.startswith("quic/127.0.0.1:"), endpoint
    for report in result["agents"]:
        opts = dict(report["config"]["opt"])
        assert opts["link"] == "quic" and f"{report['role']}.cert.pem" in opts["tls"], opts
    routers = [d for d in result.get("daemons") or [] if d["name"] == "zenoh-router"]
    assert [d["address"].split(":")[0] for d in routers] == (
        ["quic/127.0.0.1"] if zenoh_mode == "client" else []), routers


def test_a_tls_run_across_a_link_is_named_by_its_hosts_address(tmp_path: Path) -> None:
    """Across --link the pong listens on its emulated host's address: its certificate must name
    that address, or the ping's TLS client refuses the handshake (NotValidForName)."""
    from conftest import require_emulation
    require_emulation("--secure tls across --link")
    out = tmp_path / "result.json"
    done = mwperf("--secure", "mtls", "--link", "delay=1ms", "--rate", "100", "--payload", "256",
                  "--depth", "1000", "--json-out", str(out))
    assert done.returncode == 0, done.stderr
    result = read_saved(out) if out.exists() else {}
    if not raced(result):
        assert done.returncode == 0, done.stderr
        accounting = result["measurement"]["accounting"]
        assert accounting["received"] == accounting["sent"] > 50, accounting
    ping = next((a for a in result["agents"] if a["role"] == "ping"), None)
    assert ping is not None or raced(result), result.get("status_reason")
    assert ping is None or ping["config"]["connect"].startswith("tls/10."), ping


def agent(*args: str) -> list[str]:
    return [str(REAL_AGENT), *args[:1], "--transport", "zenoh", "--quiet", "--depth", "1000",
            *args[1:]]


def started(argv: list[str]) -> tuple[subprocess.Popen[str], str]:
    """Start ``argv`` and read its READY line's address."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("READY"):
        proc.kill()
        raise AssertionError((line, proc.communicate()[1]))
    return proc, line.split()[2]


def stop(*procs: subprocess.Popen[str]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(10)


@pytest.mark.parametrize("link", ["tls", "quic"])
def test_beside_a_secured_pair_at_an_mtls_router_no_unauthenticated_subscriber_gets_a_session(
        tmp_path: Path, link: str) -> None:
    ids = make_tls_pki(tmp_path / "pki", ("router", "pub", "sub"), ())
    strangers = make_tls_pki(tmp_path / "other", ("sub",), ())  # another CA's
    router, endpoint = started([str(REAL_AGENT), "router", "--transport", "zenoh", "--listen",
                                f"{link}/127.0.0.1:0", "--opt", tls_opt(ids["router"], True)])
    subs = []
    try:
        assert endpoint.startswith(f"{link}/127.0.0.1:"), endpoint
        base = f"{endpoint}#mwperf-tls-{tmp_path.name}"
        secured, _ = started(agent("sub", "--listen", base, "--opt", "mode=client", "--opt",
                                   tls_opt(ids["sub"], True), "--json",
                                   str(tmp_path / "sub.json")))
        subs.append(secured)
        refused = {
            # the CA only: no certificate to present
            "no certificate": ["--opt", f"tls=ca={ids['sub'].ca}"],
            "another CA's": ["--opt", tls_opt(strangers["sub"], True)],
        }
        for what, opts in refused.items():
            report = tmp_path / f"refused-{len(what)}.json"
            done = subprocess.run(agent("sub", "--listen", base, "--opt", "mode=client", *opts,
                                        "--json", str(report)),
                                  capture_output=True, text=True, timeout=60)
            assert done.returncode == 1 and "zenoh router" in done.stderr, (what, done)
            said = json.loads(report.read_text())  # the failed sub's report: no session
            assert "READY" not in done.stdout and said["status"] == "failed", (what, said)
            assert said["measurement"] is None and "unreachable" in said["status_reason"], said
        if link == "tls":  # a plain client at the TLS router's port (QUIC's is a UDP one)
            plain = subprocess.run(agent("sub", "--listen", base.replace("tls/", "tcp/", 1),
                                         "--opt", "mode=client"),
                                   capture_output=True, text=True, timeout=60)
            assert plain.returncode == 1 and "zenoh router" in plain.stderr, plain
        pub = subprocess.run(agent("pub", "--connect", base, "--opt", "mode=client", "--opt",
                                   tls_opt(ids["pub"], True), "--rate", "200", "--payload",
                                   "256", "--duration", "1s", "--json",
                                   str(tmp_path / "pub.json")),
                             capture_output=True, text=True, timeout=60)
        assert pub.returncode == 0, pub.stderr
        assert secured.wait(30) == 0, secured.stderr.read() if secured.stderr else ""
    finally:
        stop(*subs, router)
    sent = json.loads((tmp_path / "pub.json").read_text())["sent"]
    got = json.loads((tmp_path / "sub.json").read_text())["measurement"]["accounting"]
    assert sent > 100 and got["received"] == sent, (sent, got)


@pytest.mark.parametrize("link", ["tls", "quic"])
def test_an_mtls_pong_never_matches_a_ping_without_a_certificate(tmp_path: Path,
                                                                 link: str) -> None:
    ids = make_tls_pki(tmp_path / "pki", ("ping", "pong"), ())
    pong, address = started(agent("pong", "--listen", f"{link}/127.0.0.1:0", "--opt",
                                  tls_opt(ids["pong"], True)))
    try:
        bare = subprocess.run(agent("ping", "--connect", address, "--opt",
                                    f"tls=ca={ids['ping'].ca}", "--rate", "100", "--duration",
                                    "1s", "--discovery-timeout", "3s"),
                              capture_output=True, text=True, timeout=60)
        assert bare.returncode == 1 and "no subscriber" in bare.stderr, bare
        good = subprocess.run(agent("ping", "--connect", address, "--opt",
                                    tls_opt(ids["ping"], True), "--rate", "100", "--duration",
                                    "1s", "--json", str(tmp_path / "ping.json")),
                              capture_output=True, text=True, timeout=60)
        assert good.returncode == 0, good.stderr
    finally:
        stop(pong)
    accounting = json.loads((tmp_path / "ping.json").read_text())["measurement"]["accounting"]
    assert accounting["received"] == accounting["sent"] > 50, accounting


@pytest.mark.parametrize("link", ["tls", "quic"])
def test_a_tls_endpoint_without_its_files_is_a_usage_error(link: str) -> None:
    done = subprocess.run(agent("pong", "--listen", f"{link}/127.0.0.1:0"), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and f"a {link}/ endpoint needs --opt tls=" in done.stderr, done
