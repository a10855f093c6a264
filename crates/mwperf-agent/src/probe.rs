//! `mwperf-agent probe --transport zenoh --connect ENDPOINT [--key K]... --duration D`: subscribe
//! to a live system's keys as an ordinary subscriber (publishing nothing) and print one line per
//! message, `<arrival unix time, s.ns> <payload bytes> <key>`, for `mwperf probe --zenoh`
//! (python/mwperf/probe/zenoh.py), which summarises them like the other probes. Prints
//! `READY probe` once subscribed; stops after --duration or on SIGINT/SIGTERM.

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use mwperf_core::clock::now_ns;

use crate::cli::ProbeArgs;
use crate::signals;

pub fn run(args: &ProbeArgs) -> ExitCode {
    signals::install();
    let keys = if args.key.is_empty() {
        vec!["**".to_string()]
    } else {
        args.key.clone()
    };
    let end = now_ns().saturating_add(args.duration);
    let out = std::io::stdout();
    let mut out = BufWriter::new(out.lock());
    let _ = writeln!(out, "READY probe {}", args.connect);
    let _ = out.flush();
    let stop = || signals::stopped() || now_ns() >= end;
    let mut failed = None;
    let mut each = |at: u64, len: usize, key: &str| {
        if writeln!(
            out,
            "{}.{:09} {len} {key}",
            at / 1_000_000_000,
            at % 1_000_000_000
        )
        .is_err()
        {
            failed = Some("stdout closed");
        }
    };
    let r = mwperf_transports::probe(args.transport, &args.connect, &keys, &stop, &mut each);
    let _ = out.flush();
    match (r, failed) {
        (Err(e), _) => {
            eprintln!("mwperf-agent: error: probe: {e}");
            ExitCode::from(if e.is_usage() { 2 } else { 1 })
        }
        (Ok(()), Some(why)) => {
            eprintln!("mwperf-agent: error: probe: {why}");
            ExitCode::from(1)
        }
        (Ok(()), None) => ExitCode::SUCCESS,
    }
}
