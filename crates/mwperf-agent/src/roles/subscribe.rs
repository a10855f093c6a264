//! sub: receives a pub's messages and measures one-way latency on the host's shared monotonic
//! clock. Locks onto the first run id it sees unless --run-id is given. Ends --linger after the
//! end-of-stream marker, on a signal, or after --idle-timeout.
//!
//! Recording a message is the callback: with several topics under the single-threaded executor
//! it first waits for the executor (executor.rs), and the latency is taken when the callback
//! starts (publish → callback, what an application sees); then it burns `--busy-loop` of CPU.
//!
//! With `--reopen` (`mwperf run --restart sub@T`) every raw sample (`--samples`) is written out
//! as it is recorded: a killed sub leaves what it received on disk for the control plane; and a
//! sub whose endpoint fails (a broker, router or server restarted: `--restart mosquitto@T` one
//! way) opens it again every 10 ms, printing `REOPENED <ns>`, as a pong does.

use mwperf_core::clock::now_ns;
use mwperf_core::clocksync::Fit;
use mwperf_core::result::ClockSync;
use mwperf_core::result::{Counters, Status};
use mwperf_core::wire::{
    check_every, payload_intact_sampled, Header, FLAG_ECHO, FLAG_FIN, FLAG_PROBE, FLAG_RECORDED,
    FLAG_WARMUP, HEADER_LEN,
};
use mwperf_transports::{Endpoint, Side, TransportError};

use super::RoleOutcome;
use crate::cli::ServerArgs;
use crate::clocksync::buffer::{Arrival, Correction, Deferred, CAPACITY};
use crate::clocksync::client::Client;
use crate::collector::Collector;
use crate::executor::Callback;
use crate::signals;

/// Receive topic `cb.topic`'s stream (messages of other topics count as foreign) on the
/// endpoint at `addr`; `cb` = what the callback does besides recording.
pub fn run(args: &ServerArgs, ep: Box<dyn Endpoint>, addr: &str, cb: Callback<'_>) -> RoleOutcome {
    let mut col: Option<Collector> = None;
    // --reopen: None while the endpoint is being opened again (and when that was stopped)
    let mut ep = Some(ep);
    let mut reopened_connections = 0;
    // --clock-peer: arrivals wait in a bounded FIFO for the final offset/drift fit (clocksync)
    let mut sync = match args.clock_peer.map(|peer| ClockSyncing::start(peer, args)) {
        Some(Ok(s)) => Some(s),
        Some(Err(e)) => return RoleOutcome::failed(e),
        None => None,
    };
    let mut run_id = args.common.run_id;
    let mut fin: Option<(u64, u64, u64, u64)> = None; // (sent, warmup_sent, period_ns, at_ns)
    let mut counters = Counters::default();
    let mut buf = Vec::with_capacity(64 * 1024);
    let wait = if args.common.busy_poll { 0 } else { 50_000_000 };
    let mut last_ns = now_ns();
    let mut steady = args.throughput.then(crate::throughput::SteadyCpu::default);
    let mut book = crate::layers::Book::new(crate::layers::book::Side::Sub, 1 << 16);
    // just after an arrival: its receive instant stands for "now" at the loop's top (the end
    // checks need no fresher one; one clock read per message fewer); None: read the clock
    let mut arrived_ns: Option<u64> = None;
    let reason = loop {
        if signals::stopped() {
            break fin
                .is_none()
                .then(|| "stopped by signal before the end-of-stream marker".to_string());
        }
        let now = arrived_ns.take().unwrap_or_else(now_ns);
        if fin.is_some_and(|(_, _, _, at)| now > at + args.linger) {
            break None;
        }
        if args.idle_timeout.is_some_and(|t| now > last_ns + t) {
            break Some("idle timeout before the end-of-stream marker".to_string());
        }
        let Some(open) = ep.as_mut() else {
            break Some("stopped while reopening its endpoint".to_string());
        };
        // lent where the middleware lends (iceoryx2: read in shared memory, no copy)
        let got = open.recv_view(&mut buf, wait);
        let Ok(Some(msg)) = got else {
            if let Err(e) = got {
                if args.common.reopen && !matches!(e, TransportError::Unreachable { .. }) {
                    // --reopen: the broker, router or server went away (a restart): let go of
                    // the endpoint (its address), then open it again
                    if let Some(old) = ep.take() {
                        reopened_connections += old.connections();
                    }
                    ep = super::pong::reopen(args, addr, Side::Sub);
                }
            }
            continue;
        };
        let mut recv_ns = now_ns();
        let take_ns = recv_ns;
        last_ns = recv_ns;
        arrived_ns = Some(recv_ns);
        let h = match take(msg, cb.topic, &mut run_id, &mut counters) {
            Taken::Not => continue,
            Taken::Fin(h) => {
                fin.get_or_insert(fin_of(&h, recv_ns));
                if let Some(c) = sync.as_ref().and_then(|s| s.client.as_ref()) {
                    c.end_of_stream();
                }
                continue;
            }
            Taken::Message(h) => h,
        };
        // the callback starts when it holds the executor (several topics, single-threaded)
        let _turn = cb.serial.map(|s| s.enter(cb.topic));
        if _turn.is_some() {
            recv_ns = now_ns();
        }
        if let Some(s) = &mut sync {
            // recorded at the end, on the pub's clock; the payload is checked now (in full)
            if h.flags & FLAG_WARMUP != 0 {
                s.warmup_received += 1;
            } else {
                if let Some(st) = &mut steady {
                    st.message(recv_ns);
                }
                let every = if steady.is_some() {
                    check_every(h.payload_len as usize)
                } else {
                    1
                };
                let intact = h.flags & FLAG_RECORDED != 0
                    || payload_intact_sampled(&msg[HEADER_LEN..], h.seq, every);
                if let Some(old) = s.kept.push(Arrival::new(&h, intact, recv_ns)) {
                    let fit = s.client.as_ref().and_then(Client::running_fit);
                    if let Err(e) = s.record(&mut col, old, fit.as_ref(), false, args) {
                        return RoleOutcome::failed(e);
                    }
                }
            }
            if let (Some(b), false) = (&mut book, h.flags & FLAG_WARMUP != 0) {
                b.received(h.run_id, h.topic, h.seq, take_ns, recv_ns); // on this host's clock
            }
            crate::busy::spin_for(cb.busy_loop_ns);
            continue;
        }
        let c = match collector(&mut col, recv_ns, args) {
            Ok(c) => c,
            Err(e) => return RoleOutcome::failed(e),
        };
        if h.flags & FLAG_WARMUP != 0 {
            c.seq.warmup_received += 1;
        } else if let Some(s) = &mut steady {
            // a throughput stream: large payloads are checked in full every Nth message
            s.message(recv_ns);
            c.sub_window_start(recv_ns);
            let every = check_every(h.payload_len as usize);
            let intact = h.flags & FLAG_RECORDED != 0
                || payload_intact_sampled(&msg[HEADER_LEN..], h.seq, every);
            c.arrive_checked(&h, intact, recv_ns);
        } else {
            c.sub_window_start(recv_ns);
            c.arrive(&h, msg, recv_ns);
        }
        crate::busy::spin_for(cb.busy_loop_ns);
        if h.flags & FLAG_WARMUP == 0 {
            crate::allocs::message();
            if let Some(b) = &mut book {
                b.received(h.run_id, h.topic, h.seq, take_ns, recv_ns);
            }
        }
    };
    drop(book);
    counters.connections = reopened_connections + ep.as_ref().map_or(0, |e| e.connections());
    if let Some(ep) = ep.take() {
        super::park(ep); // closed once the report is out
    }
    let throughput = steady.as_ref().and_then(|s| {
        let end = fin.map_or(last_ns, |(_, _, _, at)| at);
        s.finish(end).map(|mut side| {
            side.checked_every = col
                .as_ref()
                .and_then(Collector::payload_bytes)
                .map(|p| check_every(p as usize));
            side
        })
    });
    let mut clock_sync = None;
    if let Some(s) = sync.take() {
        match s.finish(&mut col, args) {
            Ok(cs) => clock_sync = Some(cs),
            Err(e) => return RoleOutcome::failed(e),
        }
    }
    outcome(args, col, counters, fin, reason, throughput, clock_sync)
}

/// What one arrival is to the sub's stream.
enum Taken {
    /// Not the stream's: another run's or topic's, an echo, a ping's first-contact probe, a
    /// buffer that is not mwperf's (counted foreign or malformed, probes not at all).
    Not,
    /// The end-of-stream marker.
    Fin(Header),
    /// One of the stream's messages (warm-up or measured).
    Message(Header),
}

/// Count and classify the arrival in `buf` for topic `topic`; the sub locks onto the first run
/// id it takes (`run_id`, unless given).
fn take(buf: &[u8], topic: usize, run_id: &mut Option<u32>, counters: &mut Counters) -> Taken {
    counters.received += 1;
    let h = match Header::decode(buf) {
        Ok(h)
            if h.flags & FLAG_ECHO == 0
                && h.topic as usize == topic
                && run_id.is_none_or(|id| id == h.run_id) =>
        {
            h
        }
        Ok(_) => {
            counters.foreign += 1;
            return Taken::Not;
        }
        Err(r) => {
            if r.is_foreign() {
                counters.foreign += 1
            } else {
                counters.malformed += 1
            }
            return Taken::Not;
        }
    };
    if h.flags & FLAG_PROBE != 0 {
        return Taken::Not; // a ping's first-contact probe on a shared topic: not part of any stream
    }
    run_id.get_or_insert(h.run_id);
    if h.flags & FLAG_FIN != 0 {
        return Taken::Fin(h);
    }
    Taken::Message(h)
}

/// The end-of-stream marker's (sent, warm-up sent, period, arrival) as the sub keeps it.
fn fin_of(h: &Header, recv_ns: u64) -> (u64, u64, u64, u64) {
    (h.seq, h.intended_ns, h.peer_rx_ns, recv_ns)
}

/// The sub's collector, made at the first arrival it records (`recv_ns`: its series' origin).
fn collector<'c>(
    col: &'c mut Option<Collector>,
    recv_ns: u64,
    args: &ServerArgs,
) -> Result<&'c mut Collector, String> {
    if col.is_none() {
        let mut c = Collector::new(recv_ns, 0, args.samples.as_deref())
            .map_err(|e| format!("--samples: cannot write: {e}"))?;
        c.watch_outage(args.common.outage_window);
        c.flush_each(args.common.reopen);
        *col = Some(c);
    }
    Ok(col.as_mut().expect("made above"))
}

/// `sub --arrivals FILE`: the arrivals another program's subscriber took (an rclpy node:
/// python/mwperf/ros2/stream_sub.py), measured as this sub measures its own. The file is a log
/// in node/collect.rs's record format (index 0, each message at the instant its callback
/// started), written once the program stopped: after the end-of-stream marker and
/// `--linger`, or before it for `--arrivals-stopped` (the reason, a partial report). No
/// endpoint is opened.
pub fn from_arrivals(args: &ServerArgs, path: &str) -> RoleOutcome {
    let log = match std::fs::read(path) {
        Ok(log) => log,
        Err(e) => return RoleOutcome::failed(format!("--arrivals {path}: {e}")),
    };
    let (mut col, mut counters, mut run_id, mut fin) =
        (None, Counters::default(), args.common.run_id, None);
    for record in crate::node::collect::records(&log) {
        let r = match record {
            Ok(r) if r.index == 0 => r,
            Ok(r) => {
                return RoleOutcome::failed(format!(
                    "--arrivals: topic {} at byte {}; a sub takes one (index 0)",
                    r.index, r.at
                ))
            }
            Err(e) => return RoleOutcome::failed(format!("--arrivals: {e}")),
        };
        match take(r.msg, 0, &mut run_id, &mut counters) {
            Taken::Not => {}
            Taken::Fin(h) => {
                fin.get_or_insert(fin_of(&h, r.recv_ns));
            }
            Taken::Message(h) => {
                let c = match collector(&mut col, r.recv_ns, args) {
                    Ok(c) => c,
                    Err(e) => return RoleOutcome::failed(e),
                };
                if h.flags & FLAG_WARMUP != 0 {
                    c.seq.warmup_received += 1;
                } else {
                    c.sub_window_start(r.recv_ns);
                    c.arrive(&h, r.msg, r.recv_ns);
                }
            }
        }
    }
    let reason = fin.is_none().then(|| {
        args.arrivals_stopped
            .clone()
            .unwrap_or_else(|| "the subscriber stopped before the end-of-stream marker".into())
    });
    outcome(args, col, counters, fin, reason, None, None)
}

/// The sub's outcome from what it collected.
fn outcome(
    args: &ServerArgs,
    col: Option<Collector>,
    counters: Counters,
    fin: Option<(u64, u64, u64, u64)>,
    reason: Option<String>,
    throughput: Option<mwperf_core::result::ThroughputSide>,
    clock_sync: Option<ClockSync>,
) -> RoleOutcome {
    let Some(mut c) = col else {
        let mut out = RoleOutcome {
            counters: Some(counters),
            ..RoleOutcome::failed(reason.unwrap_or_else(|| "no message arrived".into()))
        };
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
    let mode = if args.throughput {
        "throughput"
    } else {
        "oneway"
    };
    let mut m = c.finish(mode, sent, warmup_sent, payload, 0, None);
    if let Some(cs) = clock_sync {
        if cs.status == "ok" {
            m.clock = mwperf_core::clock::CLOCK_SYNCED_NAME.into();
        }
        m.clock_sync = Some(cs);
    }
    RoleOutcome {
        status: Status::Complete,
        reason,
        measurement: Some(m),
        counters: Some(counters),
        sent: None,
        schedule: None,
        warmup_ns: None,
        discovery: None,
        per_topic: Vec::new(),
        outage,
        serving: None,
        throughput,
    }
}

/// A sub's clock sync: the prober, the arrivals kept for the final fit, and how they were corrected.
struct ClockSyncing {
    client: Option<Client>,
    kept: Deferred,
    correction: Correction,
    warmup_received: u64,
    t0_ns: Option<u64>,
    capacity: usize,
}

impl ClockSyncing {
    fn start(peer: std::net::SocketAddr, args: &ServerArgs) -> Result<ClockSyncing, String> {
        let client = Client::start(peer, args.common.run_id, args.common.discovery_timeout)?;
        // TEST ONLY: MWPERF_CLOCKSYNC_BUFFER=N shrinks the FIFO so a test reaches the running-fit path
        let capacity = std::env::var("MWPERF_CLOCKSYNC_BUFFER")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(CAPACITY);
        Ok(ClockSyncing {
            client: Some(client),
            kept: Deferred::new(capacity),
            capacity,
            correction: Correction::default(),
            warmup_received: 0,
            t0_ns: None,
        })
    }

    /// Record one arrival into the collector (created on the first, at its corrected time).
    fn record(
        &mut self,
        col: &mut Option<Collector>,
        a: Arrival,
        fit: Option<&Fit>,
        is_final: bool,
        args: &ServerArgs,
    ) -> Result<(), String> {
        self.t0_ns.get_or_insert(a.recv_ns);
        let a = self.correction.apply(a, fit, is_final);
        let c = collector(col, a.recv_ns, args)?;
        c.window_start(a.recv_ns);
        c.arrive_checked(&a.header(), a.intact, a.recv_ns);
        Ok(())
    }

    /// After the stream: the last probes, the final fit, every kept arrival recorded with it.
    fn finish(
        mut self,
        col: &mut Option<Collector>,
        args: &ServerArgs,
    ) -> Result<ClockSync, String> {
        let raw_p50_ns = self.kept.raw_p50_ns();
        let client = self.client.take().expect("started with a client");
        let peer = client.peer.clone();
        let gathered = client.finish();
        let kept: Vec<Arrival> = self.kept.drain().collect();
        let t0 = self.t0_ns.or(kept.first().map(|a| a.recv_ns));
        let fit = t0.and_then(|t0| gathered.bins.fit(t0));
        for a in kept {
            self.record(col, a, fit.as_ref(), true, args)?;
        }
        if let Some(c) = col.as_mut() {
            c.seq.warmup_received += self.warmup_received;
        }
        let drift = mwperf_core::clock::test_drift_ppm();
        Ok(ClockSync {
            method: crate::clocksync::METHOD,
            peer,
            status: if fit.is_some() {
                "ok"
            } else if gathered.bins.answered == 0 {
                "no-answer"
            } else {
                "no-samples"
            },
            probes_sent: gathered.sent,
            probes_answered: gathered.bins.answered,
            probes_used: fit.map_or(0, |f| f.used),
            probes_foreign: gathered.foreign + gathered.bins.implausible,
            offset_ns: fit.map(|f| f.offset0_ns.round() as i64),
            t0_ns: fit.map(|f| f.t0_ns),
            drift_ppm: fit.map(|f| f.drift * 1e6),
            min_rtt_ns: fit.map(|f| f.min_rtt_ns),
            fit_residual_ns: fit.map(|f| f.residual_max_ns),
            error_bound_ns: fit.map(|f| f.error_bound_ns()),
            span_s: fit.map_or(0.0, |f| f.span_ns as f64 / 1e9),
            raw_p50_ns,
            corrected_final_fit: self.correction.final_fit,
            corrected_running_fit: self.correction.running_fit,
            uncorrected: self.correction.uncorrected,
            negative_after_correction: self.correction.negative,
            buffer_capacity: self.capacity as u64,
            test_own_drift_ppm: (drift != 0.0).then_some(drift),
        })
    }
}
