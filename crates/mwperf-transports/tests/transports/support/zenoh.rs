//! zenoh in peer mode (no daemon): the pong listens on a free TCP port of 127.0.0.1 (port 0),
//! the ping connects to it. Client mode through a router has its own test (zenoh_client.rs).

use mwperf_transports::{History, Kind, Qos};

use super::{free_port, unique, Fixture};

pub fn fixture() -> Fixture {
    let nobody = format!("tcp/127.0.0.1:{}#{}", free_port(), unique("nobody"));
    let mut fx = Fixture::simple(
        Kind::Zenoh,
        |tag| format!("tcp/127.0.0.1:0#{}", unique(tag)),
        &nobody,
    );
    // Deep enough for the pipelined test (200 messages sent before any is read).
    fx.qos = Qos {
        history: History::KeepLast(1000),
        ..Qos::default()
    };
    fx
}
