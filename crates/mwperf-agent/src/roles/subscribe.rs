//! sub: receives a pub's messages and measures one-way latency on the host's shared monotonic
//! clock. Locks onto the first run id it sees unless --run-id is given. Ends --linger after the
//! end-of-stream marker, on a signal, or after --idle-timeout.
//!
//! Recording a message is the callback: with several topics under the single-threaded executor
//! it first waits for the executor (executor.rs), and the latency is taken when the callback
//! starts (publish → callback, what an application sees); then it burns `--busy-loop` of CPU.

use mwperf_core::clock::now_ns;
use mwperf_core::result::{Counters, Status};
use mwperf_core::wire::{Header, FLAG_ECHO, FLAG_FIN, FLAG_PROBE, FLAG_WARMUP};
use mwperf_transports::Endpoint;

use super::RoleOutcome;
use crate::cli::ServerArgs;
use crate::executor::Callback;
use crate::collector::Collector;
use crate::signals;

/// Receive topic `cb.topic`'s stream (messages of other topics count as foreign); `cb` = what
/// the callback does besides recording.
pub fn run(args: &ServerArgs, mut ep: Box<dyn Endpoint>, cb: Callback<'_>) -> RoleOutcome {
    let mut col: Option<Collector> = None;
    let mut run_id = args.common.run_id;
    let mut fin: Option<(u64, u64, u64, u64)> = None; // (sent, warmup_sent, period_ns, at_ns)
    let mut counters = Counters::default();
    let mut buf = Vec::with_capacity(64 * 1024);
    let wait = if args.common.busy_poll { 0 } else { 50_000_000 };
    let mut last_ns = now_ns();
    let reason = loop {
        if signals::stopped() {
            break fin.is_none().then(|| "stopped by signal before the end-of-stream marker".to_string());
        }
        let now = now_ns();
        if fin.is_some_and(|(_, _, _, at)| now > at + args.linger) {
            break None;
        }
        if args.idle_timeout.is_some_and(|t| now > last_ns + t) {
            break Some("idle timeout before the end-of-stream marker".to_string());
        }
        let Ok(Some(_)) = ep.recv(&mut buf, wait) else { continue };
        let mut recv_ns = now_ns();
        last_ns = recv_ns;
        counters.received += 1;
        let h = match Header::decode(&buf) {
            Ok(h) if h.flags & FLAG_ECHO == 0 && h.topic as usize == cb.topic && run_id.is_none_or(|id| id == h.run_id) => h,
            Ok(_) => {
                counters.foreign += 1;
                continue;
            }
            Err(r) => {
                if r.is_foreign() { counters.foreign += 1 } else { counters.malformed += 1 }
                continue;
            }
        };
        if h.flags & FLAG_PROBE != 0 {
            continue; // a ping's first-contact probe on a shared topic: not part of any stream
        }
        run_id.get_or_insert(h.run_id);
        if h.flags & FLAG_FIN != 0 {
            fin.get_or_insert((h.seq, h.intended_ns, h.peer_rx_ns, recv_ns));
            continue;
        }
        if col.is_none() {
            match Collector::new(recv_ns, 0, args.samples.as_deref()) {
                Ok(mut c) => {
                    c.watch_outage(args.common.outage_window);
                    col = Some(c)
                }
                Err(e) => return RoleOutcome::failed(format!("--samples: cannot write: {e}")),
            }
        }
        let c = col.as_mut().unwrap();
        let _turn = cb.serial.map(|s| s.enter(cb.topic, h.intended_ns));
        if _turn.is_some() {
            recv_ns = now_ns();
        }
        if h.flags & FLAG_WARMUP != 0 {
            c.seq.warmup_received += 1;
        } else {
            c.window_start(recv_ns);
            c.arrive(&h, &buf, recv_ns);
        }
        crate::busy::spin_for(cb.busy_loop_ns);
    };
    counters.connections = ep.connections();
    let Some(mut c) = col else {
        let mut out = RoleOutcome { counters: Some(counters), ..RoleOutcome::failed(reason.unwrap_or_else(|| "no message arrived".into())) };
        if fin.is_some() {
            out.status = Status::Complete; // a pub that sent nothing measured, e.g. --count with only warm-up
        }
        return out;
    };
    c.seq.foreign = counters.foreign;
    c.seq.malformed = counters.malformed;
    let (sent, warmup_sent) = match fin {
        Some((s, w, period, _)) => {
            c.late_from_histogram(period);
            (s, w)
        }
        None => (c.seq.highest().map_or(0, |h| h + 1), 0),
    };
    let payload = c.payload_bytes().unwrap_or(0);
    let outage = c.outage_counts(false);
    let m = c.finish("oneway", sent, warmup_sent, payload, 0, None);
    RoleOutcome { status: Status::Complete, reason, measurement: Some(m), counters: Some(counters), sent: None, schedule: None, warmup_ns: None, discovery: None, per_topic: Vec::new(), outage }
}
