//! Fast DDS: no daemon (shared memory on, its default). Each test binary uses its own domain (from its pid, apart from the cyclonedds fixture's), so concurrent
//! runs (and other DDS tests on this host) do not discover each other; unique base names keep the
//! tests of one binary apart. Reliable keep-last 1000 is deep enough for the pipelined test.

use mwperf_transports::{Durability, History, Kind, Qos, Reliability};

use super::{unique, Fixture};

pub fn fixture() -> Fixture {
    let domain = 1 + (std::process::id() + 100) % 200;
    let mut fx = Fixture::simple(
        Kind::FastDds,
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
