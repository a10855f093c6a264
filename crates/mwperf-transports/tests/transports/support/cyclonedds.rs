//! Cyclone DDS: no daemon. Each test binary uses its own domain (from its pid), so concurrent
//! runs (and other DDS tests on this host) do not discover each other; unique base names keep the
//! tests of one binary apart. Reliable keep-last 1000 is deep enough for the pipelined test.

use mwperf_transports::{Durability, History, Kind, Qos, Reliability};

use super::{unique, Fixture};

pub fn fixture() -> Fixture {
    dds_fixture(Kind::CycloneDds, 0)
}

/// A DDS transport's fixture (cyclonedds, fastdds): a domain from the pid plus `offset` (so two
/// DDS transports' tests running at once stay apart), unique bases, reliable keep-last 1000.
pub fn dds_fixture(kind: Kind, offset: u32) -> Fixture {
    let domain = 1 + (std::process::id() + offset) % 200;
    let mut fx = Fixture::simple(
        kind,
        move |tag| format!("{domain}/{}", unique(tag)),
        &format!("{domain}/{}", unique("nobody")),
    );
    fx.qos = Qos {
        reliability: Reliability::Reliable,
        history: History::KeepLast(1000),
        durability: Durability::Volatile,
    };
    fx
}
