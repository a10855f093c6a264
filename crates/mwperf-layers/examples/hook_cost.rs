//! What the interposer adds to a system call: N `send` + `recv` pairs over loopback UDP, with
//! and without `LD_PRELOAD=libmwperf_layers.so`, messages of 64 B and 1 KiB, with an mwperf
//! header (stamped and logged) and without one (scanned only). Each measurement is a fresh
//! process reporting its median pair (preemption on a busy machine does not move it);
//! preloaded and plain runs alternate, and the median of the repetitions is reported (and the
//! difference of the fastest repetitions, the cost with the least interference).
//!
//! ```text
//! cargo build --release -p mwperf-layers --examples
//! $CARGO_TARGET_DIR/release/examples/hook_cost $CARGO_TARGET_DIR/release/libmwperf_layers.so [reps] [pairs]
//! ```

use std::net::UdpSocket;
use std::process::Command;
use std::time::Instant;

use mwperf_core::wire::{build_message, Header, HEADER_LEN};

fn child(size: usize, header: bool, pairs: usize) -> f64 {
    let rx = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let tx = UdpSocket::bind("127.0.0.1:0").expect("bind");
    tx.connect(rx.local_addr().expect("addr")).expect("connect");
    let mut msg = vec![0x5au8; size];
    if header {
        build_message(
            &mut msg,
            &Header {
                run_id: 1,
                payload_len: (size - HEADER_LEN) as u32,
                ..Header::default()
            },
        );
    }
    let mut buf = vec![0u8; 2048];
    let mut took = Vec::with_capacity(pairs);
    let mut run = |n: usize, took: &mut Vec<f64>| {
        for _ in 0..n {
            let t = Instant::now();
            tx.send(&msg).expect("send");
            rx.recv(&mut buf).expect("recv");
            took.push(t.elapsed().as_nanos() as f64);
        }
    };
    run(pairs / 10, &mut Vec::with_capacity(pairs / 10)); // warm up
    run(pairs, &mut took);
    // the median pair: a preempted or interrupted pair does not move it
    median(&mut took)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child") {
        let size: usize = args[2].parse().expect("size");
        let header = args[3] == "header";
        let pairs: usize = args[4].parse().expect("pairs");
        println!("{}", child(size, header, pairs));
        return;
    }
    let Some(lib) = args.get(1) else {
        eprintln!("usage: hook_cost PATH/libmwperf_layers.so [reps] [pairs]");
        std::process::exit(2);
    };
    let reps: usize = args.get(2).map_or(7, |s| s.parse().expect("reps"));
    let pairs: usize = args.get(3).map_or(100_000, |s| s.parse().expect("pairs"));
    let exe = std::env::current_exe().expect("exe");
    println!(
        "send+recv pairs over loopback UDP, {pairs} per process (its median pair), median of \
         {reps} interleaved runs; added = per call (half a pair)"
    );
    println!(
        "{:>6} {:>7} {:>9} {:>11} {:>14} {:>18}",
        "size", "header", "plain ns", "preload ns", "added ns/call", "fastest: added"
    );
    for size in [64usize, 1024] {
        for header in [false, true] {
            let (mut plain, mut pre) = (Vec::new(), Vec::new());
            for _ in 0..reps {
                for preload in [false, true] {
                    let mut c = Command::new(&exe);
                    c.args([
                        "--child",
                        &size.to_string(),
                        if header { "header" } else { "none" },
                        &pairs.to_string(),
                    ]);
                    c.env_remove("LD_PRELOAD");
                    if preload {
                        c.env("LD_PRELOAD", lib);
                    }
                    let out = c.output().expect("run child");
                    assert!(
                        out.status.success(),
                        "{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    let ns: f64 = String::from_utf8_lossy(&out.stdout)
                        .trim()
                        .parse()
                        .expect("ns");
                    if preload {
                        pre.push(ns)
                    } else {
                        plain.push(ns)
                    }
                }
            }
            let (a, b) = (median(&mut plain), median(&mut pre));
            let (fa, fb) = (plain[0], pre[0]); // sorted by median()
            println!(
                "{size:>6} {:>7} {a:>9.0} {b:>11.0} {:>14.1} {:>18.1}",
                if header { "yes" } else { "no" },
                (b - a) / 2.0,
                (fb - fa) / 2.0
            );
        }
    }
}
