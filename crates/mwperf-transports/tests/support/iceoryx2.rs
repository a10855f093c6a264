//! iceoryx2: no daemon; every test gets its own service base name. Reliable keep-last 1000 (the
//! deepest queue the suite runs): deep enough for the 200 pipelined messages, and it exercises
//! the shared-memory cap for the 4 MiB messages (1000 × 4 MiB would otherwise be preallocated).

use mwperf_transports::{History, Kind, Qos};

use super::{unique, Fixture};

pub fn fixture() -> Fixture {
    let mut fx = Fixture::simple(Kind::Iceoryx2, |tag| unique(tag), &unique("nobody"));
    fx.qos = Qos { history: History::KeepLast(1000), ..Qos::default() };
    fx
}
