//
// A throughput publisher for mwperf's benchmark (benchmarks/bench_throughput.py), in the spirit
// of zenoh's examples/examples/z_pub_thr.rs at 1.10.2 but mwperf's own code: puts one payload of
// PAYLOAD_SIZE bytes on key test/thr back to back, as fast as the session accepts it.
// -c block (default: reliable, CongestionControl::Block, a full queue holds the put) or
// -c drop (best-effort, CongestionControl::Drop, a full queue drops the message); express
// unless --no-express (mwperf's default). Waits for a matching subscriber, then sends for
// -d SECS (default: until killed), prints "sent msgs=N bytes=B seconds=S", and closes its
// session 200 ms later (what is still queued goes out).
//
// SPDX-License-Identifier: EPL-2.0 OR Apache-2.0
//
use std::time::{Duration, Instant};

use zenoh::{bytes::ZBytes, key_expr::keyexpr, qos::CongestionControl, Wait};

#[path = "../args.rs"]
mod args;
#[path = "../thr.rs"]
mod thr;

fn main() {
    let a = args::parse(&["-d", "--duration", "-c", "--congestion"]);
    let duration = thr::own(&a.own, ["-d", "--duration"]).map(|s| Duration::from_secs_f64(s.parse().unwrap_or_else(|_| args::usage("-d needs seconds"))));
    let congestion = match thr::own(&a.own, ["-c", "--congestion"]).unwrap_or("block") {
        "block" => CongestionControl::Block,
        "drop" => CongestionControl::Drop,
        other => args::usage(&format!("-c {other}: block or drop")),
    };
    let size: usize = match a.positional.as_slice() {
        [s] => s.parse().unwrap_or_else(|_| args::usage("PAYLOAD_SIZE must be a number")),
        _ => args::usage("one PAYLOAD_SIZE expected"),
    };
    let session = zenoh::open(a.config).wait().unwrap();
    let publisher = session.declare_publisher(keyexpr::new("test/thr").unwrap()).congestion_control(congestion).express(a.express).wait().unwrap();
    let give_up = Instant::now() + Duration::from_secs(15);
    while !publisher.matching_status().wait().unwrap().matching() {
        if Instant::now() > give_up {
            eprintln!("z_pub_thr: no subscriber matched in 15 s");
            std::process::exit(1);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    println!("matched");
    let data: ZBytes = vec![0x5au8; size].into();
    let start = Instant::now();
    let mut sent: u64 = 0;
    loop {
        publisher.put(data.clone()).wait().unwrap();
        sent += 1;
        // the clock only every 64 puts: small payloads go at millions per second
        if sent % 64 == 0 && duration.is_some_and(|d| start.elapsed() >= d) {
            break;
        }
    }
    println!("sent msgs={sent} bytes={} seconds={:.6}", sent * size as u64, start.elapsed().as_secs_f64());
    // what is still queued goes out before the session closes
    std::thread::sleep(Duration::from_millis(200));
    drop(publisher);
    session.close().wait().unwrap();
}
