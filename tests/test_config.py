"""PointConfig validation: each bad value gives one message naming its flag."""

from typing import Any

import pytest

from mwperf.config import PointConfig, build_point
from mwperf.errors import UsageError


class Catalogue:
    """What build_point needs from an agent."""

    def transports(self) -> list[str]:
        return ["udp", "tcp", "uds"]

    def payloads(self) -> dict[str, int]:
        return {"Array32": 32, "Array1k": 1024, "PointCloud4m": 4 << 20}


def build(**options: Any) -> PointConfig:
    return build_point(options, Catalogue)


def test_defaults() -> None:
    cfg = build()
    assert cfg == PointConfig(transport="udp", mode="roundtrip", rate=1000.0, payload="Array1k",
                              payload_bytes=1024, duration_ns=10_000_000_000, count=None,
                              warmup_ns=1_000_000_000, peer_timeout_ns=2_000_000_000, spin_margin_ns=100_000)


def test_everything_given() -> None:
    cfg = build(transport="uds", mode="oneway", rate="0", payload="64KiB", count="500",
                warmup="200ms", peer_timeout="1s", spin_margin="0", busy_poll=True,
                prevent_cpu_idle=True, samples=True)
    assert (cfg.transport, cfg.mode, cfg.rate, cfg.payload_bytes) == ("uds", "oneway", 0.0, 65536)
    assert (cfg.count, cfg.duration_ns, cfg.warmup_ns) == (500, None, 200_000_000)
    assert cfg.busy_poll and cfg.prevent_cpu_idle and cfg.samples
    assert cfg.to_dict()["payload_bytes"] == 65536


@pytest.mark.parametrize(("options", "message"), [
    ({"transport": "udpx"}, "--transport: unknown transport 'udpx'; allowed: udp, tcp, uds"),
    ({"mode": "both"}, "--mode: unknown mode 'both'; allowed: roundtrip, oneway, throughput, service"),
    ({"rate": "-5"}, "--rate: must be >= 0 (0 = as fast as possible), got -5"),
    ({"rate": "fast"}, "--rate: cannot parse 'fast'; use messages per second, e.g. 1000 "
                       "(0 = as fast as possible)"),
    ({"rate": "inf"}, "--rate: must be a finite number of messages per second, got inf"),
    ({"duration": "10 parsecs"}, "--duration: cannot parse '10 parsecs'; use e.g. 10s, 500ms, 2m"),
    ({"duration": "10"}, "--duration: cannot parse '10'; use e.g. 10s, 500ms, 2m"),
    ({"duration": "0s"}, "--duration: must be longer than 0, got '0s'"),
    ({"warmup": "-1s"}, "--warmup: cannot parse '-1s'; use e.g. 10s, 500ms, 2m"),
    ({"peer_timeout": "0"}, "--peer-timeout: must be longer than 0, got '0'"),
    ({"spin_margin": "lots"}, "--spin-margin: cannot parse 'lots'; use e.g. 10s, 500ms, 2m"),
    ({"payload": "Array3k"}, "--payload: unknown payload 'Array3k'; use a catalogue name "
                             "(Array32 \u2026 PointCloud4m, see 'mwperf payloads') or a size "
                             "such as 100 or 64KiB"),
    ({"count": "many"}, "--count: cannot parse 'many'; use a whole number of messages, e.g. 500"),
    ({"count": "0"}, "--count: must be >= 1, got 0"),
    ({"count": "5", "duration": "1s"}, "--count and --duration are mutually exclusive; "
                                       "give one of them"),
    ({"alloc_sites": True, "count_allocs": True},
     "--alloc-sites and --count-allocs: one at a time (both intercept malloc and would count "
     "each other); --alloc-sites reports allocations per message too"),
])
def test_bad_values(options: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        build(**options)
    assert str(caught.value) == message
    assert caught.value.exit_code == 2


def test_agent_not_asked_before_plain_values_are_valid() -> None:
    def no_agent() -> Catalogue:
        raise AssertionError("the agent was asked too early")
    with pytest.raises(UsageError, match="--rate"):
        build_point({"rate": "-1"}, no_agent)


def test_an_option_the_transport_does_not_know_is_refused_with_the_known_ones() -> None:
    """The known options are the agent's descriptor's (the built agent's listing)."""
    class WithZenoh(Catalogue):
        def transports(self) -> list[str]:
            return ["udp", "zenoh"]

    with pytest.raises(UsageError) as caught:
        build_point({"transport": "zenoh", "opt": ("mode=client", "mod=client")}, WithZenoh)
    assert str(caught.value) == ("--opt mod: not an option of zenoh; allowed: cdr, express, link, "
                                 "mode, tls")
    assert build_point({"transport": "zenoh", "opt": ("mode=client",)}, WithZenoh).opts == (
        "mode=client",)
