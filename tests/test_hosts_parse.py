"""Scenario hosts, links and placement: a good topology loads, is addressed and routed so every
host reaches every other; every bad one is refused with FILE:LINE: field 'NAME': message."""

import os
from pathlib import Path

import pytest
from conftest import run_mwperf

from mwperf.emulation.network import check_transport, link_specs, wire_spec
from mwperf.emulation.topology import Topology, plan_addresses, two_hosts
from mwperf.errors import UsageError
from mwperf.scenario import load_scenario

GOOD = """\
transport: ros1
link: [ethernet-1g, wifi-80211n]
hosts: [master, sender, echoer, far]
links:
  lan: {hosts: [master, sender, echoer]}
  echoer<->far: delay=10ms
place: {rosmaster: master, ping: sender, pong: far}
"""


def load(tmp_path: Path, text: str) -> Topology | None:
    path = tmp_path / "t.yaml"
    path.write_text(text)
    data = load_scenario(str(path)).topology
    return None if data is None else Topology.from_dict(data)


def test_a_good_topology(tmp_path: Path) -> None:
    topology = load(tmp_path, GOOD)
    assert topology is not None
    assert topology.hosts == ("master", "sender", "echoer", "far")
    assert [(k.name, k.hosts, k.spec, k.segment) for k in topology.links] == [
        ("lan", ("master", "sender", "echoer"), None, True),
        ("echoer<->far", ("echoer", "far"), "delay=10ms", False)]
    place = dict(topology.place)
    assert (place["ping"], place["pub"], place["pong"], place["sub"]) == (
        "sender", "sender", "far", "far")
    assert (place["rosmaster"], place["mosquitto"], place["zenohd"]) == ("master", "far", "far")
    specs = link_specs(topology, "wifi-80211n")
    assert specs["lan"].preset == "wifi-80211n" and specs["echoer<->far"].up.delay_ns == 10**7


def test_addressing_and_routes_reach_every_host(tmp_path: Path) -> None:
    topology = load(tmp_path, GOOD)
    assert topology is not None
    plan = plan_addresses(topology, (7, 255), "mwp000000")
    assert plan.addresses == {"master": "10.7.255.1", "sender": "10.7.255.2",
                              "echoer": "10.7.255.3", "far": "10.7.0.2"}
    assert plan.hubs == {"hub:lan": "10.7.255.254"}
    routes = {(r.node, r.subnet): (r.gateway, r.device) for r in plan.routes}
    # sender and master reach far's subnet through the hub, the hub through echoer
    assert routes[("sender", "10.7.0.0/24")] == ("10.7.255.254", "mwp0000000m2")
    assert routes[("hub:lan", "10.7.0.0/24")] == ("10.7.255.3", "mwp0000000h3")
    assert routes[("far", "10.7.255.0/24")] == ("10.7.0.1", "mwp0000001b")
    assert routes[("hub:lan", "10.7.255.1/32")] == ("10.7.255.1", "mwp0000000h1")
    assert ("echoer", "10.7.0.0/24") not in routes  # on it
    assert all(len(w.near.device) <= 15 and len(w.far.device) <= 15 for w in plan.wires)


def test_segment_applies_its_spec_once_towards_each_member(tmp_path: Path) -> None:
    topology = load(tmp_path, GOOD)
    assert topology is not None
    plan = plan_addresses(topology, (1, 1), "mwp000000")
    spec = link_specs(topology, "delay=3ms")["lan"]
    port = wire_spec(plan.wires[0], spec)
    assert (port.up.delay_ns, port.down.delay_ns) == (0, 3_000_000)


def test_link_alone_is_two_hosts_a_and_b_as_before() -> None:
    plan = plan_addresses(two_hosts(), (1, 2), "mwp123456")
    assert plan.addresses == {"a": "10.1.2.1", "b": "10.1.2.2"}
    assert [(w.near.device, w.far.device) for w in plan.wires] == [("mwp123456a", "mwp123456b")]
    assert plan.routes == ()
    assert dict(two_hosts().place)["rosmaster"] == "b"


BASE = "transport: ros1\n"
BAD = [
    (BASE + "hosts: [a, b]\nplace: {ping: a, pong: b}\n",
     "t.yaml:2: field 'hosts': 'links' is missing: a scenario with hosts declares hosts, links "
     "and place together (see docs/scenarios.md)"),
    (BASE + "hosts: [a]\nlinks: {a<->b: delay=1ms}\nplace: {ping: a, pong: b}\n",
     "t.yaml:2: field 'hosts': must be a list of two or more host names, e.g. "
     "[master, sender, echoer]"),
    (BASE + "hosts: [a, B]\nlinks: {a<->b: delay=1ms}\nplace: {ping: a, pong: b}\n",
     "t.yaml:2: field 'hosts': 'B' is not a host name (a lower-case letter, then letters, "
     "digits or '_', at most 32)"),
    (BASE + "hosts: [a, b, a]\nlinks: {a<->b: delay=1ms}\nplace: {ping: a, pong: b}\n",
     "t.yaml:2: field 'hosts': host 'a' is listed twice (first on line 2)"),
    (BASE + "hosts: [a, b]\nlinks:\n  a<->robot: delay=1ms\nplace: {ping: a, pong: b}\n",
     "t.yaml:4: field 'links': 'a<->robot': unknown host 'robot'; declared hosts: a, b"),
    (BASE + "hosts: [a, b]\nlinks:\n  a<->a: delay=1ms\nplace: {ping: a, pong: b}\n",
     "t.yaml:4: field 'links': 'a<->a' joins a to itself"),
    (BASE + "hosts: [a, b]\nlinks:\n  a<->b: delay=1ms\n  b<->a: delay=2ms\n"
     "place: {ping: a, pong: b}\n",
     "t.yaml:5: field 'links': 'b<->a' joins b and a again ('a<->b', line 4); give one link "
     "per pair"),
    (BASE + "hosts: [a, b, c]\nlinks:\n  a<->b: delay=1ms\n  lan: {hosts: [c, b, a], "
     "link: delay=2ms}\nplace: {ping: a, pong: b}\n",
     "t.yaml:5: field 'links': 'lan' joins b and a again ('a<->b', line 4); give one link per "
     "pair"),
    (BASE + "hosts: [a, b, c]\nlinks:\n  a<->b: delay=1ms\nplace: {ping: a, pong: b}\n",
     "t.yaml:2: field 'hosts': host 'c' is on no link; every host needs one (add it to 'links')"),
    (BASE + "hosts: [a, b, c, d]\nlinks:\n  a<->b: delay=1ms\n  c<->d: delay=1ms\n"
     "place: {ping: a, pong: b}\n",
     "t.yaml:4: field 'links': host(s) c, d cannot reach a: the links must connect every host"),
    (BASE + "hosts: [a, b]\nlinks:\n  a<->b:\nplace: {ping: a, pong: b}\n",
     "t.yaml:4: field 'links': 'a<->b' has no spec: give one, or set the field 'link' (it "
     "applies to every link without one)"),
    (BASE + "link: lte\nhosts: [a, b]\nlinks:\n  a<->b: delay=1ms\nplace: {ping: a, pong: b}\n",
     "t.yaml:2: field 'link': no link in 'links' takes it (each has a spec of its own); drop "
     "it, or leave a link's spec empty to use it"),
    (BASE + "hosts: [a, b]\nlinks:\n  a<->b: delay=1parsec\nplace: {ping: a, pong: b}\n",
     "t.yaml:4: field 'links': 'a<->b': --link: key 'delay': cannot parse '1parsec'; use a "
     "duration such as 10ms, 250us, 1.5s"),
    (BASE + "hosts: [a, b]\nlinks:\n  lan: {hosts: [a, b], link: 'up:delay=1ms'}\n"
     "place: {ping: a, pong: b}\n",
     "t.yaml:4: field 'links': segment 'lan': a segment has no direction; drop the up:/down: "
     "items (they apply to point-to-point links)"),
    (BASE + "hosts: [a, b]\nlinks:\n  lan: {hosts: [a, b], speed: 1}\nplace: {ping: a, pong: b}\n",
     "t.yaml:4: field 'links': segment 'lan': unknown key 'speed'; allowed: hosts, link, medium"),
    (BASE + "hosts: [a, b]\nlinks:\n  lan: {hosts: [a, b], medium: air}\n"
     "place: {ping: a, pong: b}\n",
     "t.yaml:4: field 'links': segment 'lan': medium 'air' is not one of switched, shared"),
    (BASE + "hosts: [a, b]\nlinks:\n  lan: [a, b]\nplace: {ping: a, pong: b}\n",
     "t.yaml:4: field 'links': segment 'lan' must be a mapping with 'hosts' (two or more) and "
     "optionally 'link', e.g. {hosts: [a, b, c], link: ethernet-1g}"),
    (BASE + "hosts: [a, b]\nlinks: {a<->b: delay=1ms}\nplace:\n  ping: a\n  pong: c\n",
     "t.yaml:6: field 'place': pong is placed on 'c', which is not a declared host; declared "
     "hosts: a, b"),
    (BASE + "hosts: [a, b]\nlinks: {a<->b: delay=1ms}\nplace:\n  ping: a\n  broker: b\n",
     "t.yaml:6: field 'place': unknown role or daemon 'broker'; allowed: ping, pong, pub, sub, "
     "client, server, rosmaster, mosquitto, zenohd, foxglove-server"),
    (BASE + "hosts: [a, b]\nlinks: {a<->b: delay=1ms}\nplace: {ping: a, rosmaster: b}\n",
     "t.yaml:4: field 'place': place the sender (ping or pub) and the server (pong or sub); "
     "daemons default to the server's host"),
]


@pytest.mark.parametrize(("text", "message"), BAD,
                         ids=[m.split("'")[1] + ":" + m.split(":")[1] for _, m in BAD])
def test_a_bad_topology_names_file_line_and_field(tmp_path: Path, text: str,
                                                  message: str) -> None:
    with pytest.raises(UsageError) as error:
        load(tmp_path, text)
    assert str(error.value).replace(str(tmp_path) + "/", "") == message
    assert error.value.exit_code == 2


@pytest.mark.skipif(os.geteuid() != 0, reason="points with hosts are refused without root")
def test_a_dry_run_names_the_hosts(fake_env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "h.yaml").write_text("transport: udp\nhosts: [a, b]\nlinks: {a<->b: delay=1ms}\n"
                                     "place: {ping: a, pong: b}\n")
    done = run_mwperf("run", str(tmp_path / "h.yaml"), "--dry-run", env=fake_env)
    assert done.returncode == 0, done.stderr
    assert ("hosts a, b; links a<->b (delay=1ms); place client@a foxglove-server@b mosquitto@b "
            "ping@a pong@b pub@a rosmaster@b server@b sub@b zenohd@b\n") in done.stdout


def test_at_most_99_links(tmp_path: Path) -> None:
    hosts = [f"h{i}" for i in range(101)]
    links = "".join(f"  h{i}<->h{i + 1}: delay=1ms\n" for i in range(100))
    text = (f"transport: udp\nhosts: [{', '.join(hosts)}]\nlinks:\n{links}"
            "place: {ping: h0, pong: h100}\n")
    with pytest.raises(UsageError, match=r"/t\.yaml:4: field 'links': 100 links; at most 99$"):
        load(tmp_path, text)


def test_a_shared_medium_is_kept_with_the_segment(tmp_path: Path) -> None:
    shared = load(tmp_path, GOOD.replace("lan: {hosts: [master, sender, echoer]}",
                                         "lan: {hosts: [master, sender, echoer], medium: shared}"))
    assert shared is not None
    assert [k.shared for k in shared.links] == [True, False]
    assert Topology.from_dict(shared.to_dict()) == shared
    assert "lan [master sender echoer] shared (spec: link)" in shared.describe()
    switched = load(tmp_path, GOOD.replace("lan: {hosts: [master, sender, echoer]}",
                                           "lan: {hosts: [master, sender, echoer], "
                                           "medium: switched}"))
    assert switched is not None and not any(k.shared for k in switched.links)


def test_rustdds_needs_its_agents_on_one_point_to_point_link(tmp_path: Path) -> None:
    """RustDDS discovers by multicast only: one point-to-point link carries it, a hop does not."""
    topology = load(tmp_path, GOOD)
    assert topology is not None
    with pytest.raises(UsageError, match="hosts 'far' and 'sender' share no point-to-point link"):
        check_transport("rustdds", lambda key: None, topology, ("pong", "ping"))
    direct = load(tmp_path, GOOD.replace("ping: sender", "ping: echoer"))
    assert direct is not None
    check_transport("rustdds", lambda key: None, direct, ("pong", "ping"))  # echoer<->far
    check_transport("rustdds", lambda key: None, direct, ("sub", "pub"))
    check_transport("cyclonedds", lambda key: None, topology, ("pong", "ping"))  # unicast peers
