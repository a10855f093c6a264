//! MQTT request/response against a foreign client: mosquitto's own `mosquitto_rr` (MQTT 5
//! request/response from mosquitto-clients) calls mwperf's server through the fixture's broker.

#![cfg(feature = "mqtt")]

use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use mwperf_transports::{open_server, Kind};

use crate::support;
use support::Fixture;

const RR: &str = "/usr/bin/mosquitto_rr";
const PUB: &str = "/usr/bin/mosquitto_pub";
const INSTALL: &str = "apt-get install mosquitto-clients";

/// mwperf's server answering every request with "re:" + the request, in a thread; the thread
/// returns how many it answered.
fn answerer(fx: &Fixture, tag: &str) -> (String, Arc<AtomicBool>, JoinHandle<u64>) {
    let mut server = open_server(fx.kind, &fx.spec(&fx.listen_addr(tag))).expect("server");
    let addr = server.local_addr();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || {
        let (mut buf, mut out, mut answered) = (Vec::new(), Vec::new(), 0);
        while !flag.load(Ordering::Acquire) {
            if let Some(token) = server.recv_request(&mut buf, 10_000_000).expect("recv") {
                out.clear();
                out.extend_from_slice(b"re:");
                out.extend_from_slice(&buf);
                server.reply(token, &out).expect("reply");
                answered += 1;
            }
        }
        answered
    });
    (addr, stop, thread)
}

/// `127.0.0.1:<port>/<base>` → (port, base).
fn split(addr: &str) -> (String, String) {
    let (broker, base) = addr.split_once('/').expect("broker/base");
    let port = broker.rsplit_once(':').expect("host:port").1;
    (port.to_string(), base.to_string())
}

fn run(argv: &[&str]) -> Output {
    Command::new(argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {} ({e}); install it: {INSTALL}", argv[0]))
}

#[test]
fn mosquitto_rr_calls_our_server() {
    let fx = Fixture::new(Kind::Mqtt);
    let (addr, stop, thread) = answerer(&fx, "rr");
    let (port, base) = split(&addr);
    let request = format!("mwperf/{base}/request");
    // A request without a response topic (a plain MQTT 5 publish) cannot be answered: the
    // server must skip it and go on answering.
    let out = run(&[
        PUB,
        "-h",
        "127.0.0.1",
        "-p",
        &port,
        "-V",
        "mqttv5",
        "-q",
        "1",
        "-t",
        &request,
        "-m",
        "nobody",
    ]);
    assert!(out.status.success(), "mosquitto_pub: {out:?}");
    for (i, msg) in ["hello", "again"].iter().enumerate() {
        let response = format!("rr/{base}/reply{i}");
        let out = run(&[
            RR,
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "-V",
            "mqttv5",
            "-q",
            "1",
            "-W",
            "10",
            "-t",
            &request,
            "-e",
            &response,
            "-m",
            msg,
        ]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.trim_end() == format!("re:{msg}"),
            "mosquitto_rr got {text:?} ({out:?})"
        );
    }
    stop.store(true, Ordering::Release);
    assert_eq!(thread.join().expect("server thread"), 2);
}
