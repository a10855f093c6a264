//
// A throughput subscriber for mwperf's benchmark (benchmarks/bench_throughput.py), in the spirit
// of zenoh's examples/examples/z_sub_thr.rs at 1.10.2 but mwperf's own code: counts the messages
// and payload bytes it receives on key test/thr in the subscriber callback (no queue, no copy)
// and every -i MILLIS (default 100) prints its running totals with the CLOCK_MONOTONIC time:
// "tp t_ns=T msgs=N bytes=B". Runs until killed.
//
// SPDX-License-Identifier: EPL-2.0 OR Apache-2.0
//
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use zenoh::{key_expr::keyexpr, Wait};

#[path = "../args.rs"]
mod args;
#[path = "../thr.rs"]
mod thr;

fn main() {
    let a = args::parse(&["-i", "--interval"]);
    let every = Duration::from_millis(thr::own(&a.own, ["-i", "--interval"]).unwrap_or("100").parse().unwrap_or_else(|_| args::usage("-i needs milliseconds")));
    if !a.positional.is_empty() {
        args::usage("z_sub_thr takes no positional arguments");
    }
    let session = zenoh::open(a.config).wait().unwrap();
    let counts = Arc::new((AtomicU64::new(0), AtomicU64::new(0)));
    let c = counts.clone();
    session
        .declare_subscriber(keyexpr::new("test/thr").unwrap())
        .callback(move |sample| {
            c.0.fetch_add(1, Relaxed);
            c.1.fetch_add(sample.payload().len() as u64, Relaxed);
        })
        .background()
        .wait()
        .unwrap();
    println!("READY");
    let mut out = std::io::stdout().lock();
    loop {
        writeln!(out, "tp t_ns={} msgs={} bytes={}", thr::monotonic_ns(), counts.0.load(Relaxed), counts.1.load(Relaxed)).unwrap();
        out.flush().unwrap();
        std::thread::sleep(every);
    }
}
