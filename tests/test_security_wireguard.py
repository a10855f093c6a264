"""``--secure wireguard``'s pieces without a tunnel: the configuration protocol wireguard-go
speaks (requests to the byte, replies and refusals), the tunnel's MTU and addresses (never on a
link's subnet), and the usage errors that name the flag before anything runs."""

import ipaddress

import pytest
from conftest import run_mwperf

from mwperf.emulation.topology import MAX_LINKS, Link, Topology, plan_addresses
from mwperf.errors import RunError, UsageError
from mwperf.security import wg_uapi
from mwperf.security.wireguard import (MIN_MTU, OVERHEAD, handshake_ns, tunnel_addresses,
                                       tunnel_mtu)

KEY_A, KEY_B = bytes(range(32)), bytes(range(32, 64))


def test_a_set_request_gives_the_key_port_and_exactly_these_peers_in_hex() -> None:
    request = wg_uapi.set_request(KEY_A, 51820, [wg_uapi.Peer(KEY_B, "10.1.2.2:51820",
                                                              "10.1.202.2/32")])
    assert request == ("set=1\n"
                       f"private_key={KEY_A.hex()}\n"
                       "listen_port=51820\n"
                       "replace_peers=true\n"
                       f"public_key={KEY_B.hex()}\n"
                       "endpoint=10.1.2.2:51820\n"
                       "replace_allowed_ips=true\n"
                       "allowed_ip=10.1.202.2/32\n"
                       "\n").encode()


def test_a_key_that_is_not_32_bytes_is_refused() -> None:
    with pytest.raises(ValueError, match="32 bytes, got 31"):
        wg_uapi.set_request(KEY_A[:31], 51820, [])


def test_a_reply_splits_into_the_device_and_its_peers_and_a_refusal_is_an_error() -> None:
    reply = ("private_key=00\nlisten_port=51820\n"
             f"public_key={KEY_B.hex()}\nendpoint=10.1.2.2:51820\nlast_handshake_time_sec=5\n"
             "last_handshake_time_nsec=7\ntx_bytes=100\nrx_bytes=90\nerrno=0\n\n")
    device, peer = wg_uapi.parse_reply(reply)
    assert device == {"private_key": "00", "listen_port": "51820"}
    assert peer["public_key"] == KEY_B.hex() and peer["tx_bytes"] == "100"
    assert handshake_ns([device, peer], KEY_B) == 5_000_000_007
    assert handshake_ns([device, peer], KEY_A) is None  # not a peer
    assert handshake_ns([device, {**peer, "last_handshake_time_sec": "0",
                                  "last_handshake_time_nsec": "0"}], KEY_B) is None  # none yet
    with pytest.raises(RunError, match="errno=22"):
        wg_uapi.parse_reply("errno=22\n\n")
    with pytest.raises(RunError, match="without errno"):
        wg_uapi.parse_reply("listen_port=1\n\n")
    with pytest.raises(RunError, match="not key=value"):
        wg_uapi.parse_reply("garbage\nerrno=0\n\n")


def test_the_tunnel_mtu_is_the_smallest_link_mtu_less_wireguards_60_bytes() -> None:
    assert tunnel_mtu([1500, 9000]) == 1440
    assert tunnel_mtu([MIN_MTU + OVERHEAD]) == MIN_MTU
    with pytest.raises(UsageError, match=r"link MTU of 600 bytes leaves 540 .*--link mtu="):
        tunnel_mtu([1500, 600])


@pytest.mark.parametrize("base", [(0, 0), (7, 55), (255, 156), (255, 255)])
def test_tunnel_addresses_are_on_no_links_subnet(base: tuple[int, int]) -> None:
    hosts = tuple(f"h{i}" for i in range(MAX_LINKS + 1))
    links = tuple(Link(f"l{i}", (hosts[i], hosts[i + 1]), None) for i in range(MAX_LINKS))
    plan = plan_addresses(Topology(hosts, links, ()), base, "mw")
    link_nets = {ipaddress.ip_network(f"{w.near.address}/24", strict=False) for w in plan.wires}
    tunnel = tunnel_addresses(list(hosts), base)
    assert len(set(tunnel.values())) == len(hosts)
    nets = {ipaddress.ip_network(f"{a}/24", strict=False) for a in tunnel.values()}
    assert len(nets) == 1 and not nets & link_nets


@pytest.mark.parametrize(("args", "says"), [
    (("--transport", "udp", "--secure", "wireguard"), "--secure wireguard: needs emulated hosts"),
    (("--transport", "udp", "--secure", "tlsv1"), "--secure tlsv1: not a mode; allowed: plain, "
                                                  "auth, sign, encrypt, tls, mtls, wireguard"),
    (("--transport", "udp", "--secure", "encrypt"), "--secure encrypt: not with --transport udp"),
    (("--graph", "sierra_nevada", "--transport", "udp", "--secure", "encrypt"),
     "--secure encrypt: not with --transport udp"),
])
def test_secure_usage_errors_name_the_flag_and_exit_2(fake_env: dict[str, str],
                                                      args: tuple[str, ...], says: str) -> None:
    done = run_mwperf("run", "--no-save", "--duration", "1s", *args, env=fake_env)
    assert done.returncode == 2, done.stderr
    assert says in done.stderr, done.stderr


def test_plain_is_no_security_so_a_scenario_axis_can_hold_both_sides() -> None:
    from mwperf.security.modes import parse_secure
    assert parse_secure("plain") is None and parse_secure(None) is None
    assert parse_secure(" wireguard ") == "wireguard"


WIRE = [{"link": "a<->b", "from": "a", "to": "b"}]
PEERS = [{"host": "a", "peer": "b", "tx_bytes": 1000, "rx_bytes": 900},
         {"host": "b", "peer": "a", "tx_bytes": 900, "rx_bytes": 1000}]


def counters(forwarded: int, forwarded_bytes: int, **changes: object) -> dict:
    return {"received": forwarded, "forwarded": forwarded, "forwarded_bytes": forwarded_bytes,
            "duplicated": 0, "corrupted": 0, "dropped": {"loss": 0, "pending": 0}, **changes}


def test_nothing_outside_the_tunnel_when_the_link_carried_only_wireguards_bytes() -> None:
    from mwperf.security.wireguard import OUTER, outside_bytes
    report = {"up": counters(10, 1000 + 10 * OUTER), "down": counters(9, 900 + 9 * OUTER)}
    assert outside_bytes(PEERS, WIRE, [report]) == [
        {"host": "a", "link": "a<->b", "direction": "up", "bytes": 0},
        {"host": "b", "link": "a<->b", "direction": "down", "bytes": 0}]


def test_a_packet_in_the_clear_shows_as_its_size_less_28() -> None:
    from mwperf.security.wireguard import OUTER, outside_bytes
    # 10 WireGuard packets and one 120-byte packet beside them, a to b
    report = {"up": counters(11, 1000 + 10 * OUTER + 120), "down": counters(9, 900 + 9 * OUTER)}
    found = {o["direction"]: o["bytes"] for o in outside_bytes(PEERS, WIRE, [report])}
    assert found == {"up": 120 - OUTER, "down": 0}


def test_a_direction_whose_count_is_not_what_was_sent_is_not_judged() -> None:
    from mwperf.security.wireguard import OUTER, outside_bytes
    lossy = counters(9, 900 + 9 * OUTER, received=10, dropped={"loss": 1})
    duplicated = counters(10, 900 + 10 * OUTER, duplicated=1)
    assert outside_bytes(PEERS, WIRE, [{"up": lossy, "down": duplicated}]) == []
    # a host on two wires (its packets split between them): not told apart
    two = WIRE + [{"link": "a<->c", "from": "a", "to": "c"}]
    found = outside_bytes(PEERS, two, [{"up": counters(1, 1), "down": counters(9, 900 + 9 * OUTER)},
                                       None])
    assert [o["host"] for o in found] == ["b"]


def test_traffic_in_the_clear_is_a_warning_naming_the_host_and_the_bytes() -> None:
    from types import SimpleNamespace

    from mwperf.parts.secure import Secure
    leaked = {"link": {"tunnel": {"outside": [
        {"host": "a", "link": "a<->b", "direction": "up", "bytes": 4096},
        {"host": "b", "link": "a<->b", "direction": "down", "bytes": 0}]}}, "warnings": []}
    run = SimpleNamespace(cfg=SimpleNamespace(transport="udp", secure="wireguard"))
    Secure().section(run, leaked)  # type: ignore[arg-type]
    (warning,) = leaked["warnings"]
    assert warning["code"] == "outside-tunnel"
    assert "at least 4096 B from host a (a<->b up)" in warning["message"]
    clean = {"link": {"tunnel": {"outside": [{"host": "a", "link": "a<->b", "direction": "up",
                                              "bytes": 0}]}}, "warnings": []}
    Secure().section(run, clean)  # type: ignore[arg-type]
    assert clean["warnings"] == []


class Catalogue:
    def transports(self) -> list[str]:
        return ["udp", "rustdds", "ros2", "cyclonedds"]

    def payloads(self) -> dict[str, int]:
        return {"Array1k": 1024}


@pytest.mark.parametrize(("options", "says"), [
    ({"transport": "rustdds"}, "not with --transport rustdds: RustDDS binds every interface"),
    ({"transport": "ros2"}, "not with --transport ros2: the RMW picks its interfaces"),
    ({"transport": "cyclonedds", "pong": "relay"}, "not together with --pong relay / --pong-cmd"),
])
def test_what_would_cross_beside_the_tunnel_is_refused_naming_why(options: dict,
                                                                  says: str) -> None:
    from mwperf.config import build_point
    with pytest.raises(UsageError, match=f"^--secure wireguard: {says}"):
        build_point({**options, "secure": "wireguard", "link": "delay=1ms"}, Catalogue)
