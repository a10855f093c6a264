//! The conformance suite every transport must pass, written once and instantiated per transport
//! by `conformance!`. A new transport is done when it is added to the list at the bottom.

use std::io::Write;
use std::time::{Duration, Instant};

use mwperf_core::clock::now_ns;
use mwperf_core::wire::{build_message, payload_intact, Header, FLAG_PROBE, HEADER_LEN};
use mwperf_transports::{
    open, shared_sessions, Durability, Endpoint, Fanout, History, Kind, Qos, Reliability, Side,
    Spec, TransportError,
};

use crate::support;
use support::Fixture;

const MS: u64 = 1_000_000;
const MATCH_NS: u64 = 15_000 * MS;

fn listen_at(fx: &Fixture, addr: &str) -> Box<dyn Endpoint> {
    open(fx.kind, Side::Pong, &fx.spec(addr))
        .unwrap_or_else(|e| panic!("{:?}: listen at {addr}: {e}", fx.kind))
}

fn connect_to(fx: &Fixture, addr: &str) -> Box<dyn Endpoint> {
    let mut ep = open(fx.kind, Side::Ping, &fx.spec(addr))
        .unwrap_or_else(|e| panic!("{:?}: connect to {addr}: {e}", fx.kind));
    ep.wait_matched(MATCH_NS)
        .unwrap_or_else(|e| panic!("{:?}: not matched: {e}", fx.kind));
    ep
}

/// A listening and a connected endpoint that have exchanged a message each way (discovery done).
fn pair(fx: &Fixture, tag: &str) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
    let mut server = listen_at(fx, &fx.listen_addr(tag));
    let mut client = connect_to(fx, &server.local_addr());
    settle(fx.kind, server.as_mut(), client.as_mut());
    (server, client)
}

/// First contact both ways with probe messages, then drain leftovers: pub/sub middleware may
/// drop what is sent while discovery is still settling, and tests must not count that.
fn settle(kind: Kind, server: &mut dyn Endpoint, client: &mut dyn Endpoint) {
    let mut probe = Vec::new();
    build_message(
        &mut probe,
        &Header {
            flags: FLAG_PROBE,
            run_id: 1,
            seq: u64::MAX,
            ..Default::default()
        },
    );
    let mut buf = Vec::new();
    let mut one_way = |from: &mut dyn Endpoint, to: &mut dyn Endpoint, what: &str| {
        let end = Instant::now() + Duration::from_secs(15);
        loop {
            from.send(&probe)
                .unwrap_or_else(|e| panic!("{kind:?}: probe {what}: {e}"));
            if recv_within(to, &mut buf, 20).unwrap().is_some() {
                break;
            }
            assert!(
                Instant::now() < end,
                "{kind:?}: no probe got through {what} in 15 s"
            );
        }
    };
    one_way(client, server, "client to server");
    one_way(server, client, "server to client");
    while recv_within(server, &mut buf, 100).unwrap().is_some() {}
    while recv_within(client, &mut buf, 100).unwrap().is_some() {}
}

fn msg(seq: u64, payload: usize) -> Vec<u8> {
    let mut b = Vec::new();
    build_message(
        &mut b,
        &Header {
            run_id: 1,
            seq,
            payload_len: payload as u32,
            ..Default::default()
        },
    );
    b
}

/// Receive with a bounded total wait, retrying across early (signal/poll) returns.
fn recv_within(
    ep: &mut dyn Endpoint,
    buf: &mut Vec<u8>,
    ms: u64,
) -> Result<Option<usize>, TransportError> {
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

/// An echo server in a thread that stays alive and serviced until the client has its replies:
/// a stream backlog moves only while its owner calls in, and a middleware writer that is dropped
/// may take unacknowledged samples with it.
struct Echoer {
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Echoer {
    fn start(mut server: Box<dyn Endpoint>, n: usize) -> Echoer {
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = done.clone();
        let thread = std::thread::spawn(move || {
            echo(server.as_mut(), n);
            let mut buf = Vec::new();
            let end = Instant::now() + Duration::from_secs(30);
            while !flag.load(std::sync::atomic::Ordering::Acquire) && Instant::now() < end {
                let _ = server.recv(&mut buf, 10 * MS);
            }
        });
        Echoer { done, thread }
    }

    fn finish(self) {
        self.done.store(true, std::sync::atomic::Ordering::Release);
        self.thread.join().unwrap();
    }
}

pub fn ordered_roundtrip_byte_exact(fx: &Fixture) {
    let kind = fx.kind;
    let (server, mut client) = pair(fx, "order");
    let sizes = [0usize, 1, 7, 8, 64, 1000, 1024, 4096, 60_000];
    let echoer = Echoer::start(server, 9 * 50);
    let mut buf = Vec::new();
    for round in 0..50u64 {
        for (i, &size) in sizes.iter().enumerate() {
            let seq = round * 100 + i as u64;
            let m = msg(seq, size);
            client.send(&m).unwrap();
            let n = recv_within(client.as_mut(), &mut buf, 5_000)
                .unwrap()
                .expect("reply");
            assert_eq!(n, m.len());
            assert_eq!(buf, m, "{kind:?}: reply differs for seq {seq}");
        }
    }
    echoer.finish();
}

pub fn pipelined_messages_stay_in_order(fx: &Fixture) {
    let (mut server, mut client) = pair(fx, "pipe");
    for seq in 0..200 {
        client.send(&msg(seq, 100)).unwrap();
    }
    let mut buf = Vec::new();
    for seq in 0..200 {
        recv_within(server.as_mut(), &mut buf, 5_000)
            .unwrap()
            .expect("message");
        assert_eq!(Header::decode(&buf).unwrap().seq, seq);
    }
}

/// `recv_view` lends each message as `recv` would have copied it, in order, whether the
/// transport lends its own buffer (iceoryx2's sample, released at the next call) or the
/// caller's; `recv` and `recv_view` mix on one endpoint.
pub fn lent_messages_are_the_messages_sent(fx: &Fixture) {
    let kind = fx.kind;
    let (mut server, mut client) = pair(fx, "lent");
    let sizes = [0usize, 1, 64, 1000, 60_000];
    let mut buf = Vec::new();
    for seq in 0..40u64 {
        let m = msg(seq, sizes[seq as usize % sizes.len()]);
        client.send(&m).unwrap();
        if seq % 4 == 3 {
            let n = recv_within(server.as_mut(), &mut buf, 5_000)
                .unwrap()
                .expect("message");
            assert_eq!(
                &buf[..n],
                &m[..],
                "{kind:?}: received message differs for seq {seq}"
            );
            continue;
        }
        let end = now_ns() + 5_000 * MS;
        loop {
            if let Some(got) = server.recv_view(&mut buf, 10 * MS).unwrap() {
                assert_eq!(got, &m[..], "{kind:?}: lent message differs for seq {seq}");
                break;
            }
            assert!(now_ns() < end, "{kind:?}: no message {seq} within 5 s");
        }
    }
}

pub fn largest_message(fx: &Fixture) {
    let kind = fx.kind;
    let (server, mut client) = pair(fx, "large");
    let size = kind.max_message().unwrap_or(HEADER_LEN + 4 * 1024 * 1024) - HEADER_LEN;
    let m = msg(9, size);
    let echoer = Echoer::start(server, 3);
    let mut buf = Vec::new();
    for _ in 0..3 {
        client.send(&m).unwrap();
        recv_within(client.as_mut(), &mut buf, 10_000)
            .unwrap()
            .expect("large reply");
        assert_eq!(buf.len(), m.len());
        assert!(payload_intact(&buf[HEADER_LEN..], 9));
    }
    echoer.finish();
    if let Some(max) = kind.max_message() {
        let too_big = vec![0u8; max + 1];
        assert!(matches!(
            client.send(&too_big),
            Err(TransportError::TooLarge { .. })
        ));
    }
}

/// Both sides write large messages at once without reading first: must not deadlock.
pub fn simultaneous_large_writes_do_not_deadlock(fx: &Fixture) {
    if fx.kind.max_message().is_some() {
        return; // datagrams cannot block on the peer
    }
    let (mut server, mut client) = pair(fx, "dead");
    let mut first = Vec::new();
    client.send(&msg(0, 10)).unwrap();
    recv_within(server.as_mut(), &mut first, 5_000)
        .unwrap()
        .unwrap();
    let big = msg(1, 1024 * 1024);
    let client_done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let done = client_done.clone();
    let t = std::thread::spawn(move || {
        for _ in 0..8 {
            server.send(&big).unwrap();
        }
        let mut buf = Vec::new();
        for _ in 0..8 {
            recv_within(server.as_mut(), &mut buf, 10_000)
                .unwrap()
                .expect("server got big");
        }
        // Keep the endpoint alive and serviced until the client has everything: a stream
        // backlog moves only while its owner calls in, and a middleware writer that is dropped
        // takes its unacknowledged samples with it.
        let end = Instant::now() + Duration::from_secs(30);
        while !done.load(std::sync::atomic::Ordering::Acquire) && Instant::now() < end {
            let _ = server.recv(&mut buf, 10 * MS);
        }
    });
    let big = msg(2, 1024 * 1024);
    for _ in 0..8 {
        client.send(&big).unwrap();
    }
    let mut buf = Vec::new();
    for _ in 0..8 {
        recv_within(client.as_mut(), &mut buf, 10_000)
            .unwrap()
            .expect("client got big");
        assert!(payload_intact(&buf[HEADER_LEN..], 1));
    }
    client_done.store(true, std::sync::atomic::Ordering::Release);
    // The client may still hold part of its own messages in its backlog: keep servicing it
    // until the server has read everything (joining first would deadlock a stream transport).
    while !t.is_finished() {
        let _ = client.recv(&mut buf, 10 * MS);
    }
    t.join().unwrap();
}

/// Garbage reaches the receiver as a message it can classify, and service goes on afterwards.
/// Socket transports get raw bytes from a plain socket; middleware gets them as message bodies
/// from another endpoint of the same transport (its own framing is its library's business).
pub fn foreign_and_malformed_input_is_survived(fx: &Fixture) {
    let kind = fx.kind;
    let mut server = listen_at(fx, &fx.listen_addr("garbage"));
    let at = server.local_addr();
    let mut buf = Vec::new();
    let junk: &[&[u8]] = &[
        b"GET / HTTP/1.0\r\n\r\n",
        &[0xff; 3],
        b"MWPF",
        &msg(5, 100)[..70],
        b"",
    ];
    let mut injector =
        (!matches!(kind, Kind::Udp | Kind::Tcp | Kind::Uds)).then(|| connect_to(fx, &at));
    for j in junk {
        match (kind, injector.as_mut()) {
            (Kind::Udp, _) => {
                let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
                s.send_to(j, &at).unwrap();
            }
            (Kind::Tcp, _) => {
                std::net::TcpStream::connect(&at)
                    .unwrap()
                    .write_all(j)
                    .unwrap();
            }
            (Kind::Uds, _) => {
                std::os::unix::net::UnixStream::connect(&at)
                    .unwrap()
                    .write_all(j)
                    .unwrap();
            }
            (_, Some(ep)) => ep
                .send(j)
                .unwrap_or_else(|e| panic!("{kind:?}: sending junk: {e}")),
            (_, None) => unreachable!(),
        }
        // Streams may deliver a short garbage prefix only when the writer closes; either way the
        // receiver must not fail and must not hand out a valid message.
        if recv_within(server.as_mut(), &mut buf, 300)
            .unwrap()
            .is_some()
        {
            assert!(
                Header::decode(&buf).is_err(),
                "{kind:?}: junk decoded as a message"
            );
        }
    }
    drop(injector);
    let mut client = connect_to(fx, &at);
    let mut got = None;
    for _ in 0..40 {
        client.send(&msg(1, 32)).unwrap();
        match recv_within(server.as_mut(), &mut buf, 250).unwrap() {
            Some(_) if Header::decode(&buf).is_ok() => {
                got = Some(Header::decode(&buf).unwrap());
                break;
            }
            _ => {}
        }
    }
    assert_eq!(
        got.map(|h| h.seq),
        Some(1),
        "{kind:?}: no service after junk"
    );
}

/// The peer going away is reported (or silent for datagrams), never a panic or a hang.
pub fn peer_disappearance_is_bounded(fx: &Fixture) {
    let kind = fx.kind;
    let (server, mut client) = pair(fx, "gone");
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
pub fn recv_wait_is_bounded(fx: &Fixture) {
    let (mut server, _client) = pair(fx, "wait");
    let mut buf = Vec::new();
    let t = Instant::now();
    assert!(server.recv(&mut buf, 0).unwrap().is_none());
    assert!(t.elapsed() < Duration::from_millis(50));
    let t = Instant::now();
    let _ = recv_within(server.as_mut(), &mut buf, 50);
    let e = t.elapsed();
    assert!(
        e >= Duration::from_millis(50) && e < Duration::from_secs(1),
        "{e:?}"
    );
    // Short waits end on time too: a wait bounded by a tick-granular socket timeout sleeps a
    // 4 ms tick, and one under 1 µs may become "no timeout" and never end (iceoryx2 0.10's own
    // timed wait did both). 200 waits of 0.5–20 µs must take far less than 200 ticks.
    let kind = fx.kind;
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let t = Instant::now();
        for i in 0..200u64 {
            let _ = server.recv(&mut buf, 500 + (i % 40) * 500);
        }
        let _ = done_tx.send(t.elapsed());
        server
    });
    match done_rx.recv_timeout(Duration::from_secs(10)) {
        Ok(e) => assert!(
            e < Duration::from_millis(400),
            "{kind:?}: 200 short waits took {e:?}"
        ),
        Err(_) => panic!("{kind:?}: a recv with a wait of a few µs never returned"),
    }
    drop(waiter.join().unwrap());
}

/// Dropping the listener frees its address (and socket file, shared memory, registrations).
pub fn clean_shutdown_releases_the_address(fx: &Fixture) {
    let (server, client) = pair(fx, "reuse");
    let at = server.local_addr();
    drop(client);
    drop(server);
    if fx.kind == Kind::Uds {
        assert!(
            !std::path::Path::new(&at).exists(),
            "socket file left behind"
        );
    }
    let (mut again, mut client) = (listen_at(fx, &at), connect_to(fx, &at));
    settle(fx.kind, again.as_mut(), client.as_mut());
}

/// A second peer is served after the first one left (the two-host "rerun the ping" case).
pub fn serves_a_new_peer_after_the_first_left(fx: &Fixture) {
    let kind = fx.kind;
    let mut server = listen_at(fx, &fx.listen_addr("next"));
    let at = server.local_addr();
    let mut buf = Vec::new();
    for who in 0..2u64 {
        let mut client = connect_to(fx, &at);
        settle(kind, server.as_mut(), client.as_mut());
        client.send(&msg(who, 16)).unwrap();
        let mut seen = false;
        for _ in 0..20 {
            if recv_within(server.as_mut(), &mut buf, 250)
                .unwrap()
                .is_some()
                && Header::decode(&buf).map(|h| h.seq) == Ok(who)
            {
                seen = true;
                break;
            }
        }
        assert!(seen, "{kind:?}: peer {who} not served");
        server.send(&buf).unwrap();
        recv_within(client.as_mut(), &mut buf, 2_000)
            .unwrap()
            .expect("reply");
    }
}

/// A ping with no pong: discovery gives up in bounded time with NotMatched (socket transports
/// have no discovery and return at once).
pub fn discovery_without_a_peer_is_bounded(fx: &Fixture) {
    let mut ep = match open(fx.kind, Side::Ping, &fx.spec(&fx.nobody_addr())) {
        Ok(ep) => ep,
        Err(TransportError::Unreachable { .. }) => return, // a stream transport refuses at connect
        Err(e) => panic!("{:?}: {e}", fx.kind),
    };
    let t = Instant::now();
    let r = ep.wait_matched(300 * MS);
    let e = t.elapsed();
    assert!(e < Duration::from_secs(3), "{:?}: waited {e:?}", fx.kind);
    if fx.kind.has_discovery() {
        let err = r
            .err()
            .unwrap_or_else(|| panic!("{:?}: matched with nobody", fx.kind));
        assert!(
            matches!(err, TransportError::NotMatched { .. }),
            "{:?}: {err}",
            fx.kind
        );
        assert!(
            e >= Duration::from_millis(250),
            "{:?}: gave up after {e:?}",
            fx.kind
        );
    }
}

/// Every QoS combination is either honoured or refused as a usage error naming it; never
/// another error, never a panic.
pub fn qos_is_honoured_or_refused(fx: &Fixture) {
    let rel = [Reliability::Reliable, Reliability::BestEffort];
    let his = [
        History::KeepLast(1),
        History::KeepLast(1000),
        History::KeepAll,
    ];
    let dur = [Durability::Volatile, Durability::TransientLocal];
    let mut combos = Vec::new();
    for r in rel {
        for h in his {
            for d in dur {
                combos.push((r, h, d));
            }
        }
    }
    for (i, (r, h, d)) in combos.into_iter().enumerate() {
        let qos = Qos {
            reliability: r,
            history: h,
            durability: d,
        };
        let addr = fx.listen_addr(&format!("qos{i}"));
        match open(
            fx.kind,
            Side::Pong,
            &Spec {
                qos,
                ..fx.spec(&addr)
            },
        ) {
            Ok(_) => {}
            Err(e @ TransportError::Unsupported { .. }) => assert!(
                e.is_usage() && e.to_string().contains("not supported by"),
                "{e}"
            ),
            Err(e) => panic!("{:?}: {qos}: {e}", fx.kind),
        }
    }
    let bad = Spec {
        options: vec![("no-such-option".into(), "1".into())],
        ..fx.spec(&fx.listen_addr("opt"))
    };
    if !matches!(fx.kind, Kind::Udp | Kind::Tcp | Kind::Uds) {
        let e = open(fx.kind, Side::Pong, &bad)
            .err()
            .expect("unknown --opt refused");
        assert!(
            e.is_usage() && e.to_string().contains("no-such-option"),
            "{e}"
        );
    }
}

/// The descriptor's fan-out claim holds: a pub of a `Counted` transport counts the subscribers
/// discovery matched; every other transport says it cannot tell (None) rather than pretending.
pub fn fanout_counting_matches_the_descriptor(fx: &Fixture) {
    let kind = fx.kind;
    let sub = open(kind, Side::Sub, &fx.spec(&fx.listen_addr("fan")))
        .unwrap_or_else(|e| panic!("{kind:?}: sub: {e}"));
    let mut publisher = open(kind, Side::Pub, &fx.spec(&sub.local_addr()))
        .unwrap_or_else(|e| panic!("{kind:?}: pub: {e}"));
    publisher
        .wait_matched(MATCH_NS)
        .unwrap_or_else(|e| panic!("{kind:?}: pub not matched: {e}"));
    match kind.descriptor().fanout {
        Fanout::Counted => {
            let end = Instant::now() + Duration::from_secs(10);
            while publisher.matched_subscribers().unwrap_or(0) < 1 {
                assert!(
                    Instant::now() < end,
                    "{kind:?}: descriptor says Counted, matched_subscribers {:?}",
                    publisher.matched_subscribers()
                );
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        Fanout::Uncounted | Fanout::SenderLoops => assert_eq!(
            publisher.matched_subscribers(),
            None,
            "{kind:?}: counts subscribers, descriptor says it cannot"
        ),
    }
    drop(sub);
}

/// Send from `from` until `to` receives (discovery may still be settling), at most 15 s.
fn gets_through(kind: Kind, from: &mut dyn Endpoint, to: &mut dyn Endpoint, what: &str) {
    let mut buf = Vec::new();
    let end = Instant::now() + Duration::from_secs(15);
    loop {
        from.send(&msg(1, 32))
            .unwrap_or_else(|e| panic!("{kind:?}: send {what}: {e}"));
        from.drain(100 * MS);
        if recv_within(to, &mut buf, 50).unwrap().is_some() {
            return;
        }
        assert!(
            Instant::now() < end,
            "{kind:?}: nothing got through {what} in 15 s"
        );
    }
}

/// `Spec::shared_session` (a graph node): where the descriptor says `node_session`, a sub and a
/// pub of another topic opened with it share one session, an endpoint opened without it gets its
/// own (not a shared one), a pub of the sub's own topic (a node publishing what it subscribes to)
/// reaches it, and dropping the last endpoint closes the session. Every other transport opens no
/// shared session at all.
pub fn endpoints_share_a_session_where_asked(fx: &Fixture) {
    let kind = fx.kind;
    let want = usize::from(kind.descriptor().node_session);
    let shared = |addr: &str, side: Side| {
        open(kind, side, &fx.spec(addr).shared())
            .unwrap_or_else(|e| panic!("{kind:?}: shared {side:?} at {addr}: {e}"))
    };
    assert_eq!(
        shared_sessions(kind),
        0,
        "{kind:?}: a shared session before any"
    );
    let mut sub = shared(&fx.listen_addr("shared"), Side::Sub);
    let mut other = open(kind, Side::Sub, &fx.spec(&fx.listen_addr("own")))
        .unwrap_or_else(|e| panic!("{kind:?}: own sub: {e}"));
    assert_eq!(
        shared_sessions(kind),
        want,
        "{kind:?}: without the flag, its own"
    );
    let mut publisher = shared(&other.local_addr(), Side::Pub);
    // zenoh peers: a session connecting to the other sub's endpoint is not the one listening
    let sessions = if kind == Kind::Zenoh { 2 } else { want };
    assert_eq!(
        shared_sessions(kind),
        sessions,
        "{kind:?}: sub and pub share one"
    );
    publisher
        .wait_matched(MATCH_NS)
        .unwrap_or_else(|e| panic!("{kind:?}: shared pub not matched: {e}"));
    gets_through(
        kind,
        publisher.as_mut(),
        other.as_mut(),
        "from a shared session",
    );
    let mut own_topic = shared(&sub.local_addr(), Side::Pub);
    own_topic
        .wait_matched(MATCH_NS)
        .unwrap_or_else(|e| panic!("{kind:?}: pub of the sub's topic not matched: {e}"));
    if kind.descriptor().fanout == Fanout::Counted {
        let end = Instant::now() + Duration::from_secs(10);
        while own_topic.matched_subscribers().unwrap_or(0) < 1 {
            assert!(
                Instant::now() < end,
                "{kind:?}: the pub does not count the sub of its own node"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    gets_through(
        kind,
        own_topic.as_mut(),
        sub.as_mut(),
        "to a sub of the same node",
    );
    drop((publisher, own_topic, other));
    assert_eq!(
        shared_sessions(kind),
        want,
        "{kind:?}: the sub still holds it"
    );
    drop(sub);
    assert_eq!(
        shared_sessions(kind),
        0,
        "{kind:?}: the last drop closes it"
    );
}

macro_rules! conformance {
    ($($(#[$attr:meta])* $module:ident => $kind:expr $(; $key:literal = $value:literal)?),* $(,)?) => {$(
        $(#[$attr])*
        mod $module {
            use super::*;
            /// with transport options: in a process of its own (support::here_or_alone)
            const OWN: bool = false $(|| !$key.is_empty())?;
            fn fx() -> Fixture {
                Fixture::with($kind, &[$(($key, $value))?])
            }
            #[test] fn ordered_roundtrip_byte_exact() { if support::here_or_alone($kind, OWN) { super::ordered_roundtrip_byte_exact(&fx()) } }
            #[test] fn pipelined_messages_stay_in_order() { if support::here_or_alone($kind, OWN) { super::pipelined_messages_stay_in_order(&fx()) } }
            #[test] fn lent_messages_are_the_messages_sent() { if support::here_or_alone($kind, OWN) { super::lent_messages_are_the_messages_sent(&fx()) } }
            #[test] fn largest_message() { if support::here_or_alone($kind, OWN) { super::largest_message(&fx()) } }
            #[test] fn simultaneous_large_writes_do_not_deadlock() { if support::here_or_alone($kind, OWN) { super::simultaneous_large_writes_do_not_deadlock(&fx()) } }
            #[test] fn foreign_and_malformed_input_is_survived() { if support::here_or_alone($kind, OWN) { super::foreign_and_malformed_input_is_survived(&fx()) } }
            #[test] fn peer_disappearance_is_bounded() { if support::here_or_alone($kind, OWN) { super::peer_disappearance_is_bounded(&fx()) } }
            #[test] fn recv_wait_is_bounded() { if support::here_or_alone($kind, OWN) { super::recv_wait_is_bounded(&fx()) } }
            #[test] fn clean_shutdown_releases_the_address() { if support::here_or_alone($kind, OWN) { super::clean_shutdown_releases_the_address(&fx()) } }
            #[test] fn serves_a_new_peer_after_the_first_left() { if support::here_or_alone($kind, OWN) { super::serves_a_new_peer_after_the_first_left(&fx()) } }
            #[test] fn discovery_without_a_peer_is_bounded() { if support::here_or_alone($kind, OWN) { super::discovery_without_a_peer_is_bounded(&fx()) } }
            #[test] fn qos_is_honoured_or_refused() { if support::here_or_alone($kind, OWN) { super::qos_is_honoured_or_refused(&fx()) } }
            #[test] fn fanout_counting_matches_the_descriptor() { if support::here_or_alone($kind, OWN) { super::fanout_counting_matches_the_descriptor(&fx()) } }
            #[test] fn endpoints_share_a_session_where_asked() { if support::here_or_alone($kind, OWN) { super::endpoints_share_a_session_where_asked(&fx()) } }
        }
    )*};
}

conformance! {
    udp => Kind::Udp,
    tcp => Kind::Tcp,
    uds => Kind::Uds,
    #[cfg(feature = "iceoryx2")] iceoryx2 => Kind::Iceoryx2,
    // every message copied out of its sample (the copy-vs-zero-copy comparison's copy side)
    #[cfg(feature = "iceoryx2")] iceoryx2_copied => Kind::Iceoryx2; "loans" = "off",
    #[cfg(feature = "cyclonedds")] cyclonedds => Kind::CycloneDds,
    #[cfg(feature = "fastdds")] fastdds => Kind::FastDds,
    #[cfg(feature = "rustdds")] rustdds => Kind::RustDds,
    // the raw DDS transports carrying a real ROS 2 type (ros2_wire.rs): ROS 2's layouts, Cyclone
    // through its serialized-sample sertype, Fast DDS through its raw-CDR type
    #[cfg(feature = "cyclonedds")] cyclonedds_ros2_type => Kind::CycloneDds; "ros2-type" = "std_msgs/msg/UInt8MultiArray",
    #[cfg(feature = "fastdds")] fastdds_ros2_type => Kind::FastDds; "ros2-type" = "sensor_msgs/msg/PointCloud2",
    #[cfg(feature = "rustdds")] rustdds_ros2_type => Kind::RustDds; "ros2-type" = "sensor_msgs/msg/Image",
    #[cfg(feature = "zenoh")] zenoh => Kind::Zenoh,
    #[cfg(feature = "mqtt")] mqtt => Kind::Mqtt,
    // every case over mutual TLS (rustls under the client, mosquitto's TLS listener)
    #[cfg(feature = "mqtt")] mqtt_mtls => Kind::Mqtt; "tls" = "mtls",
    #[cfg(feature = "foxglove")] foxglove => Kind::Foxglove,
    // every case over wss (rustls under the client, the foxglove-sdk server's TLS)
    #[cfg(feature = "foxglove")] foxglove_tls => Kind::Foxglove; "tls" = "tls",
    #[cfg(feature = "ros1")] ros1 => Kind::Ros1,
    #[cfg(feature = "ros2")] ros2 => Kind::Ros2,
}
