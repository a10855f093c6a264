"""``--secure tls|mtls`` on a graph (issue 42) with the real agent and real daemons: every node
gets its own certificate (mtls) or the run's CA (a broker's client under tls), seen on its
command line while it runs; zenoh's peer links are tls/, a client-mode router, mosquitto and
each node's foxglove server serve TLS with the run's broker certificate; and every edge delivers
what its publisher counted sending (zenoh: unless its TLS link race struck, which the result
then names with the count whole: security/zenoh_tls_race.py)."""

import json
import os
from pathlib import Path

import pytest

from conftest import recording_agent, run_mwperf
from mwperf.graph.node_files import file_name
from mwperf.security.zenoh_tls_race import CODE as RACE

pytestmark = pytest.mark.agent

GRAPH = """name: secured
nodes:
  - name: robot
    publishers: [{topic: /state, rate: 100, payload: 256}]
    subscribers: [{topic: /cmd}]
  - name: base
    subscribers: [{topic: /state}]
    publishers: [{topic: /cmd, rate: 50, payload: 64}]
  - name: local
    subscribers: [{topic: /state}]
"""
NODES = ("robot", "base", "local")


@pytest.mark.parametrize(("transport", "secure", "more"), [
    ("mqtt", "tls", ()), ("mqtt", "mtls", ()), ("zenoh", "mtls", ()),
    ("zenoh", "tls", ("--opt", "mode=client")), ("foxglove", "tls", ()),
    ("zenoh", "mtls", ("--opt", "link=quic")),
    ("zenoh", "tls", ("--opt", "mode=client", "--opt", "link=quic"))])
def test_a_secured_graph_gives_each_node_its_files_and_delivers_every_message(
        tmp_path: Path, transport: str, secure: str, more: tuple[str, ...]) -> None:
    graph = tmp_path / "g.yaml"
    graph.write_text(GRAPH)
    out = tmp_path / "g.json"
    # what each process was given, recorded when it starts (a poll of /proc while the run went
    # on missed processes under the stress script's load): the agent through a wrapper that
    # logs its command line and keeps a copy of its node's spec and of the daemons' files
    # beside it (written before any node starts), then execs the real agent; the daemons'
    # command lines from the result
    kept = tmp_path / "kept"
    wrapper, calls = recording_agent(kept)
    proc = run_mwperf("run", "--no-save", "--graph", str(graph), "--transport", transport,
                      "--secure", secure, *more, "--duration", "1s", "--warmup", "300ms",
                      "--json-out", str(out), env={**os.environ, "MWPERF_AGENT": str(wrapper)},
                      timeout=120)
    assert proc.returncode == 0, proc.stderr
    names = {file_name(n): n for n in NODES}
    seen: dict[str, str] = {}
    specs: dict[str, dict] = {}
    for argv in (call.read_text() for call in calls.iterdir()):
        if argv.startswith("node ") and "--node-spec" in argv:
            spec = Path(argv.split("--node-spec ")[1].split()[0])
            seen[names[spec.name.removesuffix(".spec.json")]] = argv
            specs[names[spec.name.removesuffix(".spec.json")]] = json.loads(
                (kept / spec.name).read_text())
    result = json.loads(out.read_text())
    daemons = [" ".join(d["argv"]) for d in result.get("daemons") or []]
    conf = kept / "daemons" / "mosquitto.conf"
    broker_conf = conf.read_text() if conf.exists() else ""
    assert set(seen) == set(NODES), sorted(seen)
    own = secure == "mtls" or transport == "zenoh"  # a zenoh peer listens: it has its own
    for name, argv in seen.items():
        assert "tls=ca=" in argv and "/ca.pem" in argv, argv[-400:]
        assert (f"/{file_name(name)}.cert.pem" in argv) == own, argv[-400:]
        others = set(names) - {file_name(name)}
        assert not any(f"/{other}.cert.pem" in argv for other in others), argv[-400:]
    if transport == "foxglove":  # each publishing node's server serves wss
        assert sum("--tls-cert" in a and "/broker.cert.pem" in a for a in set(daemons)) == 2
    link = "quic" if "link=quic" in more else "tls"  # zenoh's: its TLS link or QUIC
    if "mode=client" in more:  # the router listens on tls/ (or quic/) with its certificate
        assert any(f"--listen {link}/" in a and "/broker.cert.pem" in a for a in daemons), daemons
    assert result["config"]["secure"] == secure and result["status"] == "complete"
    raced = RACE in {w["code"] for w in result.get("warnings") or []}
    for edge in result["edges"]:
        assert edge["corrupted"] == 0, edge
        if raced and transport == "zenoh":  # named, and the count whole
            assert edge["received"] + edge["lost"] == edge["sent"], edge
        else:
            assert edge["received"] == edge["sent"] > 0, edge
    if transport == "zenoh":  # every subscription's endpoint: tls/ (peers) or the router's
        addresses = [s["address"] for spec in specs.values() for s in spec["subscriptions"]]
        assert addresses and all(a.startswith(f"{link}/") for a in addresses), addresses
    if transport == "mqtt":  # mosquitto's one listener speaks TLS with the run's certificate
        assert "/broker.cert.pem" in broker_conf and "tls_version" in broker_conf, broker_conf
        assert ("require_certificate true" in broker_conf) == (secure == "mtls"), broker_conf
