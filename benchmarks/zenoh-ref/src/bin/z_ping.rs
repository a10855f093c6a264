//
// Follows zenoh's examples/examples/z_ping.rs at tag 1.10.2
// (Copyright (c) 2023 ZettaScale Technology, EPL-2.0 OR Apache-2.0), rewritten for mwperf's
// benchmark with a hand-parsed CLI. Behaviour kept: keys test/ping and test/pong,
// CongestionControl::Block, express unless --no-express, a warm-up of -w seconds, -n samples of
// one put then a blocking sub.recv(), per-sample lines "rtt=..µs" in whole µs.
// Added: one final "summary" line with the median and p99 in ns (the µs lines are truncated).
//
// SPDX-License-Identifier: EPL-2.0 OR Apache-2.0
//
use std::time::{Duration, Instant};

use zenoh::{bytes::ZBytes, key_expr::keyexpr, qos::CongestionControl, Wait};

#[path = "../args.rs"]
mod args;

fn main() {
    let a = args::parse(&["-n", "--samples", "-w", "--warmup"]);
    let get = |names: [&str; 2], default: &str| a.own.iter().rev().find(|(k, _)| names.contains(&k.as_str())).map_or(default.to_string(), |(_, v)| v.clone());
    let n: usize = get(["-n", "--samples"], "100").parse().unwrap_or_else(|_| args::usage("-n needs a number"));
    let warmup = Duration::from_secs_f64(get(["-w", "--warmup"], "1").parse().unwrap_or_else(|_| args::usage("-w needs seconds")));
    let size: usize = match a.positional.as_slice() {
        [s] => s.parse().unwrap_or_else(|_| args::usage("PAYLOAD_SIZE must be a number")),
        _ => args::usage("one PAYLOAD_SIZE expected"),
    };
    let session = zenoh::open(a.config).wait().unwrap();

    // The key expression to publish data on
    let key_expr_ping = keyexpr::new("test/ping").unwrap();
    // The key expression to wait the response back
    let key_expr_pong = keyexpr::new("test/pong").unwrap();

    let sub = session.declare_subscriber(key_expr_pong).wait().unwrap();
    let publisher = session.declare_publisher(key_expr_ping).congestion_control(CongestionControl::Block).express(a.express).wait().unwrap();

    let data: ZBytes = (0usize..size).map(|i| (i % 10) as u8).collect::<Vec<u8>>().into();
    let mut samples = Vec::with_capacity(n);

    // -- warmup --
    println!("Warming up for {warmup:?}...");
    let now = Instant::now();
    while now.elapsed() < warmup {
        publisher.put(data.clone()).wait().unwrap();
        let _ = sub.recv();
    }

    for _ in 0..n {
        let data = data.clone();
        let write_time = Instant::now();
        publisher.put(data).wait().unwrap();
        let _ = sub.recv();
        samples.push(write_time.elapsed());
    }

    for (i, rtt) in samples.iter().enumerate().take(n) {
        let rtt = rtt.as_micros();
        println!("{} bytes: seq={} rtt={:?}µs lat={:?}µs", size, i, rtt, rtt / 2);
    }
    let mut ns: Vec<u128> = samples.iter().map(|d| d.as_nanos()).collect();
    ns.sort_unstable();
    if !ns.is_empty() {
        let at = |q: f64| ns[((ns.len() - 1) as f64 * q).round() as usize];
        println!("summary: size={size} n={} p50_ns={} p99_ns={}", ns.len(), at(0.5), at(0.99));
    }
}
