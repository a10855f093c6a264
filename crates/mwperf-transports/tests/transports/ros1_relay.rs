//! The seed experiment for ROS 1: Debian's `topic_tools relay` (roscpp, a foreign
//! implementation) is the echo. Our ping publishes `/mwperf/<base>/ping`, the relay re-publishes
//! every message untouched on `/mwperf/<base>/pong`, our ping subscribes to it.

#![cfg(feature = "ros1")]

use std::time::{Duration, Instant};

use mwperf_core::clock::now_ns;
use mwperf_core::wire::{build_message, payload_intact, Header, FLAG_PROBE, HEADER_LEN};
use mwperf_transports::{open, Endpoint, Side, Spec};

use crate::support;
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
    assert!(
        std::path::Path::new(RELAY).exists(),
        "{RELAY} missing: {}",
        support::ros1::INSTALL
    );
    let master = Master::start();
    let base = support::unique("relay").replace('-', "_");
    let (ping, pong) = (
        format!("/mwperf/{base}/ping"),
        format!("/mwperf/{base}/pong"),
    );
    let _relay = master.run("relay", &[RELAY, &ping, &pong]);

    let mut ep = open(
        mwperf_transports::Kind::Ros1,
        Side::Ping,
        &Spec::new(format!("{}#{base}", master.uri)),
    )
    .expect("open ping");
    ep.wait_matched(20_000_000_000)
        .expect("the relay subscribes to our ping topic");

    // First contact: the relay advertises its output only after its first input.
    let mut buf = Vec::new();
    let mut probe = Vec::new();
    let end = Instant::now() + Duration::from_secs(20);
    let mut probes = 0u64;
    loop {
        build_message(
            &mut probe,
            &Header {
                flags: FLAG_PROBE,
                run_id: 7,
                seq: probes,
                payload_len: 8,
                ..Default::default()
            },
        );
        ep.send(&probe).unwrap();
        probes += 1;
        if recv_within(ep.as_mut(), &mut buf, 20).is_some()
            && Header::decode(&buf).is_ok_and(|h| h.flags & FLAG_PROBE != 0)
        {
            break;
        }
        assert!(
            Instant::now() < end,
            "no echo through the relay after {probes} probes"
        );
    }
    while recv_within(ep.as_mut(), &mut buf, 100).is_some() {} // late probe echoes

    // Closed loop, one in flight (the relay's queues are 10 deep): nothing may be lost.
    let mut rtts = Vec::new();
    for seq in 0..200u64 {
        let size = [0usize, 8, 64, 1000, 60_000][seq as usize % 5];
        let mut m = Vec::new();
        build_message(
            &mut m,
            &Header {
                run_id: 7,
                seq,
                sent_ns: now_ns(),
                payload_len: size as u32,
                ..Default::default()
            },
        );
        let t0 = now_ns();
        ep.send(&m).unwrap();
        recv_within(ep.as_mut(), &mut buf, 5_000).unwrap_or_else(|| panic!("echo of {seq} lost"));
        rtts.push(now_ns() - t0);
        // The relay forwards the serialized message untouched: byte for byte, unstamped.
        assert!(
            buf == m,
            "echo of {seq} differs ({} bytes, sent {})",
            buf.len(),
            m.len()
        );
        assert!(payload_intact(&buf[HEADER_LEN..], seq));
    }
    rtts.sort_unstable();
    eprintln!(
        "relay RTT over 200 messages: p50 {} µs, max {} µs",
        rtts[100] / 1000,
        rtts[199] / 1000
    );
}

/// The text from `start` up to the next '<' in an XML-RPC answer.
fn string_from(xml: &str, start: &str) -> Option<String> {
    let i = xml.find(start)?;
    Some(xml[i..].split('<').next()?.to_string())
}

/// Our slave API answers rosmaster-style calls and survives garbage on its port.
#[test]
fn slave_api_answers_and_survives_garbage() {
    use std::io::{Read, Write};
    let master = Master::start();
    let base = support::unique("slave").replace('-', "_");
    let _pong = open(
        mwperf_transports::Kind::Ros1,
        Side::Pong,
        &Spec::new(format!("{}#{base}", master.uri)),
    )
    .expect("open pong");
    let state =
        support::ros1::call(&master.uri, "getSystemState", &["/t"]).expect("getSystemState");
    let node = string_from(&state, "/mwperf_pong_").expect("our node is registered");
    let looked =
        support::ros1::call(&master.uri, "lookupNode", &["/t", &node]).expect("lookupNode");
    let api = string_from(&looked, "http://").expect("node URI");
    let hostport = api
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    for junk in [
        &b"\x00\xff garbage\r\n\r\n"[..],
        b"POST / HTTP/1.0\r\nContent-Length: 5\r\n\r\n<a><b",
        b"POST / HTTP/1.0\r\nContent-Length: 99999999999\r\n\r\n",
        b"",
    ] {
        let mut s = std::net::TcpStream::connect(&hostport).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(junk).unwrap();
        let _ = s.shutdown(std::net::Shutdown::Write);
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
    }
    let pid = support::ros1::call(&api, "getPid", &["/t"]).expect("getPid after garbage");
    assert!(
        pid.contains(&format!("<i4>{}</i4>", std::process::id())),
        "{pid}"
    );
    let subs = support::ros1::call(&api, "getSubscriptions", &["/t"]).unwrap();
    assert!(
        subs.contains(&format!("/mwperf/{base}/ping")) && subs.contains("mwperf_msgs/Bytes"),
        "{subs}"
    );
    let refused = support::ros1::call(&api, "requestTopic", &["/t", "/not/ours"]).unwrap();
    assert!(refused.contains("does not publish"), "{refused}");
    let unknown = support::ros1::call(&api, "noSuchMethod", &[]).unwrap();
    assert!(unknown.contains("<fault>"), "{unknown}");
}

/// transient-local keep-last:1 = latching: a subscriber that comes later gets the last message.
#[test]
fn latched_message_reaches_a_late_subscriber() {
    use mwperf_transports::{Durability, History, Qos};
    let master = Master::start();
    let base = support::unique("latch").replace('-', "_");
    let addr = format!("{}#{base}", master.uri);
    let qos = Qos {
        history: History::KeepLast(1),
        durability: Durability::TransientLocal,
        ..Qos::default()
    };
    let mut publisher = open(
        mwperf_transports::Kind::Ros1,
        Side::Pub,
        &Spec::new(&addr).with_qos(qos),
    )
    .expect("open pub");
    let mut m = Vec::new();
    for seq in 0..3 {
        build_message(
            &mut m,
            &Header {
                run_id: 7,
                seq,
                payload_len: 16,
                ..Default::default()
            },
        );
        publisher.send(&m).unwrap();
    }
    let mut sub = open(
        mwperf_transports::Kind::Ros1,
        Side::Sub,
        &Spec::new(&addr).with_qos(qos),
    )
    .expect("open sub");
    let mut buf = Vec::new();
    // The publisher adopts the new subscriber (and sends it the latched message) on its next call.
    let end = Instant::now() + Duration::from_secs(10);
    let got = loop {
        let _ = publisher.recv(&mut buf, 0);
        if recv_within(sub.as_mut(), &mut buf, 20).is_some() {
            break Header::decode(&buf).unwrap().seq;
        }
        assert!(Instant::now() < end, "the latched message never arrived");
    };
    assert_eq!(got, 2, "only the last message is latched");
}
