//! zenoh client mode: ping and pong both connect to a router run in this process
//! (`mwperf_transports::router`, the code behind `mwperf-agent router --transport zenoh`).

#![cfg(feature = "zenoh")]

use std::time::{Duration, Instant};

use mwperf_core::wire::{build_message, Header};
use mwperf_transports::{open, router, Endpoint, Kind, Side, Spec, TransportError};

const MS: u64 = 1_000_000;

fn client_spec(addr: &str) -> Spec {
    Spec::new(addr).with_option("mode", "client")
}

fn msg(seq: u64) -> Vec<u8> {
    let mut b = Vec::new();
    build_message(
        &mut b,
        &Header {
            run_id: 7,
            seq,
            payload_len: 100,
            ..Default::default()
        },
    );
    b
}

fn recv_within(ep: &mut dyn Endpoint, buf: &mut Vec<u8>, ms: u64) -> Option<usize> {
    let end = Instant::now() + Duration::from_millis(ms);
    while Instant::now() < end {
        if let Some(n) = ep.recv(buf, 10 * MS).unwrap() {
            return Some(n);
        }
    }
    None
}

#[test]
fn roundtrips_through_an_in_process_router() {
    let r = router(Kind::Zenoh, "tcp/127.0.0.1:0", &[]).unwrap();
    let at = r.local_addr();
    assert!(
        at.starts_with("tcp/127.0.0.1:") && !at.ends_with(":0"),
        "{at}"
    );
    let mut pong = open(
        Kind::Zenoh,
        Side::Pong,
        &client_spec(&format!("{at}#client-rt")),
    )
    .unwrap();
    let addr = pong.local_addr();
    assert_eq!(addr, format!("{at}#client-rt"));
    let mut ping = open(Kind::Zenoh, Side::Ping, &client_spec(&addr)).unwrap();
    ping.wait_matched(10_000 * MS).unwrap();
    let mut buf = Vec::new();
    // First contact: the pong's publisher may learn of our subscriber a little later.
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        ping.send(&msg(0)).unwrap();
        if recv_within(pong.as_mut(), &mut buf, 20).is_some() {
            pong.send(&buf).unwrap();
            if recv_within(ping.as_mut(), &mut buf, 100).is_some() {
                break;
            }
        }
        assert!(Instant::now() < end, "no first contact through the router");
    }
    while recv_within(pong.as_mut(), &mut buf, 50).is_some() {}
    while recv_within(ping.as_mut(), &mut buf, 50).is_some() {}
    for seq in 1..=200 {
        let m = msg(seq);
        ping.send(&m).unwrap();
        recv_within(pong.as_mut(), &mut buf, 2_000).expect("pong got it");
        assert_eq!(buf, m);
        pong.send(&buf).unwrap();
        recv_within(ping.as_mut(), &mut buf, 2_000).expect("echo");
        assert_eq!(Header::decode(&buf).unwrap().seq, seq);
    }
}

#[test]
fn client_without_a_router_is_unreachable() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let t = Instant::now();
    let e = open(
        Kind::Zenoh,
        Side::Ping,
        &client_spec(&format!("tcp/127.0.0.1:{port}#x")),
    )
    .err()
    .expect("no router there");
    assert!(matches!(e, TransportError::Unreachable { .. }), "{e}");
    assert!(e.to_string().contains("mwperf-agent router"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(5));
}

#[test]
fn router_port_is_released_on_drop() {
    let r = router(Kind::Zenoh, "tcp/127.0.0.1:0", &[]).unwrap();
    let at = r.local_addr();
    drop(r);
    let again = router(Kind::Zenoh, &at, &[]).unwrap();
    assert_eq!(again.local_addr(), at);
    assert!(router(Kind::Zenoh, "tcp/127.0.0.1:0#base", &[])
        .err()
        .unwrap()
        .is_usage());
    assert!(router(Kind::Tcp, "127.0.0.1:0", &[])
        .err()
        .unwrap()
        .is_usage());
}

/// A graph node in client mode: its subscriptions and publishers of several topics share one
/// session to the router (`Spec::shared_session`), closed with the last of them.
#[test]
fn a_node_shares_one_session_to_the_router() {
    let r = router(Kind::Zenoh, "tcp/127.0.0.1:0", &[]).unwrap();
    let at = r.local_addr();
    let shared = |side: Side, base: &str| {
        open(
            Kind::Zenoh,
            side,
            &client_spec(&format!("{at}#{base}")).shared(),
        )
        .unwrap()
    };
    let mut sub = shared(Side::Sub, "node-a");
    let mut publisher = shared(Side::Pub, "node-a");
    let other = shared(Side::Pub, "node-b");
    assert_eq!(mwperf_transports::shared_sessions(Kind::Zenoh), 1);
    publisher.wait_matched(10_000 * MS).unwrap();
    let mut buf = Vec::new();
    let end = Instant::now() + Duration::from_secs(10);
    while {
        publisher.send(&msg(1)).unwrap();
        recv_within(sub.as_mut(), &mut buf, 50).is_none()
    } {
        assert!(Instant::now() < end, "nothing through the shared session");
    }
    drop((publisher, other));
    assert_eq!(mwperf_transports::shared_sessions(Kind::Zenoh), 1);
    drop(sub);
    assert_eq!(mwperf_transports::shared_sessions(Kind::Zenoh), 0);
}

/// Services in client mode: the server's queryable and the client's querier both reach each
/// other through the router.
#[test]
fn a_service_call_goes_through_the_router() {
    let r = router(Kind::Zenoh, "tcp/127.0.0.1:0", &[]).unwrap();
    let at = r.local_addr();
    let mut server =
        mwperf_transports::open_server(Kind::Zenoh, &client_spec(&format!("{at}#svc-rt"))).unwrap();
    assert_eq!(server.local_addr(), format!("{at}#svc-rt"));
    let mut client =
        mwperf_transports::open_client(Kind::Zenoh, &client_spec(&server.local_addr())).unwrap();
    client.wait_matched(10_000 * MS).unwrap();
    let (mut buf, mut req) = (Vec::new(), Vec::new());
    let end = Instant::now() + Duration::from_secs(10);
    for seq in 0..20 {
        let id = client.call(&msg(seq)).unwrap();
        let token = loop {
            if let Some(t) = server.recv_request(&mut req, 10 * MS).unwrap() {
                break t;
            }
            assert!(Instant::now() < end, "no request through the router");
        };
        assert_eq!(req, msg(seq));
        server.reply(token, &req).unwrap();
        let reply = loop {
            if let Some(r) = client.recv_reply(&mut buf, 10 * MS).unwrap() {
                break r;
            }
            assert!(Instant::now() < end, "no reply through the router");
        };
        assert_eq!((reply.call, reply.ok), (id, true));
        assert_eq!(buf, msg(seq));
    }
}
