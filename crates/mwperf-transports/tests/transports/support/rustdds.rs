//! RustDDS: no daemon; every test gets its own topic base (domain 0, like the control plane).

use super::{unique, Fixture};
use mwperf_transports::{History, Kind};

pub fn fixture() -> Fixture {
    let mut fx = Fixture::simple(
        Kind::RustDds,
        |tag| format!("0/{}", unique(tag)),
        &format!("0/nobody-{}", unique("")),
    );
    // Deep enough for the pipelined test (200 messages sent before any is read).
    fx.qos.history = History::KeepLast(1000);
    fx
}
