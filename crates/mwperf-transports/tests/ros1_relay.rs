//! The seed experiment for ROS 1: Debian's `topic_tools relay` (roscpp, a foreign
//! implementation) is the echo. Our ping publishes `/mwperf/<base>/ping`, the relay re-publishes
//! every message untouched on `/mwperf/<base>/pong`, our ping subscribes to it.

#![cfg(feature = "ros1")]

use std::time::{Duration, Instant};

use mwperf_core::clock::now_ns;
use mwperf_core::wire::{build_message, payload_intact, Header, FLAG_PROBE, HEADER_LEN};
use mwperf_transports::{open, Endpoint, Side, Spec};

mod support;
use support::ros1::Master;

const RELAY: &str = "/usr/lib/topic_tools/relay";

fn recv_within(ep: &mut dyn Endpoint, buf: &mut Vec<u8>, ms: u64) -> Option<usize> {
    let end = now_ns() + ms * 1_000_000;
    loop {
        if let Some(n) = ep.recv(buf, 10_000_000).expect("recv") {
            return Some(n);
        }
        if now_ns() >= end {
            return None;
        }
    }
}

#[test]
fn round_trip_through_topic_tools_relay() {
    assert!(std::path::Path::new(RELAY).exists(), "{RELAY} missing: {}", support::ros1::INSTALL);
    let master = Master::start();
    let base = support::unique("relay").replace('-', "_");
    let (ping, pong) = (format!("/mwperf/{base}/ping"), format!("/mwperf/{base}/pong"));
    let _relay = master.run("relay", &[RELAY, &ping, &pong]);

    let mut ep = open(mwperf_transports::Kind::Ros1, Side::Ping, &Spec::new(format!("{}#{base}", master.uri))).expect("open ping");
    ep.wait_matched(20_000_000_000).expect("the relay subscribes to our ping topic");

    // First contact: the relay advertises its output only after its first input.
    let mut buf = Vec::new();
    let mut probe = Vec::new();
    let end = Instant::now() + Duration::from_secs(20);
    let mut probes = 0u64;
    loop {
        build_message(&mut probe, &Header { flags: FLAG_PROBE, run_id: 7, seq: probes, payload_len: 8, ..Default::default() });
        ep.send(&probe).unwrap();
        probes += 1;
        if recv_within(ep.as_mut(), &mut buf, 20).is_some() && Header::decode(&buf).is_ok_and(|h| h.flags & FLAG_PROBE != 0) {
            break;
        }
        assert!(Instant::now() < end, "no echo through the relay after {probes} probes");
    }
    while recv_within(ep.as_mut(), &mut buf, 100).is_some() {} // late probe echoes

    // Closed loop, one in flight (the relay's queues are 10 deep): nothing may be lost.
    let mut rtts = Vec::new();
    for seq in 0..200u64 {
        let size = [0usize, 8, 64, 1000, 60_000][seq as usize % 5];
        let mut m = Vec::new();
        build_message(&mut m, &Header { run_id: 7, seq, sent_ns: now_ns(), payload_len: size as u32, ..Default::default() });
        let t0 = now_ns();
        ep.send(&m).unwrap();
        recv_within(ep.as_mut(), &mut buf, 5_000).unwrap_or_else(|| panic!("echo of {seq} lost"));
        rtts.push(now_ns() - t0);
        // The relay forwards the serialized message untouched: byte for byte, unstamped.
        assert!(buf == m, "echo of {seq} differs ({} bytes, sent {})", buf.len(), m.len());
        assert!(payload_intact(&buf[HEADER_LEN..], seq));
    }
    rtts.sort_unstable();
    eprintln!("relay RTT over 200 messages: p50 {} µs, max {} µs", rtts[100] / 1000, rtts[199] / 1000);
}
