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
    let reason = loop {
        if signals::stopped() {
            break fin
                .is_none()
                .then(|| "stopped by signal before the end-of-stream marker".to_string());
        }
        let now = now_ns();
        if fin.is_some_and(|(_, _, _, at)| now > at + args.linger) {
            break None;
        }
        if args.idle_timeout.is_some_and(|t| now > last_ns + t) {
            break Some("idle timeout before the end-of-stream marker".to_string());
        }
        let Some(open) = ep.as_mut() else {
            break Some("stopped while reopening its endpoint".to_string());
        };
        let got = open.recv(&mut buf, wait);
        let Ok(Some(_)) = got else {
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
        counters.received += 1;
        let h = match Header::decode(&buf) {
            Ok(h)
                if h.flags & FLAG_ECHO == 0
                    && h.topic as usize == cb.topic
                    && run_id.is_none_or(|id| id == h.run_id) =>
            {
                h
            }
            Ok(_) => {
                counters.foreign += 1;
                continue;
            }
            Err(r) => {
                if r.is_foreign() {
                    counters.foreign += 1
                } else {
                    counters.malformed += 1
                }
                continue;
            }
        };
        if h.flags & FLAG_PROBE != 0 {
            continue; // a ping's first-contact probe on a shared topic: not part of any stream
        }
        run_id.get_or_insert(h.run_id);
        if h.flags & FLAG_FIN != 0 {
            fin.get_or_insert((h.seq, h.intended_ns, h.peer_rx_ns, recv_ns));
            if let Some(c) = sync.as_ref().and_then(|s| s.client.as_ref()) {
                c.end_of_stream();
            }
            continue;
        }
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
                    || payload_intact_sampled(&buf[HEADER_LEN..], h.seq, every);
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
        if col.is_none() {
            match Collector::new(recv_ns, 0, args.samples.as_deref()) {
                Ok(mut c) => {
                    c.watch_outage(args.common.outage_window);
                    c.flush_each(args.common.reopen);
                    col = Some(c)
                }
                Err(e) => return RoleOutcome::failed(format!("--samples: cannot write: {e}")),
            }
        }
        let c = col.as_mut().unwrap();
        if h.flags & FLAG_WARMUP != 0 {
            c.seq.warmup_received += 1;
        } else if let Some(s) = &mut steady {
            // a throughput stream: large payloads are checked in full every Nth message
            s.message(recv_ns);
            c.window_start(recv_ns);
            let every = check_every(h.payload_len as usize);
            let intact = h.flags & FLAG_RECORDED != 0
                || payload_intact_sampled(&buf[HEADER_LEN..], h.seq, every);
            c.arrive_checked(&h, intact, recv_ns);
        } else {
            c.window_start(recv_ns);
            c.arrive(&h, &buf, recv_ns);
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
        if col.is_none() {
            let mut c = Collector::new(a.recv_ns, 0, args.samples.as_deref())
                .map_err(|e| format!("--samples: cannot write: {e}"))?;
            c.watch_outage(args.common.outage_window);
            c.flush_each(args.common.reopen);
            *col = Some(c);
        }
        let c = col.as_mut().expect("created above");
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
