"""--wire-bytes end to end, against exact ground truth: a UDP message is one IP packet of
payload + 56 (mwperf header) + 28 (IPv4 + UDP headers) bytes each way, so every phase's count is
known to the byte and to the packet (the warm-up's messages, the first-contact probe in setup,
nothing while idle). A middleware (Cyclone DDS) costs more than its messages: discovery in
setup, heartbeats while idle. Bad combinations are usage errors naming the flag.
"""
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import as_v2, read_saved, require_emulation, run_mwperf

from mwperf.schema import validation_error

pytestmark = pytest.mark.agent

PAYLOAD = 64
UDP_PACKET = PAYLOAD + 56 + 28


@pytest.fixture(autouse=True)
def _needs_namespaces() -> None:
    require_emulation("--wire-bytes tests")


def run(env: dict[str, str], tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    out = tmp_path / "result.json"
    out.unlink(missing_ok=True)
    done = run_mwperf("run", "--wire-bytes", "--json-out", str(out), "--no-save", *args, env=env,
                      timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    if not out.is_file():
        return done.returncode, {}, done.stderr
    result = read_saved(out)
    assert validation_error(as_v2(result), "run-result") is None
    return done.returncode, result, done.stdout


def test_udp_is_payload_plus_84_bytes_per_message_to_the_byte(leased_env: dict[str, str],
                                                              tmp_path: Path) -> None:
    """At 50 Hz: a packet counts in the phase its release time falls in, so a warm-up reply
    still on its way when the first measured message is due counts as steady (docs/costs.md,
    Boundaries); at 200 Hz a CI run's pong, not scheduled for 5 ms beside the other tests, once
    made it 301 replies (148.493 B/msg). 20 ms is beyond any scheduling delay here, and the
    test runs alone (conftest SERIAL)."""
    code, result, stdout = run(leased_env, tmp_path, "--transport", "udp", "--rate", "50",
                               "--payload", str(PAYLOAD), "--count", "300", "--warmup",
                               "200ms", "--idle", "500ms")
    assert code == 0, stdout
    wire = result["wire"]
    sent = result["measurement"]["accounting"]["sent"]
    warmup = result["measurement"]["accounting"]["warmup_sent"]
    assert sent == wire["messages"] == 300 and warmup > 0
    assert wire["message_bytes"] == PAYLOAD + 56
    assert wire["up_bytes_per_message"] == wire["down_bytes_per_message"] == UDP_PACKET
    (link,) = wire["links"]
    assert (link["from"], link["to"], link["truncated"]) == ("a", "b", 0)
    for way in ("up", "down"):
        d = link[way]
        phases = d["phases"]
        assert phases["steady"] == {**phases["steady"], "bytes": sent * UDP_PACKET,
                                    "packets": sent}
        assert phases["warmup"]["packets"] == warmup
        assert phases["warmup"]["bytes"] == warmup * UDP_PACKET
        assert phases["idle"]["packets"] == 0 and 0.45 < phases["idle"]["seconds"] < 1.5
        assert d["packets_per_message"] == 1.0
        assert d["overhead"] == round(UDP_PACKET / (PAYLOAD + 56), 4)
        # setup: the first-contact probe(s) and their echo, full-size messages too
        assert phases["setup"]["packets"] >= 1
        assert phases["setup"]["bytes"] == phases["setup"]["packets"] * UDP_PACKET
        assert phases["teardown"]["packets"] == 0
    assert "wire          a\u2192b 148 B/msg (1 pkt" in stdout


def test_cyclonedds_pays_for_discovery_and_heartbeats(leased_env: dict[str, str],
                                                      tmp_path: Path) -> None:
    code, result, stdout = run(leased_env, tmp_path, "--transport", "cyclonedds", "--rate",
                               "100", "--payload", str(PAYLOAD), "--duration", "2s", "--idle",
                               "1500ms")
    assert code == 0, stdout
    wire = result["wire"]
    # RTPS wraps each sample (header, DATA submessage, inline QoS...): more than the UDP packet
    assert wire["up_bytes_per_message"] > UDP_PACKET
    assert wire["down_bytes_per_message"] > UDP_PACKET
    assert wire["setup_bytes"] > 1000  # SPDP/SEDP discovery of the participants and endpoints
    # the idle phase's rate is its bytes over its time, both directions together. Not asserted
    # above 0: Cyclone heartbeats only while a reliable writer has unacknowledged samples, and
    # announces its participant (SPDP) every 30 s by default, so 1.5 s of idle can rightly be
    # silent (it was, beside two busy loops)
    (link,) = wire["links"]  # --link alone: the one wire between the agents
    idles = [link[way]["phases"]["idle"] for way in ("up", "down")]
    assert all(idle["seconds"] > 0.45 for idle in idles), idles
    assert wire["idle_bytes_per_s"] == pytest.approx(
        sum(idle["bytes"] / idle["seconds"] for idle in idles), abs=0.2), idles


def test_a_transport_on_one_machine_says_nothing_crossed_a_wire(
        leased_env: dict[str, str], tmp_path: Path) -> None:
    code, result, stdout = run(leased_env, tmp_path, "--transport", "uds", "--rate", "100",
                               "--duration", "300ms")
    assert code == 0, stdout
    assert result["wire"]["links"] == [] and "link" not in result
    assert "uds stays on one machine" in result["wire"]["status"]
    assert "wire          uds stays on one machine" in stdout


@pytest.mark.parametrize("args, named", [
    (("--transport", "udp", "--link-backend", "netem"), "--link-backend"),
    (("--transport", "udp", "--idle", "soon"), "--idle"),
])
def test_bad_combinations_are_usage_errors(leased_env: dict[str, str], tmp_path: Path,
                                           args: tuple[str, ...], named: str) -> None:
    code, result, stderr = run(leased_env, tmp_path, *args)
    assert code == 2 and not result
    assert named in stderr


def test_a_graphs_wire_counts_the_edges_across_hosts(leased_env: dict[str, str],
                                                     tmp_path: Path) -> None:
    """A graph with a node on each host: the sensor's UDP messages cross the link as packets of
    payload + 84 bytes, by the graph's own schedule (its go instant, warm-up, duration and
    linger); the listener beside the sensor on host a adds nothing to the wire, the listener on
    b sends nothing back. Bounds from the edge's own counts: every measured message crossed in
    the steady phase, and besides them at most the warm-up's messages (one released after the
    measured phase began counts as steady); every packet of the measured phases is a message."""
    graph = tmp_path / "g.yaml"
    graph.write_text(f"name: across\nnodes:\n"
                     f"  - name: sensor\n    host: a\n"
                     f"    publishers: [{{topic: /raw, rate: 50, payload: {PAYLOAD}}}]\n"
                     f"  - name: near\n    host: a\n    subscribers: [{{topic: /raw}}]\n"
                     f"  - name: far\n    host: b\n    subscribers: [{{topic: /raw}}]\n")
    out = tmp_path / "graph.json"
    done = run_mwperf("run", "--graph", str(graph), "--transport", "udp", "--wire-bytes",
                      "--duration", "2s", "--warmup", "200ms", "--no-save", "--json-out",
                      str(out), env=leased_env, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert validation_error(result, "result") is None
    edges = {e["to"]: e for e in result["edges"]}
    wire = result["wire"]
    assert wire["messages"] == edges["far"]["sent"] > 0 and wire["message_bytes"] == PAYLOAD + 56
    (link,) = wire["links"]
    assert (link["from"], link["to"], link["truncated"]) == ("a", "b", 0)
    up, down = link["up"]["phases"], link["down"]["phases"]
    warm = up["warmup"]["packets"]
    assert edges["far"]["sent"] <= up["steady"]["packets"] <= edges["far"]["sent"] + warm
    for phase in ("warmup", "steady"):
        assert up[phase]["bytes"] == up[phase]["packets"] * UDP_PACKET, phase
        assert down[phase]["packets"] == 0, phase
    assert "wire" in done.stdout
