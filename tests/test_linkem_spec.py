"""The --link grammar, the presets, netem's arguments and the run options (no root needed)."""

import os
import subprocess

import pytest

from mwperf.config import build_point
from mwperf.emulation.links import Direction, parse_link
from mwperf.emulation.netem import expresses, netem_args
from mwperf.emulation.network import check_transport
from mwperf.emulation.presets import PRESETS
from mwperf.emulation.userspace import find_linkem
from mwperf.errors import RunError, UsageError


class Catalogue:
    def transports(self) -> list[str]:
        return ["udp", "tcp", "uds", "zenoh", "cyclonedds", "rustdds", "mqtt"]

    def payloads(self) -> dict[str, int]:
        return {"Array64": 64, "Array1k": 1024}


def point(**options: str):
    return build_point(options, Catalogue)


def test_both_directions_and_direction_prefixes() -> None:
    spec = parse_link("delay=10ms,jitter=1ms,dist=normal,loss=1%,up:rate=115200bit,"
                      "overhead=8n1,down:delay=20ms,outage=5s+2s")
    assert spec.up.delay_ns == 10_000_000 and spec.down.delay_ns == 20_000_000
    assert spec.up.jitter_ns == spec.down.jitter_ns == 1_000_000
    assert spec.up.dist == "normal" and spec.up.loss == spec.down.loss == 0.01
    assert spec.up.rate_bps == 115200 and spec.down.rate_bps == 0
    assert spec.up.bits_per_byte == spec.down.bits_per_byte == 10
    assert (spec.up.outage_at_ns, spec.up.outage_ns) == (5_000_000_000, 2_000_000_000)
    assert spec.preset is None


def test_ge_defaults_and_all_keys() -> None:
    spec = parse_link("ge=1%/25%,corrupt=0.1%,dup=1%,reorder=5%,queue=4KiB,mtu=1006,"
                      "frame=127/25,backoff=2.24ms,overhead=9.5")
    d = spec.up
    assert d.ge == (0.01, 0.25, 0.0, 1.0)
    assert (d.corrupt, d.dup, d.reorder) == (0.001, 0.01, 0.05)
    assert (d.queue_bytes, d.mtu, d.frame_bytes, d.frame_overhead_bytes) == (4096, 1006, 127, 25)
    assert d.backoff_ns == 2_240_000 and d.bits_per_byte == 9.5
    assert parse_link("ge=1%/25%/10%/99%").up.ge == (0.01, 0.25, 0.1, 0.99)


def test_preset_then_overrides() -> None:
    spec = parse_link("wifi-80211n,loss=5%")
    assert spec.preset == "wifi-80211n" and spec.up.loss == 0.05
    assert spec.up.delay_ns == parse_link("wifi-80211n").up.delay_ns == 2_000_000
    assert spec.to_dict()["spec"] == "wifi-80211n,loss=5%"


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_parses_and_has_a_source(name: str) -> None:
    spec = parse_link(name)
    assert spec.up != Direction() or spec.down != Direction()
    assert len(PRESETS[name].source) > 30 and PRESETS[name].about


def test_presets_model_what_they_say() -> None:
    serial = parse_link("serial-115200").up
    assert (serial.rate_bps, serial.bits_per_byte) == (115200, 10)
    radio = parse_link("ieee802154-250k").up
    assert (radio.rate_bps, radio.frame_bytes, radio.backoff_ns > 0) == (250_000, 127, True)
    assert parse_link("lossy-10").up.loss == 0.1 and parse_link("corrupt-1").down.corrupt == 0.01


@pytest.mark.parametrize("text, needle", [
    ("delay=10", "key 'delay'"), ("loss=1", "key 'loss'"), ("loss=101%", "key 'loss'"),
    ("nope=1", "unknown key 'nope'; allowed: delay"), ("wifi", "unknown preset 'wifi'"),
    ("delay=1ms,wifi-80211n", "a preset name may only come first"),
    ("left:delay=1ms", "up: or down:"), ("ge=1%", "key 'ge'"), ("ge=1%/0%", "key 'ge'"),
    ("rate=10", "key 'rate'"), ("rate=0bit", "key 'rate'"), ("overhead=7", "key 'overhead'"),
    ("queue=0", "key 'queue'"), ("frame=20/30", "key 'frame'"), ("mtu=10", "key 'mtu'"),
    ("outage=5s", "key 'outage'"), ("dist=cauchy", "key 'dist'"), ("delay=1ms,,loss=1%", "empty"),
    ("", "empty"),
])
def test_errors_name_the_key_and_what_is_allowed(text: str, needle: str) -> None:
    with pytest.raises(UsageError, match="--link") as caught:
        parse_link(text)
    assert needle in str(caught.value)


def test_netem_arguments() -> None:
    d = parse_link("delay=10ms,jitter=1ms,dist=normal,ge=1%/25%,corrupt=0.1%,dup=1%,"
                   "reorder=5%,rate=115200bit,overhead=8n1,queue=15000").up
    assert netem_args(d) == ["limit", "10", "delay", "10000us", "1000us", "distribution",
                             "normal", "loss", "gemodel", "1%", "25%", "100%", "0%",
                             "corrupt", "0.1%", "duplicate", "1%", "reorder", "5%",
                             "rate", "92160bit"]
    assert netem_args(parse_link("loss=2%").up)[2:] == ["loss", "random", "2%"]
    with pytest.raises(UsageError, match="outage.*userspace"):
        netem_args(parse_link("outage=1s+1s").up)
    assert expresses(parse_link("wifi-80211n"))
    assert not expresses(parse_link("ieee802154-250k"))  # CSMA back-off
    assert not expresses(parse_link("down:outage=1s+1s"))


def test_run_options() -> None:
    assert point().link is None and point().link_backend == "auto"
    cfg = point(link="delay=10ms", link_backend="userspace")
    assert (cfg.link, cfg.link_backend) == ("delay=10ms", "userspace")
    assert cfg.to_dict()["link"] == "delay=10ms"
    assert point(link="delay=1ms", transport="zenoh").link == "delay=1ms"
    assert point(link="delay=1ms", transport="cyclonedds").link == "delay=1ms"
    assert point(link="delay=1ms", transport="mqtt").link == "delay=1ms"  # broker on host b
    assert point(link="delay=1ms", transport="zenoh", opt=["mode=client"]).link == "delay=1ms"
    check_transport("ros1", lambda key: None)  # rosmaster on host b
    assert point(link="delay=1ms", transport="rustdds").link == "delay=1ms"  # multicast discovery
    with pytest.raises(UsageError, match="--opt network: with --link mwperf puts RustDDS"):
        point(link="delay=1ms", transport="rustdds", opt=["network=10.0.0.1"])
    with pytest.raises(UsageError, match="--transport uds: it is host-local IPC"):
        point(link="delay=1ms", transport="uds")
    with pytest.raises(UsageError, match="--opt config: with --link"):
        point(link="delay=1ms", transport="cyclonedds", opt=["config=<x/>"])
    with pytest.raises(UsageError, match="--link-backend: only together with --link"):
        point(link_backend="netem")
    with pytest.raises(UsageError, match="--link-backend: unknown link backend 'tc'"):
        point(link="delay=1ms", link_backend="tc")
    with pytest.raises(UsageError, match="key 'loss'"):
        point(link="loss=1")


def test_refused_without_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(UsageError, match="--link: emulated links need root"):
        point(link="delay=1ms")
    assert point().link is None  # loopback still runs


def linkem_or_skip() -> str:
    try:
        return str(find_linkem())
    except RunError:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip("mwperf-linkem is not built (make build)")


@pytest.mark.parametrize("name", list(PRESETS))
def test_the_emulator_accepts_every_preset(name: str) -> None:
    """The Rust side parses what the Python side produces (exit 1: only the namespace is
    missing; exit 2 would be a rejected spec)."""
    spec = parse_link(name)
    done = subprocess.run([linkem_or_skip(), "--netns-a", "/nonexistent", "--dev-a", "x",
                           "--netns-b", "/nonexistent", "--dev-b", "y", "--up",
                           spec.up.canonical(), "--down", spec.down.canonical()],
                          capture_output=True, text=True, timeout=10, check=False)
    assert done.returncode == 1 and "/nonexistent" in done.stderr, done.stderr


def test_the_emulator_rejects_a_bad_spec() -> None:
    done = subprocess.run([linkem_or_skip(), "--netns-a", "a", "--dev-a", "x", "--netns-b", "b",
                           "--dev-b", "y", "--up", "loss=2"], capture_output=True, text=True,
                          timeout=10, check=False)
    assert done.returncode == 2 and "--up: loss" in done.stderr


def test_the_emulator_accepts_every_key() -> None:
    spec = parse_link("delay=10ms,jitter=1ms,dist=pareto,loss=1%,ge=1%/25%/10%/99%,corrupt=1%,"
                      "dup=1%,reorder=5%,rate=115200bit,overhead=8n1,queue=4KiB,frame=127/25,"
                      "backoff=2ms,mtu=1280,outage=5s+2s")
    done = subprocess.run([linkem_or_skip(), "--netns-a", "/nonexistent", "--dev-a", "x",
                           "--netns-b", "/nonexistent", "--dev-b", "y", "--up",
                           spec.up.canonical(), "--down", spec.down.canonical()],
                          capture_output=True, text=True, timeout=10, check=False)
    assert done.returncode == 1 and "/nonexistent" in done.stderr, done.stderr


def test_link_lines_under_the_table() -> None:
    from mwperf.emulation.summary import render_link
    assert render_link({"link": None}) == ""
    counts = {"received": 110, "forwarded": 100, "duplicated": 0, "reordered": 0,
              "corrupted": 2, "dropped": {"loss": 10, "queue": 0},
              "release_late_ns": {"mean": 1000, "max": 60_000, "over_50us": 1}}
    text = render_link({"link": {"spec": "loss=10%", "backend": "userspace",
                                 "emulator": {"up": counts, "down": counts}}})
    assert text.splitlines()[0] == "link          loss=10%  (userspace)"
    assert "received 110  forwarded 100  dropped: loss 10  corrupted 2" in text
    assert "queue" not in text and "max 60.0 µs" in text


def test_every_link_of_a_scenario_with_hosts_is_shown() -> None:
    from mwperf.emulation.summary import render_link
    counts = {"received": 100, "forwarded": 99, "dropped": {"loss": 1, "queue": 0}}
    clean = {"received": 100, "forwarded": 100, "dropped": {"loss": 0}}
    wire = {"from": "middle", "to": "echoer", "report": {"up": counts, "down": clean}}
    text = render_link({"link": {
        "spec": "delay=2ms", "backend": "userspace",
        "hosts": {"sender": {"address": "10.1.0.1"}, "echoer": {"address": "10.1.1.2"}},
        "links": [{"name": "sender<->middle", "hosts": ["sender", "middle"], "segment": False,
                   "spec": "delay=2ms", "emulator": []},
                  {"name": "lan", "hosts": ["middle", "echoer"], "segment": True,
                   "spec": "loss=1%", "emulator": [wire]}]}})
    lines = text.splitlines()
    assert lines[0] == "links         2 (userspace); hosts sender 10.1.0.1, echoer 10.1.1.2"
    assert lines[1:] == ["  sender<->middle  delay=2ms", "  lan [middle echoer]  loss=1%",
                         "    middle -> echoer  received 100  forwarded 99  dropped: loss 1",
                         "    echoer -> middle  received 100  forwarded 100"]
