//! Foxglove: one mwperf foxglove-sdk relay server per fixture on a free port
//! (python/mwperf/bridges/foxglove_server.py, run by `$MWPERF_PYTHON` or python3; it needs the
//! foxglove-sdk package: `pip install foxglove-sdk`, which mwperf's own install brings).

use std::net::TcpStream;

use mwperf_transports::{History, Kind, Qos, Reliability};

use super::{free_port, unique, Daemon, Fixture};

pub fn fixture() -> Fixture {
    let port = free_port();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../python/mwperf/bridges/foxglove_server.py"
    );
    let python = std::env::var("MWPERF_PYTHON").unwrap_or_else(|_| "python3".into());
    let port_arg = port.to_string();
    let mut server = Daemon::start(
        "foxglove server",
        &[&python, script, "--port", &port_arg],
        &[],
        "pip install foxglove-sdk",
    );
    server.wait_ready(20, || TcpStream::connect(("127.0.0.1", port)).is_ok());
    let mut fx = Fixture::simple(
        Kind::Foxglove,
        move |tag| format!("127.0.0.1:{port}/{}", unique(tag)),
        &format!("127.0.0.1:{port}/nobody-{}", unique("")),
    );
    fx.qos = Qos {
        reliability: Reliability::Reliable,
        history: History::KeepLast(1000),
        ..Qos::default()
    };
    fx.guards.push(server);
    fx
}
