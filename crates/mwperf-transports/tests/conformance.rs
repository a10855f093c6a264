//! The conformance suite every transport must pass, written once and instantiated per transport
//! by `conformance!`. A new transport is done when it is added to the list at the bottom.

use std::io::Write;
use std::time::{Duration, Instant};

use mwperf_core::clock::now_ns;
use mwperf_core::wire::{build_message, payload_intact, Header, HEADER_LEN};
use mwperf_transports::{connect, listen, Endpoint, Kind, TransportError};

const MS: u64 = 1_000_000;

fn addr_for(kind: Kind, tag: &str) -> String {
    match kind {
        Kind::Udp | Kind::Tcp => "127.0.0.1:0".into(),
        Kind::Uds => {
            let p = std::env::temp_dir().join(format!("mwperf-conf-{}-{tag}.sock", std::process::id()));
            p.display().to_string()
        }
    }
}

fn pair(kind: Kind, tag: &str) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
    let server = listen(kind, &addr_for(kind, tag)).expect("listen");
    let client = connect(kind, &server.local_addr()).expect("connect");
    (server, client)
}

fn msg(seq: u64, payload: usize) -> Vec<u8> {
    let mut b = Vec::new();
    build_message(&mut b, &Header { run_id: 1, seq, payload_len: payload as u32, ..Default::default() });
    b
}

/// Receive with a bounded total wait, retrying across early (signal/poll) returns.
fn recv_within(ep: &mut dyn Endpoint, buf: &mut Vec<u8>, ms: u64) -> Result<Option<usize>, TransportError> {
    let end = now_ns() + ms * MS;
    loop {
        if let Some(n) = ep.recv(buf, 10 * MS)? {
            return Ok(Some(n));
        }
        if now_ns() >= end {
            return Ok(None);
        }
    }
}

/// Echo every message the server gets until `n` were echoed.
fn echo(server: &mut dyn Endpoint, n: usize) {
    let mut buf = Vec::new();
    let mut done = 0;
    while done < n {
        if recv_within(server, &mut buf, 5_000).unwrap().is_some() {
            server.send(&buf).unwrap();
            done += 1;
        } else {
            panic!("server got only {done} of {n}");
        }
    }
}

pub fn ordered_roundtrip_byte_exact(kind: Kind) {
    let (mut server, mut client) = pair(kind, "order");
    let sizes = [0usize, 1, 7, 8, 64, 1000, 1024, 4096, 60_000];
    let t = std::thread::spawn(move || echo(server.as_mut(), 9 * 50));
    let mut buf = Vec::new();
    for round in 0..50u64 {
        for (i, &size) in sizes.iter().enumerate() {
            let seq = round * 100 + i as u64;
            let m = msg(seq, size);
            client.send(&m).unwrap();
            let n = recv_within(client.as_mut(), &mut buf, 5_000).unwrap().expect("reply");
            assert_eq!(n, m.len());
            assert_eq!(buf, m, "{kind:?}: reply differs for seq {seq}");
        }
    }
    t.join().unwrap();
}

pub fn pipelined_messages_stay_in_order(kind: Kind) {
    let (mut server, mut client) = pair(kind, "pipe");
    for seq in 0..200 {
        client.send(&msg(seq, 100)).unwrap();
    }
    let mut buf = Vec::new();
    for seq in 0..200 {
        recv_within(server.as_mut(), &mut buf, 5_000).unwrap().expect("message");
        assert_eq!(Header::decode(&buf).unwrap().seq, seq);
    }
}

pub fn largest_message(kind: Kind) {
    let (mut server, mut client) = pair(kind, "large");
    let size = kind.max_message().unwrap_or(HEADER_LEN + 4 * 1024 * 1024) - HEADER_LEN;
    let m = msg(9, size);
    let t = std::thread::spawn(move || echo(server.as_mut(), 3));
    let mut buf = Vec::new();
    for _ in 0..3 {
        client.send(&m).unwrap();
        recv_within(client.as_mut(), &mut buf, 10_000).unwrap().expect("large reply");
        assert_eq!(buf.len(), m.len());
        assert!(payload_intact(&buf[HEADER_LEN..], 9));
    }
    t.join().unwrap();
    if let Some(max) = kind.max_message() {
        let too_big = vec![0u8; max + 1];
        assert!(matches!(client.send(&too_big), Err(TransportError::TooLarge { .. })));
    }
}

/// Both sides write large messages at once without reading first: must not deadlock.
pub fn simultaneous_large_writes_do_not_deadlock(kind: Kind) {
    if kind.max_message().is_some() {
        return; // datagrams cannot block on the peer
    }
    let (mut server, mut client) = pair(kind, "dead");
    let mut first = Vec::new();
    client.send(&msg(0, 10)).unwrap();
    recv_within(server.as_mut(), &mut first, 5_000).unwrap().unwrap();
    let big = msg(1, 1024 * 1024);
    let t = std::thread::spawn(move || {
        for _ in 0..8 {
            server.send(&big).unwrap();
        }
        let mut buf = Vec::new();
        for _ in 0..8 {
            recv_within(server.as_mut(), &mut buf, 10_000).unwrap().expect("server got big");
        }
        // Keep serving until the client has everything (a backlog moves only while its owner
        // calls into the endpoint; dropping it drains for up to a second).
        drop(server);
    });
    let big = msg(2, 1024 * 1024);
    for _ in 0..8 {
        client.send(&big).unwrap();
    }
    let mut buf = Vec::new();
    for _ in 0..8 {
        recv_within(client.as_mut(), &mut buf, 10_000).unwrap().expect("client got big");
        assert!(payload_intact(&buf[HEADER_LEN..], 1));
    }
    // The client may still hold part of its own messages in its backlog: dropping it drains
    // them while the server reads (waiting for the server first would deadlock the test).
    drop(client);
    t.join().unwrap();
}

/// Garbage reaches the receiver as a message it can classify, and service goes on afterwards.
pub fn foreign_and_malformed_input_is_survived(kind: Kind) {
    let mut server = listen(kind, &addr_for(kind, "garbage")).unwrap();
    let at = server.local_addr();
    let mut buf = Vec::new();
    let junk: &[&[u8]] = &[b"GET / HTTP/1.0\r\n\r\n", &[0xff; 3], b"MWPF", &msg(5, 100)[..70]];
    for j in junk {
        match kind {
            Kind::Udp => {
                let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
                s.send_to(j, &at).unwrap();
            }
            Kind::Tcp => {
                std::net::TcpStream::connect(&at).unwrap().write_all(j).unwrap();
            }
            Kind::Uds => {
                std::os::unix::net::UnixStream::connect(&at).unwrap().write_all(j).unwrap();
            }
        }
        // Streams may deliver a short garbage prefix only when the writer closes; either way the
        // receiver must not fail and must not hand out a valid message.
        if let Some(_) = recv_within(server.as_mut(), &mut buf, 300).unwrap() {
            assert!(Header::decode(&buf).is_err(), "{kind:?}: junk decoded as a message");
        }
    }
    let mut client = connect(kind, &at).unwrap();
    client.send(&msg(1, 32)).unwrap();
    let mut got = None;
    for _ in 0..20 {
        match recv_within(server.as_mut(), &mut buf, 250).unwrap() {
            Some(_) if Header::decode(&buf).is_ok() => {
                got = Some(Header::decode(&buf).unwrap());
                break;
            }
            _ => {}
        }
    }
    assert_eq!(got.map(|h| h.seq), Some(1), "{kind:?}: no service after junk");
}

/// The peer going away is reported (or silent for datagrams), never a panic or a hang.
pub fn peer_disappearance_is_bounded(kind: Kind) {
    let (server, mut client) = pair(kind, "gone");
    drop(server);
    let start = Instant::now();
    let mut buf = Vec::new();
    let mut outcome = Ok(None);
    for seq in 0..20 {
        if let Err(e) = client.send(&msg(seq, 10)) {
            outcome = Err(e);
            break;
        }
        outcome = client.recv(&mut buf, 20 * MS);
        if outcome.is_err() {
            break;
        }
    }
    assert!(start.elapsed() < Duration::from_secs(3));
    match outcome {
        Err(TransportError::Closed) | Err(TransportError::Unreachable { .. }) | Ok(None) => {}
        other => panic!("{kind:?}: unexpected outcome {other:?}"),
    }
}

/// recv honours its wait bound, and 0 means "do not block".
pub fn recv_wait_is_bounded(kind: Kind) {
    let (mut server, _client) = pair(kind, "wait");
    let mut buf = Vec::new();
    let t = Instant::now();
    assert!(server.recv(&mut buf, 0).unwrap().is_none());
    assert!(t.elapsed() < Duration::from_millis(50));
    let t = Instant::now();
    let _ = recv_within(server.as_mut(), &mut buf, 50);
    let e = t.elapsed();
    assert!(e >= Duration::from_millis(50) && e < Duration::from_secs(1), "{e:?}");
}

/// Dropping the listener frees its address (and socket file).
pub fn clean_shutdown_releases_the_address(kind: Kind) {
    let (server, client) = pair(kind, "reuse");
    let at = server.local_addr();
    drop(client);
    drop(server);
    if kind == Kind::Uds {
        assert!(!std::path::Path::new(&at).exists(), "socket file left behind");
    }
    let again = listen(kind, &at).expect("address reusable after drop");
    drop(again);
}

/// A second peer is served after the first one left (the two-host "rerun the ping" case).
pub fn serves_a_new_peer_after_the_first_left(kind: Kind) {
    let mut server = listen(kind, &addr_for(kind, "next")).unwrap();
    let at = server.local_addr();
    let mut buf = Vec::new();
    for who in 0..2u64 {
        let mut client = connect(kind, &at).unwrap();
        client.send(&msg(who, 16)).unwrap();
        let mut seen = false;
        for _ in 0..20 {
            if recv_within(server.as_mut(), &mut buf, 250).unwrap().is_some() && Header::decode(&buf).map(|h| h.seq) == Ok(who) {
                seen = true;
                break;
            }
        }
        assert!(seen, "{kind:?}: peer {who} not served");
        server.send(&buf).unwrap();
        recv_within(client.as_mut(), &mut buf, 2_000).unwrap().expect("reply");
    }
}

macro_rules! conformance {
    ($($module:ident => $kind:expr),* $(,)?) => {$(
        mod $module {
            use super::*;
            #[test] fn ordered_roundtrip_byte_exact() { super::ordered_roundtrip_byte_exact($kind) }
            #[test] fn pipelined_messages_stay_in_order() { super::pipelined_messages_stay_in_order($kind) }
            #[test] fn largest_message() { super::largest_message($kind) }
            #[test] fn simultaneous_large_writes_do_not_deadlock() { super::simultaneous_large_writes_do_not_deadlock($kind) }
            #[test] fn foreign_and_malformed_input_is_survived() { super::foreign_and_malformed_input_is_survived($kind) }
            #[test] fn peer_disappearance_is_bounded() { super::peer_disappearance_is_bounded($kind) }
            #[test] fn recv_wait_is_bounded() { super::recv_wait_is_bounded($kind) }
            #[test] fn clean_shutdown_releases_the_address() { super::clean_shutdown_releases_the_address($kind) }
            #[test] fn serves_a_new_peer_after_the_first_left() { super::serves_a_new_peer_after_the_first_left($kind) }
        }
    )*};
}

conformance! {
    udp => Kind::Udp,
    tcp => Kind::Tcp,
    uds => Kind::Uds,
}
