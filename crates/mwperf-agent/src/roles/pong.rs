//! pong: echoes every message of this run back to its sender, stamping its receive time into the
//! header (peer_rx_ns) and setting FLAG_ECHO. It does not check payloads (the ping does, so
//! corruption in either direction is caught) and never echoes what it cannot parse.
//!
//! The echo is the callback: with `--busy-loop` it first burns that much CPU, and with several
//! topics under the single-threaded executor it first waits for the executor (executor.rs).
//! `peer_rx_ns` is then the time the callback started (= the receive time on the fast path).

use mwperf_core::clock::now_ns;
use mwperf_core::result::{Counters, Status};
use mwperf_core::wire::{Header, FLAG_PROBE, FLAG_WARMUP};
use mwperf_transports::{Endpoint, Side, TransportError};

use super::RoleOutcome;
use crate::cli::ServerArgs;
use crate::executor::Callback;
use crate::signals;

/// Echo on one topic until stopped; `cb` = what the callback does besides echoing.
pub fn run(
    args: &ServerArgs,
    mut ep: Box<dyn Endpoint>,
    addr: &str,
    cb: Callback<'_>,
) -> RoleOutcome {
    let mut c = Counters::default();
    let mut buf = Vec::with_capacity(64 * 1024);
    let wait = if args.common.busy_poll {
        0
    } else {
        100_000_000
    };
    let mut last_ns = now_ns();
    let mut errors_in_a_row = 0u32;
    let mut book = crate::layers::Book::new(crate::layers::book::Side::Pong, 1 << 16);
    let reason = loop {
        if signals::stopped() {
            break None;
        }
        if args.idle_timeout.is_some_and(|t| now_ns() > last_ns + t) {
            break Some("idle timeout".to_string());
        }
        match ep.recv(&mut buf, wait) {
            Ok(Some(_)) => {
                let rx_ns = now_ns();
                last_ns = rx_ns;
                c.received += 1;
                match Header::decode(&buf) {
                    Ok(h) if crate::node::echo::wanted(&h, args.common.run_id) => {
                        let _turn = cb.serial.map(|s| s.enter(cb.topic));
                        let start_ns = if _turn.is_some() { now_ns() } else { rx_ns };
                        crate::busy::spin_for(cb.busy_loop_ns);
                        let write_ns = if book.is_some() { now_ns() } else { 0 };
                        crate::node::echo::stamped(h, start_ns).encode(&mut buf);
                        match ep.send(&buf) {
                            Ok(()) => c.echoed += 1,
                            Err(_) => c.send_errors += 1,
                        }
                        if h.flags & (FLAG_WARMUP | FLAG_PROBE) == 0 {
                            crate::allocs::message();
                            if let Some(b) = &mut book {
                                b.echo(h.run_id, h.topic, h.seq, rx_ns, start_ns, write_ns);
                            }
                        }
                    }
                    Ok(_) => c.foreign += 1,
                    Err(r) if r.is_foreign() => c.foreign += 1,
                    Err(_) => c.malformed += 1,
                }
                errors_in_a_row = 0;
            }
            Ok(None) => {}
            Err(e) if args.common.reopen && !matches!(e, TransportError::Unreachable { .. }) => {
                // --reopen: the connection or the broker went away (a restart): let go of the
                // endpoint (its address, e.g. a bound port), then open it again
                drop(ep);
                match reopen(args, addr, Side::Pong) {
                    Some(new) => ep = new,
                    None => {
                        return RoleOutcome {
                            counters: Some(c),
                            ..RoleOutcome::failed("stopped while reopening its endpoint")
                        }
                    }
                }
            }
            Err(e) => {
                // A transient receive error must not end a server; a persistent one must not spin.
                errors_in_a_row += 1;
                if errors_in_a_row > 100 {
                    return RoleOutcome {
                        counters: Some(c),
                        ..RoleOutcome::failed(format!("receive keeps failing: {e}"))
                    };
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    };
    c.connections = ep.connections();
    drop(book);
    super::park(ep); // closed once the report is out
    RoleOutcome {
        status: Status::Complete,
        reason,
        measurement: None,
        counters: Some(c),
        sent: None,
        schedule: None,
        warmup_ns: None,
        discovery: None,
        per_topic: Vec::new(),
        outage: None,
        serving: None,
        throughput: None,
    }
}

/// `--reopen`: open the `side` endpoint at `addr` again, every 10 ms until it opens (printing
/// `REOPENED <ns>` on stdout) or the agent is told to stop (None). A pong's and a sub's.
pub(crate) fn reopen(args: &ServerArgs, addr: &str, side: Side) -> Option<Box<dyn Endpoint>> {
    let common = &args.common;
    while !signals::stopped() {
        let opened = common
            .spec(addr)
            .map_err(TransportError::Address)
            .and_then(|spec| mwperf_transports::open(common.transport, side, &spec));
        if let Ok(ep) = opened {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "REOPENED {}", now_ns());
            let _ = out.flush();
            return Some(ep);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    None
}
