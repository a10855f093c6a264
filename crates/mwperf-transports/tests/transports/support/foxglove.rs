//! Foxglove: one mwperf foxglove-sdk relay server per fixture on a free port
//! (python/mwperf/bridges/foxglove_server.py, run by `$MWPERF_PYTHON` or python3; it needs the
//! foxglove-sdk package: `pip install foxglove-sdk`, which mwperf's own install brings).

use std::net::TcpStream;

use mwperf_transports::{History, Kind, Qos, Reliability};

use super::certs::make_certificates;
use super::{free_port, unique, Daemon, Fixture};

pub fn fixture() -> Fixture {
    served(&[], None)
}

/// The server over wss (`--tls-cert/--tls-key`: the certificate OpenSSL made, naming
/// 127.0.0.1), and the suite's endpoints trusting its CA (`--opt tls=ca=..`; the server asks
/// for no client certificate).
pub fn fixture_tls() -> Fixture {
    let dir = std::env::temp_dir().join(format!("mwperf-foxglove-tls-{}", unique("")));
    std::fs::create_dir_all(&dir).expect("make the TLS fixture's folder");
    make_certificates(&dir);
    let path = |name: &str| dir.join(name).display().to_string();
    served(
        &[
            "--tls-cert",
            &path("broker.pem"),
            "--tls-key",
            &path("broker.key"),
        ],
        Some((format!("ca={}", path("ca.pem")), dir.clone())),
    )
}

/// The server with `args`; `tls`: the endpoints' `--opt tls` and the folder the fixture owns.
fn served(args: &[&str], tls: Option<(String, std::path::PathBuf)>) -> Fixture {
    let port = free_port();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../python/mwperf/bridges/foxglove_server.py"
    );
    let python = std::env::var("MWPERF_PYTHON").unwrap_or_else(|_| "python3".into());
    let port_arg = port.to_string();
    let argv = [&[python.as_str(), script, "--port", &port_arg][..], args].concat();
    let mut server = Daemon::start("foxglove server", &argv, &[], "pip install foxglove-sdk");
    if let Some((_, dir)) = &tls {
        server = server.owning(dir.clone());
    }
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
    if let Some((opt, _)) = tls {
        fx.options = vec![("tls".to_string(), opt)];
    }
    fx.guards.push(server);
    fx
}
