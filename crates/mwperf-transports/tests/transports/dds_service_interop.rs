//! ROS 2 services across DDS implementations, measured: every client × server pair among
//! Cyclone DDS (rmw_cyclonedds's 16-byte header), Fast DDS (rmw_fastrtps's sample identities)
//! and RustDDS in both of its mappings (`enhanced`: sample identities as Fast DDS; `cyclone`, its
//! default: the header as Cyclone DDS), same library included. Each pair makes 20 calls on the
//! same domain and service; the test records how many were answered (the reply matched to the
//! call and carrying the request's bytes back), prints the matrix, and asserts the expected one:
//! pairs of the same mapping answer every call, pairs of different mappings none (REFERENCE-2 §1:
//! rmw_cyclonedds and rmw_fastrtps cannot call each other's services).
#![cfg(all(feature = "cyclonedds", feature = "rustdds", feature = "fastdds"))]

use mwperf_core::clock::now_ns;
use mwperf_core::wire::{build_message, Header};
use mwperf_transports::{open_client, open_server, Client, Kind, Server, Spec};

use crate::support;

const MS: u64 = 1_000_000;
const CALLS: usize = 20;

/// One side of a pair: a transport and how it matches requests to replies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lib {
    Cyclone,
    Fast,
    /// RustDDS with `--opt service-mapping=enhanced` (sample identities).
    RustEnhanced,
    /// RustDDS with its default mapping (rmw_cyclonedds's header).
    RustCyclone,
}

const LIBS: [Lib; 4] = [Lib::Cyclone, Lib::Fast, Lib::RustEnhanced, Lib::RustCyclone];

impl Lib {
    fn kind(self) -> Kind {
        match self {
            Lib::Cyclone => Kind::CycloneDds,
            Lib::Fast => Kind::FastDds,
            Lib::RustEnhanced | Lib::RustCyclone => Kind::RustDds,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Lib::Cyclone => "cyclonedds",
            Lib::Fast => "fastdds",
            Lib::RustEnhanced => "rustdds/enhanced",
            Lib::RustCyclone => "rustdds/cyclone",
        }
    }

    /// How requests find their replies on the wire: the 16-byte header or sample identities.
    fn header(self) -> bool {
        matches!(self, Lib::Cyclone | Lib::RustCyclone)
    }

    fn spec(self, addr: &str) -> Spec {
        let spec = Spec::new(addr);
        match self {
            Lib::RustEnhanced => spec.with_option("service-mapping", "enhanced"),
            _ => spec,
        }
    }
}

/// The expected number of answered calls of a pair: all when both sides use the same mapping
/// (the header, or sample identities), none otherwise. A header-less request read by a header
/// side has its first 16 bytes taken for the header and the rest for the sequence (its length
/// from the caller's bytes: rejected, or a reply the caller cannot match, having no identity);
/// a header request read by an identity side has the client's guid for a length (rejected).
fn expected(client: Lib, server: Lib) -> usize {
    if client.header() == server.header() {
        CALLS
    } else {
        0
    }
}

fn request(seq: u64) -> Vec<u8> {
    let mut b = Vec::new();
    build_message(
        &mut b,
        &Header {
            run_id: 21,
            seq,
            payload_len: 64,
            ..Default::default()
        },
    );
    b
}

/// Echo every request until `stop`; how many were answered.
fn serve(mut server: Box<dyn Server>, stop: &std::sync::atomic::AtomicBool) -> u64 {
    let (mut buf, mut answered) = (Vec::new(), 0);
    while !stop.load(std::sync::atomic::Ordering::Acquire) {
        if let Ok(Some(token)) = server.recv_request(&mut buf, 10 * MS) {
            if server.reply(token, &buf.clone()).is_ok() {
                answered += 1;
            }
        }
    }
    answered
}

/// Wait for the reply to `id` carrying `want` at most `ms`; true if it came.
fn answered(c: &mut dyn Client, id: u64, want: &[u8], ms: u64) -> bool {
    let mut buf = Vec::new();
    let end = now_ns() + ms * MS;
    while now_ns() < end {
        match c.recv_reply(&mut buf, 10 * MS) {
            Ok(Some(r)) if r.call == id && buf == want => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    false
}

/// One pair: (calls answered out of [`CALLS`], the server's count of requests it answered, a note).
fn pair(client: Lib, server: Lib, index: u32) -> (usize, u64, String) {
    let domain = 1 + (std::process::id() + 11 + 7 * index) % 200;
    let addr = format!("{domain}/{}", support::unique("srv-interop"));
    let srv = open_server(server.kind(), &server.spec(&addr))
        .unwrap_or_else(|e| panic!("{} server: {e}", server.name()));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || serve(srv, &flag));
    let mut c = open_client(client.kind(), &client.spec(&addr))
        .unwrap_or_else(|e| panic!("{} client: {e}", client.name()));
    let mut note = String::new();
    if let Err(e) = c.wait_matched(15_000 * MS) {
        note = format!("not matched: {e}");
    }
    // Discovery may still be settling in the reply direction: the first call may go unanswered.
    let mut warm = false;
    for k in 0..10 {
        let m = request(1_000 + k);
        if let Ok(id) = c.call(&m) {
            if answered(c.as_mut(), id, &m, 300) {
                warm = true;
                break;
            }
        }
    }
    let mut count = 0;
    for seq in 0..CALLS as u64 {
        let m = request(seq);
        match c.call(&m) {
            // a pair that never answered gets a short wait per call
            Ok(id) if answered(c.as_mut(), id, &m, if warm { 2_000 } else { 100 }) => count += 1,
            Ok(_) => {}
            Err(e) => {
                note = format!("call: {e}");
                break;
            }
        }
    }
    let others = c.others_replies();
    if others > 0 {
        note = format!("{note} others_replies {others}").trim().to_string();
    }
    drop(c);
    stop.store(true, std::sync::atomic::Ordering::Release);
    let served = thread.join().expect("server thread");
    (count, served, note)
}

#[test]
fn every_client_server_pair_answers_as_its_mappings_say() {
    // A row per client library, the rows side by side (each pair on a domain of its own; a pair
    // of different mappings only waits out its calls, 5 s, so one after another took ~45 s)
    let rows: Vec<Vec<(String, bool)>> = std::thread::scope(|scope| {
        let threads: Vec<_> = LIBS
            .iter()
            .enumerate()
            .map(|(row, &client)| {
                scope.spawn(move || {
                    let mut lines = Vec::new();
                    for (col, &server) in LIBS.iter().enumerate() {
                        let index = (row * LIBS.len() + col + 1) as u32;
                        let (got, served, note) = pair(client, server, index);
                        let want = expected(client, server);
                        let line = format!(
                            "{:>16} client -> {:<16} server: {got:>2}/{CALLS} answered (server answered {served} requests; expected {want}) {note}",
                            client.name(),
                            server.name()
                        );
                        lines.push((line, got == want));
                    }
                    lines
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("a row of pairs"))
            .collect()
    });
    let rows: Vec<(String, bool)> = rows.into_iter().flatten().collect();
    let wrong: Vec<&str> = rows
        .iter()
        .filter(|(_, ok)| !ok)
        .map(|(l, _)| l.as_str())
        .collect();
    let all: Vec<&str> = rows.iter().map(|(l, _)| l.as_str()).collect();
    eprintln!("\nDDS service interop matrix:\n{}", all.join("\n"));
    assert!(
        wrong.is_empty(),
        "pairs that differ from the expected matrix:\n{}",
        wrong.join("\n")
    );
}
