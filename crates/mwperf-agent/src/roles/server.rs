//! server: answers every request of a service's clients, one at a time in arrival order (a
//! single-threaded executor): `--server-work` of CPU work (a spin), then the reply.
//!
//! The reply is an mwperf message: the request's header (run, client, seq, its times) with
//! FLAG_ECHO, `peer_rx_ns` = the request's arrival, and `--reply-payload` bytes of the pattern
//! (default: the request's size). A request that is not mwperf's (a foreign client, e.g.
//! `rosservice call`) is answered all the same, with a reply of `--reply-payload` bytes (or the
//! request's size) whose header has seq 0, and counted as foreign. The time from a request's
//! arrival to its reply handed to the transport is the server time (measured requests only).

use mwperf_core::clock::now_ns;
use mwperf_core::result::{Counters, Serving, Status};
use mwperf_core::stats::LatencyRecorder;
use mwperf_core::wire::{fill_payload, Header, FLAG_ECHO, FLAG_PROBE, FLAG_WARMUP, HEADER_LEN};
use mwperf_transports::Server;

use super::RoleOutcome;
use crate::cli::ServeArgs;
use crate::signals;

/// Answer until stopped (SIGINT/SIGTERM) or `--idle-timeout` without a request.
pub fn run(args: &ServeArgs, mut server: Box<dyn Server>) -> RoleOutcome {
    let common = &args.server.common;
    let mut c = Counters::default();
    let mut time = LatencyRecorder::default();
    let mut rx = Vec::with_capacity(64 * 1024);
    let mut tx = Vec::with_capacity(64 * 1024);
    let wait = if common.busy_poll { 0 } else { 100_000_000 };
    let mut last_ns = now_ns();
    let reason = loop {
        if signals::stopped() {
            break None;
        }
        if args
            .server
            .idle_timeout
            .is_some_and(|t| now_ns() > last_ns + t)
        {
            break Some("idle timeout".to_string());
        }
        let token = match server.recv_request(&mut rx, wait) {
            Ok(Some(t)) => t,
            Ok(None) => continue,
            Err(e) => break Some(format!("receive failed: {e}")),
        };
        let rx_ns = now_ns();
        last_ns = rx_ns;
        c.received += 1;
        let request = Header::decode(&rx)
            .ok()
            .filter(|h| common.run_id.is_none_or(|id| id == h.run_id));
        let size = args
            .reply_payload
            .or(request.map(|h| h.payload_len as usize))
            .unwrap_or(rx.len());
        crate::busy::spin_for(args.server_work);
        if request.is_none() {
            c.foreign += 1;
        }
        encode_reply(&mut tx, request, common.run_id.unwrap_or(0), rx_ns, size);
        match server.reply(token, &tx) {
            Ok(()) => {
                c.echoed += 1;
                if request.is_some_and(|h| h.flags & (FLAG_WARMUP | FLAG_PROBE) == 0) {
                    time.record(now_ns() - rx_ns);
                    crate::allocs::message();
                }
            }
            Err(_) => c.send_errors += 1,
        }
    };
    c.connections = server.connections().unwrap_or(0);
    let serving = Serving {
        requests: c.received,
        answered: c.echoed,
        foreign: c.foreign,
        reply_errors: c.send_errors,
        work_ns: args.server_work,
        server_time: time.summary(),
        connections: server.connections(),
    };
    RoleOutcome {
        status: if reason.is_some() && c.received == 0 {
            Status::Failed
        } else {
            Status::Complete
        },
        reason,
        serving: Some(serving),
        counters: Some(c),
        ..RoleOutcome::failed("")
    }
}

/// The reply to a request that arrived at `rx_ns`, into `tx`: the request's header (`request`,
/// when it is mwperf's) with FLAG_ECHO and `peer_rx_ns` = the arrival, else a header of
/// `run_id` with seq 0; then `size` bytes of the pattern. Graph nodes' servers answer so too.
pub fn encode_reply(
    tx: &mut Vec<u8>,
    request: Option<Header>,
    run_id: u32,
    rx_ns: u64,
    size: usize,
) {
    let h = match request {
        Some(h) => Header {
            flags: h.flags | FLAG_ECHO,
            peer_rx_ns: rx_ns,
            payload_len: size as u32,
            ..h
        },
        None => Header {
            flags: FLAG_ECHO,
            run_id,
            peer_rx_ns: rx_ns,
            payload_len: size as u32,
            ..Header::default()
        },
    };
    tx.resize(HEADER_LEN + size, 0);
    fill_payload(&mut tx[HEADER_LEN..], h.seq);
    h.encode(tx);
}
