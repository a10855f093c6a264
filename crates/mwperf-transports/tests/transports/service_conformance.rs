//! The conformance suite of request/response (crate::service), written once and instantiated
//! per transport that has services by `service_conformance!` at the bottom; every transport whose
//! descriptor says it has none must refuse both sides with a usage error naming why.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mwperf_core::clock::now_ns;
use mwperf_core::wire::{build_message, payload_intact, Header, HEADER_LEN};
use mwperf_transports::{open_client, open_server, Client, Kind, Reply, TransportError};

use crate::support;
use support::Fixture;

const MS: u64 = 1_000_000;
const MATCH_NS: u64 = 15_000 * MS;

fn request(seq: u64, payload: usize) -> Vec<u8> {
    let mut b = Vec::new();
    build_message(
        &mut b,
        &Header {
            run_id: 7,
            seq,
            payload_len: payload as u32,
            ..Default::default()
        },
    );
    b
}

/// A server answering every request in a thread: the reply is an mwperf message with the
/// request's seq (the socket baseline's call id) and `reply_payload` pattern bytes, and
/// `tag` in the header's run_id (which server answered).
struct Answerer {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<u64>,
    addr: String,
}

impl Answerer {
    fn start(fx: &Fixture, tag: &str, reply_payload: usize, server_tag: u32) -> Answerer {
        let mut server = open_server(fx.kind, &fx.spec(&fx.listen_addr(tag)))
            .unwrap_or_else(|e| panic!("{:?}: server: {e}", fx.kind));
        let addr = server.local_addr();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let (mut buf, mut out, mut answered) = (Vec::new(), Vec::new(), 0u64);
            while !flag.load(Ordering::Acquire) {
                match server.recv_request(&mut buf, 10 * MS) {
                    Ok(Some(token)) => {
                        let seq = Header::decode(&buf).map(|h| h.seq).unwrap_or(u64::MAX);
                        build_message(
                            &mut out,
                            &Header {
                                run_id: server_tag,
                                seq,
                                payload_len: reply_payload as u32,
                                ..Default::default()
                            },
                        );
                        server.reply(token, &out).expect("reply");
                        answered += 1;
                    }
                    Ok(None) => {}
                    Err(e) => panic!("server: {e}"),
                }
            }
            answered
        });
        Answerer { stop, thread, addr }
    }

    fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Release);
        self.thread.join().expect("server thread")
    }
}

fn client_of(fx: &Fixture, addr: &str) -> Box<dyn Client> {
    let mut c = open_client(fx.kind, &fx.spec(addr))
        .unwrap_or_else(|e| panic!("{:?}: client of {addr}: {e}", fx.kind));
    c.wait_matched(MATCH_NS)
        .unwrap_or_else(|e| panic!("{:?}: client not matched: {e}", fx.kind));
    c
}

/// Wait for one reply at most `ms`, across early returns.
fn reply_within(
    c: &mut dyn Client,
    buf: &mut Vec<u8>,
    ms: u64,
) -> Result<Option<Reply>, TransportError> {
    let end = now_ns() + ms * MS;
    loop {
        if let Some(r) = c.recv_reply(buf, 10 * MS)? {
            return Ok(Some(r));
        }
        if now_ns() >= end {
            return Ok(None);
        }
    }
}

/// The first call may be lost while discovery settles (middleware): call until one is answered.
fn first_answer(kind: Kind, c: &mut dyn Client) {
    let mut buf = Vec::new();
    let end = Instant::now() + Duration::from_secs(15);
    let mut seq = 1_000_000;
    loop {
        let id = c.call(&request(seq, 8)).expect("call");
        let deadline = now_ns() + 300 * MS;
        while now_ns() < deadline {
            if let Some(r) = reply_within(c, &mut buf, 20).unwrap() {
                if r.call == id {
                    // drain late answers of earlier tries
                    while reply_within(c, &mut buf, 100).unwrap().is_some() {}
                    return;
                }
            }
        }
        assert!(Instant::now() < end, "{kind:?}: no call answered in 15 s");
        seq += 1;
    }
}

fn calls_are_answered_byte_exact(fx: &Fixture) {
    let server = Answerer::start(fx, "exact", 300, 11);
    let mut c = client_of(fx, &server.addr);
    first_answer(fx.kind, c.as_mut());
    let mut buf = Vec::new();
    for seq in 0..50u64 {
        let id = c.call(&request(seq, 100)).expect("call");
        let r = reply_within(c.as_mut(), &mut buf, 5_000)
            .unwrap()
            .unwrap_or_else(|| panic!("{:?}: call {seq} not answered", fx.kind));
        assert_eq!(r.call, id, "{:?}: reply matched to another call", fx.kind);
        assert!(r.ok);
        let h = Header::decode(&buf).expect("the server's reply, byte for byte");
        assert_eq!((h.run_id, h.seq, buf.len()), (11, seq, HEADER_LEN + 300));
        assert!(payload_intact(&buf[HEADER_LEN..], seq));
    }
    drop(c);
    assert!(server.stop() >= 50);
}

fn calls_in_flight_are_each_matched_once(fx: &Fixture) {
    let server = Answerer::start(fx, "inflight", 64, 12);
    let mut c = client_of(fx, &server.addr);
    first_answer(fx.kind, c.as_mut());
    let in_flight = c.max_in_flight().unwrap_or(8).min(8);
    let mut buf = Vec::new();
    let (mut outstanding, mut answered) = (HashMap::new(), HashSet::new());
    let mut next = 0u64;
    while answered.len() < 200 {
        while outstanding.len() < in_flight && next < 200 {
            let id = c.call(&request(next, 64)).expect("call");
            assert!(
                outstanding.insert(id, next).is_none(),
                "{:?}: call id {id} given twice",
                fx.kind
            );
            next += 1;
        }
        let r = reply_within(c.as_mut(), &mut buf, 5_000)
            .unwrap()
            .unwrap_or_else(|| panic!("{:?}: {} calls unanswered", fx.kind, outstanding.len()));
        let seq = outstanding
            .remove(&r.call)
            .unwrap_or_else(|| panic!("{:?}: reply to no outstanding call {}", fx.kind, r.call));
        assert_eq!(Header::decode(&buf).unwrap().seq, seq, "{:?}", fx.kind);
        answered.insert(seq);
    }
    drop(c);
    server.stop();
}

fn each_client_gets_only_its_own_replies(fx: &Fixture) {
    let server = Answerer::start(fx, "two", 32, 13);
    let mut a = client_of(fx, &server.addr);
    let mut b = client_of(fx, &server.addr);
    first_answer(fx.kind, a.as_mut());
    first_answer(fx.kind, b.as_mut());
    let mut buf = Vec::new();
    for round in 0..20u64 {
        let ida = a.call(&request(2 * round, 16)).expect("call a");
        let idb = b.call(&request(2 * round + 1, 16)).expect("call b");
        let ra = reply_within(a.as_mut(), &mut buf, 5_000)
            .unwrap()
            .expect("a answered");
        assert_eq!(
            (ra.call, Header::decode(&buf).unwrap().seq),
            (ida, 2 * round)
        );
        let rb = reply_within(b.as_mut(), &mut buf, 5_000)
            .unwrap()
            .expect("b answered");
        assert_eq!(
            (rb.call, Header::decode(&buf).unwrap().seq),
            (idb, 2 * round + 1)
        );
    }
    assert!(reply_within(a.as_mut(), &mut buf, 100).unwrap().is_none());
    drop((a, b));
    server.stop();
}

fn large_request_and_reply(fx: &Fixture) {
    let size = fx
        .kind
        .max_message()
        .map_or(256 * 1024, |m| m.min(256 * 1024))
        - HEADER_LEN;
    let server = Answerer::start(fx, "large", size, 14);
    let mut c = client_of(fx, &server.addr);
    first_answer(fx.kind, c.as_mut());
    let mut buf = Vec::new();
    for seq in 0..5u64 {
        let id = c.call(&request(seq, size)).expect("call");
        let r = reply_within(c.as_mut(), &mut buf, 10_000)
            .unwrap()
            .unwrap_or_else(|| panic!("{:?}: large call {seq} not answered", fx.kind));
        assert_eq!(r.call, id);
        assert_eq!(buf.len(), HEADER_LEN + size);
        assert!(payload_intact(&buf[HEADER_LEN..], seq));
    }
    drop(c);
    server.stop();
}

fn recv_waits_are_bounded(fx: &Fixture) {
    let server = Answerer::start(fx, "bounded", 8, 15);
    let mut c = client_of(fx, &server.addr);
    let mut buf = Vec::new();
    let t = Instant::now();
    assert!(c.recv_reply(&mut buf, 50 * MS).unwrap().is_none());
    assert!(t.elapsed() < Duration::from_millis(1_000), "{:?}", fx.kind);
    drop(c);
    server.stop();
}

fn a_server_gone_means_no_reply_not_a_hang(fx: &Fixture) {
    let server = Answerer::start(fx, "gone", 8, 16);
    let addr = server.addr.clone();
    let mut c = client_of(fx, &addr);
    first_answer(fx.kind, c.as_mut());
    server.stop(); // and dropped
    std::thread::sleep(Duration::from_millis(200));
    let mut buf = Vec::new();
    let t = Instant::now();
    if let Ok(id) = c.call(&request(1, 8)) {
        if let Ok(Some(r)) = reply_within(c.as_mut(), &mut buf, 500) {
            assert!(!r.ok || r.call != id, "{:?}: answered by nobody", fx.kind);
        }
        c.abandon(id);
    }
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}: hung", fx.kind);
}

macro_rules! service_conformance {
    ($($(#[$attr:meta])* $module:ident => $kind:expr),* $(,)?) => {$(
        $(#[$attr])*
        mod $module {
            use super::*;
            fn fx() -> Fixture { Fixture::new($kind) }
            #[test] fn calls_are_answered_byte_exact() { if support::here($kind) { super::calls_are_answered_byte_exact(&fx()) } }
            #[test] fn calls_in_flight_are_each_matched_once() { if support::here($kind) { super::calls_in_flight_are_each_matched_once(&fx()) } }
            #[test] fn each_client_gets_only_its_own_replies() { if support::here($kind) { super::each_client_gets_only_its_own_replies(&fx()) } }
            #[test] fn large_request_and_reply() { if support::here($kind) { super::large_request_and_reply(&fx()) } }
            #[test] fn recv_waits_are_bounded() { if support::here($kind) { super::recv_waits_are_bounded(&fx()) } }
            #[test] fn a_server_gone_means_no_reply_not_a_hang() { if support::here($kind) { super::a_server_gone_means_no_reply_not_a_hang(&fx()) } }
        }
    )*};
}

service_conformance! {
    udp => Kind::Udp,
    #[cfg(feature = "ros1")] ros1 => Kind::Ros1,
    #[cfg(feature = "mqtt")] mqtt => Kind::Mqtt,
    #[cfg(feature = "cyclonedds")]
    cyclonedds => Kind::CycloneDds,
    #[cfg(feature = "rustdds")]
    rustdds => Kind::RustDds,
    #[cfg(feature = "fastdds")]
    fastdds => Kind::FastDds,
    tcp => Kind::Tcp,
    uds => Kind::Uds,
    #[cfg(feature = "zenoh")]
    zenoh => Kind::Zenoh,
    #[cfg(feature = "iceoryx2")]
    iceoryx2 => Kind::Iceoryx2,
    #[cfg(feature = "ros2")]
    ros2 => Kind::Ros2,
}

#[test]
fn transports_without_services_refuse_both_sides_naming_why() {
    for kind in Kind::ALL.iter().copied().filter(|k| k.built()) {
        let services = kind.descriptor().services;
        if services.supported() {
            continue;
        }
        let spec = mwperf_transports::Spec::new("whatever");
        for e in [
            open_client(kind, &spec).err().expect("refused"),
            open_server(kind, &spec).err().expect("refused"),
        ] {
            assert!(e.is_usage(), "{kind:?}: {e}");
            assert!(e.to_string().contains(services.text()), "{kind:?}: {e}");
        }
    }
}
