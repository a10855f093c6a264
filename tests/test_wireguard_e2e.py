"""``--secure wireguard`` end to end: a real wireguard-go tunnel between two emulated hosts.
Ground truth: every message the sender counts arrives; the handshake takes at least the link's
injected round trip; each packet on the link is a WireGuard packet of an exactly known size (a
UDP message of P bytes is IP(20) + UDP(8) + WireGuard header (16) + the inner packet padded to
16 bytes + tag (16)); and every byte the link emulator forwarded is one WireGuard itself counts
sending (its counter + 28 bytes of IP and UDP per packet): nothing crossed around the tunnel.
ROS 1 (which has no security of its own) and a graph run through it; Ctrl-C leaves no
wireguard-go behind; --layers says why the link is not split."""

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import alive, children, read_saved, require_emulation, run_mwperf

pytestmark = pytest.mark.agent

PAYLOAD = 64
OUTER = 20 + 8
"""the outer IPv4 + UDP headers of a WireGuard packet"""


def wireguard_packet(inner: int) -> int:
    """A WireGuard data packet on the link carrying an ``inner`` byte IP packet (MTU above it)."""
    return OUTER + 16 + (inner + 15) // 16 * 16 + 16


@pytest.fixture(autouse=True)
def _needs_namespaces() -> None:
    require_emulation("--secure wireguard tests", "wireguard-go")


def command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def run(env: dict[str, str], tmp_path: Path, *args: str) -> tuple[dict[str, Any], str]:
    out = tmp_path / "result.json"
    # the userspace emulator on every kernel: its counters are per IP packet (netem's are not)
    done = run_mwperf("run", "--secure", "wireguard", "--link-backend", "userspace", "--no-save",
                      "--json-out", str(out), *args, env=env, timeout=180)
    assert done.returncode == 0, done.stderr
    return read_saved(out), done.stdout


def assert_all_wireguard(link: dict[str, Any]) -> None:
    """Each direction: the emulator forwarded exactly the bytes WireGuard counts sending that
    way (read once the tunnel was down: final), plus the outer headers of each packet: no
    packet crossed outside the tunnel."""
    tunnel = link["tunnel"]
    sent = {(p["host"], p["peer"]): p["tx_bytes"] for p in tunnel["peers"]}
    received = {(p["peer"], p["host"]): p["rx_bytes"] for p in tunnel["peers"]}
    for way, ends in (("up", ("a", "b")), ("down", ("b", "a"))):
        counters = link["emulator"][way]
        assert counters["received"] == counters["forwarded"] > 0, counters  # nothing lost
        assert counters["forwarded_bytes"] == sent[ends] + OUTER * counters["forwarded"], (
            way, counters, tunnel)
        # what one side sent, the other took in (but for what was in flight when it was read)
        assert received[ends] <= sent[ends], tunnel
    # the product's own check of the same (security/wireguard.py outside_bytes): nothing beside
    assert tunnel["outside"] and all(o["bytes"] == 0 for o in tunnel["outside"]), tunnel


def test_udp_through_the_tunnel_every_packet_wireguards(leased_env: dict[str, str],
                                                        tmp_path: Path) -> None:
    result, stdout = run(leased_env, tmp_path, "--transport", "udp", "--link", "delay=5ms",
                         "--wire-bytes", "--rate", "50", "--payload", str(PAYLOAD),
                         "--duration", "2s", "--warmup", "200ms")
    accounting = result["measurement"]["accounting"]
    assert accounting["received"] == accounting["sent"] == 100, accounting
    link = result["link"]
    tunnel = link["tunnel"]
    assert tunnel["kind"] == "wireguard" and tunnel["mtu"] == 1500 - 60
    (handshake,) = tunnel["handshakes"]
    assert (handshake["from"], handshake["to"]) == ("a", "b")
    assert handshake["ms"] >= 10.0, handshake  # the initiation and its response: 2 x 5 ms
    # the agents met at the tunnel's addresses, not the links'
    addresses = {h: v["address"] for h, v in link["hosts"].items()}
    assert set(tunnel["addresses"].values()).isdisjoint(addresses.values())
    assert_all_wireguard(link)
    # a message: payload + mwperf's 56-byte header + IP and UDP inside, wrapped
    packet = wireguard_packet(PAYLOAD + 56 + OUTER)
    assert packet == 220
    (wire,) = result["wire"]["links"]
    for way in ("up", "down"):
        steady = wire[way]["phases"]["steady"]
        # one packet per message; a warm-up reply may land in the steady phase (wire.py)
        assert steady["packets"] >= 100 and steady["bytes"] == steady["packets"] * packet, steady
    assert "security      WireGuard tunnel between the hosts" in stdout


def test_ros1_through_the_tunnel(leased_env: dict[str, str], tmp_path: Path) -> None:
    """ROS 1 has no security of its own: the master, the XML-RPC and the TCPROS connection all
    cross inside the tunnel."""
    result, _ = run(leased_env, tmp_path, "--transport", "ros1", "--link", "delay=1ms",
                    "--rate", "100", "--duration", "1s", "--warmup", "200ms", "--layers")
    accounting = result["measurement"]["accounting"]
    assert accounting["received"] == accounting["sent"] == 100, accounting
    assert_all_wireguard(result["link"])
    # --layers: the emulator cannot see mwperf's messages inside the encrypted packets: said
    (said,) = [w for w in result["warnings"] if w["code"] == "layers-incomplete"]
    assert "WireGuard's encrypted packets" in said["message"], said


@pytest.mark.parametrize("transport", ["tcp", "zenoh", "mqtt", "cyclonedds", "fastdds",
                                       "foxglove"])
def test_every_transport_it_takes_crosses_only_inside_the_tunnel(
        leased_env: dict[str, str], tmp_path: Path, transport: str) -> None:
    """Each middleware's every packet between the hosts (discovery, its daemon's traffic) goes
    through the tunnel: the link's bytes are WireGuard's own, to the byte, and no warning."""
    result, _ = run(leased_env, tmp_path, "--transport", transport, "--link", "delay=1ms",
                    "--rate", "100", "--duration", "1s", "--warmup", "300ms", "--depth", "100")
    accounting = result["measurement"]["accounting"]
    assert accounting["received"] == accounting["sent"] == 100, accounting
    assert_all_wireguard(result["link"])
    assert not [w for w in result["warnings"] if w["code"] == "outside-tunnel"]


def test_a_graph_across_the_hosts_runs_through_the_tunnel(leased_env: dict[str, str],
                                                          tmp_path: Path) -> None:
    graph = tmp_path / "g.yaml"
    graph.write_text("name: across\n"
                     "nodes:\n"
                     "  - name: lidar\n"
                     "    host: b\n"
                     "    publishers: [{topic: /scan, rate: 100, payload: 1024}]\n"
                     "  - name: planner\n"
                     "    subscribers: [{topic: /scan}]\n")
    result, stdout = run(leased_env, tmp_path, "--graph", str(graph), "--transport", "udp",
                         "--link", "delay=1ms", "--duration", "1s", "--warmup", "500ms")
    assert result["status"] == "complete", result["status_reason"]
    assert result["config"]["secure"] == "wireguard"
    (edge,) = result["edges"]
    assert edge["received"] == edge["sent"] == 100, edge
    assert_all_wireguard(result["link"])
    assert "security      WireGuard tunnel" in stdout


def test_ctrl_c_leaves_no_wireguard_behind(leased_env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    proc = subprocess.Popen([sys.executable, "-m", "mwperf.cli", "run", "--transport", "udp",
                             "--secure", "wireguard", "--link", "delay=1ms",
                             "--link-backend", "userspace", "--duration", "30s",
                             "--no-save", "--json-out", str(out)], env=leased_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def tunnels() -> list[int]:
        return [pid for pid in children(proc.pid) if command(pid) == "wireguard-go"]

    deadline = time.monotonic() + 30
    while len(children(proc.pid)) < 5 and time.monotonic() < deadline:  # linkem, 2 wg, 2 agents
        time.sleep(0.05)
    spawned = tunnels()
    assert len(spawned) == 2, children(proc.pid)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 3, err  # partial: what was measured is kept
    assert read_saved(out)["link"]["tunnel"]["handshakes"][0]["ms"] is not None
    assert not [pid for pid in spawned if alive(pid)]
    assert not Path("/run/wireguard").exists()  # their sockets were the run's files


@pytest.mark.parametrize(("program", "says"), [
    ("/nonexistent/wireguard-go", "MWPERF_WIREGUARD_GO=/nonexistent/wireguard-go: no executable "
                                  "file there"),
    ("/bin/false", "--secure wireguard: /bin/false did not start in mwp"),
])
def test_a_tunnel_that_cannot_start_is_one_error_and_leaves_nothing(
        leased_env: dict[str, str], tmp_path: Path, program: str, says: str) -> None:
    done = run_mwperf("run", "--secure", "wireguard", "--no-save", "--transport", "udp",
                      "--link", "delay=1ms", "--link-backend", "userspace", "--duration", "1s",
                      env={**leased_env, "MWPERF_WIREGUARD_GO": program}, timeout=120)
    assert done.returncode == 1, done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr, done.stderr
    leases = tmp_path / "leases"
    assert not leases.exists() or not any(leases.iterdir())  # released: nothing held
    if program == "/bin/false":
        assert done.stderr.rstrip().endswith(": it exited with code 1"), done.stderr
        # this run's namespaces (named in the error) are gone; other tests' may come and go
        prefix = done.stderr.split("did not start in ")[1].split("-")[0]
        assert not [n for n in Path("/run/netns").iterdir() if n.name.startswith(prefix)]
