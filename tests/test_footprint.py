"""mwperf footprint: crates attributed from demangled symbols, and for a real transport the
libraries it pulls in (libddsc for Cyclone DDS) and its pong's own memory."""
import json

import pytest
from conftest import run_mwperf

from mwperf.footprint import OTHER, crate_of, with_added_libraries


def test_symbols_are_attributed_to_their_crate() -> None:
    assert crate_of("zenoh::net::runtime::Runtime::new") == "zenoh"
    assert crate_of("<mwperf_transports::udp::UdpEndpoint as mwperf_transports::Endpoint>::recv") \
        == "mwperf_transports"
    assert crate_of("<&dyn core::fmt::Debug as core::fmt::Debug>::fmt") == "core"
    assert crate_of("dds_create_participant") == OTHER


def test_added_libraries_are_those_udp_does_not_map() -> None:
    rows = with_added_libraries([{"transport": "udp", "libraries": ["libc.so.6"]},
                                 {"transport": "cyclonedds",
                                  "libraries": ["libc.so.6", "libddsc.so.0"]}])
    assert [r["added"] for r in rows] == [[], ["libddsc.so.0"]]


@pytest.mark.agent
def test_cyclonedds_pulls_in_libddsc(real_env: dict[str, str]) -> None:
    done = run_mwperf("footprint", "--transport", "cyclonedds", "--json", env=real_env,
                      timeout=300)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    (row,) = found["transports"]
    assert any(lib.startswith("libddsc.so") for lib in row["added"]), row
    assert 1024 < row["peak_rss_kib"] < 100 * 1024  # its own, not the control plane's
    crates = {c["crate"] for c in found["agent"]["crates"]}
    assert {"mwperf_agent", "mwperf_transports"} <= crates
    assert found["agent"]["text"] > 1_000_000
    bad = run_mwperf("footprint", "--transport", "nosuch", env=real_env)
    assert bad.returncode == 2 and "--transport: 'nosuch' is not built" in bad.stderr
