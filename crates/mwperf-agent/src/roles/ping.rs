//! ping: sends on the pacer's schedule, receives echoes in between, measures the round trip.
//!
//! Closed loop at rate 0: one message in flight; a reply that does not come within
//! min(--peer-timeout, 1 s) is counted lost and the next message goes out.
//! The last replies are awaited for min(--peer-timeout, max(200 ms, 20 × the largest RTT seen, or
//! the first contact's when no measured reply came back yet)); over a transport that retransmits
//! (a byte stream, or a middleware asked for `reliable`) for the whole --peer-timeout: there a
//! missing reply is late, not lost, and TCP's retransmission timer alone starts at 200 ms and
//! doubles.

use mwperf_core::clock::now_ns;
use mwperf_core::result::Status;
use mwperf_core::units::format_ns;
use mwperf_core::wire::{Header, FLAG_PROBE, FLAG_WARMUP, HEADER_LEN};
use mwperf_transports::{Endpoint, Side, TransportError};

use super::RoleOutcome;
use crate::cli::SenderArgs;
use crate::collector::Collector;
use crate::lane::Lane;
use crate::node::round_trip::drain_limit;
use crate::outgoing::Outgoing;
use crate::pacer::{Pacer, Slot};
use crate::signals;
use crate::wait::Waiter;

struct Ping<'a> {
    args: &'a SenderArgs,
    peer: &'a str,
    ep: Box<dyn Endpoint>,
    out: Outgoing,
    col: Collector,
    pacer: Pacer,
    rx: Vec<u8>,
    /// Last message sent and not yet answered (closed loop): (seq, warmup, sent_ns).
    awaiting: Option<(u64, bool, u64)>,
    last_heard_ns: Option<u64>,
    last_send_ns: u64,
    start_ns: u64,
    /// The first contact's round trip (probe to echo): what the final wait scales with when no
    /// measured reply came back yet (e.g. TCP over a long-delay link still opening its window).
    first_rtt_ns: u64,
    /// With several topics: this topic's place in the common schedule.
    lane: Option<Lane<'a>>,
    /// The transport retransmits what was lost (see the module's note on the final wait).
    retransmits: bool,
    /// What the middleware may hold a lost message's repair back for by design (a reliable
    /// Fast DDS writer: until its next heartbeat, `Endpoint::paced_ns`): the final wait's too.
    paced_ns: u64,
    /// `--layers-out`: this topic's stamps.
    book: Option<crate::layers::Book>,
    /// `--reopen`: the connection closed and is not open again yet (see [`Ping::try_reopen`]).
    down: bool,
    /// When the endpoint was last tried to be opened again (at most every 10 ms).
    last_reopen_ns: u64,
    /// The last step was a send, no receive tried since: a sender behind its schedule sends
    /// back to back, and takes what arrived before each next send (else its echoes wait
    /// unread, the pong blocks writing them, and the ping's own neglect looks like a silent
    /// peer: 0 replies in 2 s of a 512 KiB stream at 1 kHz on a loaded machine).
    sent_last: bool,
}

/// `--reopen`: how often a closed endpoint is tried to be opened again.
const REOPEN_EVERY_NS: u64 = 10_000_000;

enum Stop {
    Done,
    Partial(String),
    Failed(String),
}

impl Ping<'_> {
    fn send(&mut self, slot: Slot) -> Result<(), TransportError> {
        if let Some(lane) = &self.lane {
            lane.before_send(slot.index);
        }
        if let Some(recorded) = self.pacer.replay_bytes() {
            self.out.load(recorded);
        }
        if self.down {
            self.try_reopen();
        }
        // while the connection is down (--reopen) the message is sent into the void: it counts
        // as sent, and lost
        let (sent_ns, r) = if self.down {
            (now_ns(), Err(TransportError::Closed))
        } else {
            self.out.send(self.ep.as_mut(), &slot)
        };
        if let Some(lane) = &self.lane {
            lane.after_send(slot.index);
        }
        self.pacer.sent(&slot, sent_ns);
        crate::phases::sent(slot.intended_ns, sent_ns, !slot.warmup);
        if !slot.warmup {
            self.col.window_start(slot.intended_ns);
            self.col.sent(sent_ns);
            crate::allocs::message();
            if let Some(b) = &mut self.book {
                b.sent(
                    self.out.run_id(),
                    self.out.topic(),
                    slot.seq,
                    slot.intended_ns,
                    sent_ns,
                );
            }
        }
        self.awaiting = Some((slot.seq, slot.warmup, sent_ns));
        self.last_send_ns = sent_ns;
        match r {
            Err(TransportError::Unreachable { .. }) => Ok(()), // nothing listens (yet): shows as loss
            // --reopen: a closed connection or a broker gone (any failure but "nothing listens")
            Err(_) if self.args.common.reopen => {
                self.down = true;
                Ok(())
            }
            r => r,
        }
    }

    /// `--reopen`: open the endpoint again (a restarted pong or broker); true when it is open.
    /// Prints `REOPENED <ns>` on stdout for the control plane.
    fn try_reopen(&mut self) -> bool {
        let now = now_ns();
        if now < self.last_reopen_ns + REOPEN_EVERY_NS {
            return false;
        }
        self.last_reopen_ns = now;
        let common = &self.args.common;
        let opened = common
            .spec(self.peer)
            .map_err(TransportError::Address)
            .and_then(|spec| mwperf_transports::open(common.transport, Side::Ping, &spec));
        match opened {
            Ok(ep) => {
                self.ep = ep;
                self.down = false;
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "REOPENED {}", now_ns());
                let _ = out.flush();
                true
            }
            Err(_) => false,
        }
    }

    fn on_packet(&mut self, recv_ns: u64) {
        let h = match Header::decode(&self.rx) {
            Ok(h) if h.run_id == self.out.run_id() && h.flags & FLAG_PROBE != 0 => return, // a late first-contact probe
            Ok(h) if h.run_id == self.out.run_id() && h.topic != self.out.topic() => {
                return self.col.seq.foreign += 1
            } // another topic's
            Ok(h) if h.run_id == self.out.run_id() => h, // echoes that do not stamp (sockperf, relays) count too
            Ok(_) => return self.col.seq.foreign += 1,
            Err(r) => return self.col.reject(r),
        };
        self.last_heard_ns = Some(recv_ns);
        let warmup = h.flags & FLAG_WARMUP != 0;
        if warmup {
            self.col.seq.warmup_received += 1;
        } else {
            self.col.arrive(&h, &self.rx, recv_ns);
            if let Some(b) = &mut self.book {
                b.echoed(h.seq, recv_ns);
            }
        }
        if self
            .awaiting
            .is_some_and(|(s, w, _)| s == h.seq && w == warmup)
        {
            self.awaiting = None;
        }
    }

    /// Receive until `deadline_ns` (one message at most); Err = the run must end.
    fn receive(&mut self, waiter: &Waiter, deadline_ns: u64) -> Result<(), Stop> {
        self.sent_last = false;
        if self.down && !self.try_reopen() {
            let until = deadline_ns.min(self.last_reopen_ns + REOPEN_EVERY_NS);
            mwperf_core::clock::sleep_until_ns(until.max(now_ns()));
            return Ok(());
        }
        match waiter.recv_until(self.ep.as_mut(), &mut self.rx, deadline_ns) {
            Ok(Some(t)) => self.on_packet(t),
            Ok(None) | Err(TransportError::Unreachable { .. }) => {}
            Err(_) if self.args.common.reopen => {
                self.down = true;
                self.try_reopen();
            }
            Err(TransportError::Closed) => {
                return Err(self.peer_gone("the peer closed the connection"))
            }
            Err(e) => return Err(Stop::Failed(format!("receive failed: {e}"))),
        }
        Ok(())
    }

    /// One message that already arrived, if any, without waiting.
    fn take_ready(&mut self, now: u64) -> Result<(), Stop> {
        let waiter = Waiter {
            busy_poll: true,
            spin_margin_ns: 0,
        };
        self.receive(&waiter, now)
    }

    fn peer_gone(&self, what: &str) -> Stop {
        match self.last_heard_ns {
            None => Stop::Failed(format!(
                "no reply from {} ({what}); is a pong running there?",
                self.peer
            )),
            Some(_) => Stop::Partial(format!("{what} after {} replies", self.col.seq.received)),
        }
    }

    fn check_peer(&self, now: u64) -> Result<(), Stop> {
        let since = self.last_heard_ns.unwrap_or(self.start_ns);
        if now > since + self.args.peer_timeout {
            let what = format!(
                "peer silent for {}",
                format_ns(self.args.peer_timeout as f64)
            );
            return Err(self.peer_gone(&what));
        }
        Ok(())
    }

    fn send_phase(&mut self, waiter: &Waiter) -> Result<(), Stop> {
        let reply_timeout = self.args.peer_timeout.min(1_000_000_000);
        loop {
            if signals::stopped() {
                return Err(Stop::Partial("interrupted by signal".into()));
            }
            let now = now_ns();
            self.check_peer(now)?;
            let due = match self.pacer.next_due(now) {
                Err(()) => return Ok(()),
                Ok(Some(due)) => due,
                Ok(None) => match self.awaiting {
                    Some((_, _, sent)) if now < sent + reply_timeout => {
                        self.receive(
                            &Waiter {
                                busy_poll: waiter.busy_poll,
                                spin_margin_ns: 0,
                            },
                            (sent + reply_timeout).min(now + 100_000_000),
                        )?;
                        continue;
                    }
                    _ => now,
                },
            };
            // --opt timer= of a transport with its own timer (ros2's rcl timer): its tick
            // sends the slot; the echoes wait in the same wait set and are taken between ticks
            let ticked = now < due
                && match self.ep.wait_tick(due, self.pacer.period_ns()) {
                    None => false,
                    Some(Ok(true)) => true,
                    Some(Ok(false)) => {
                        self.take_ready(now)?;
                        continue;
                    }
                    Some(Err(e)) => {
                        return Err(Stop::Failed(format!("waiting for the timer: {e}")))
                    }
                };
            if now >= due || ticked {
                if self.sent_last && !ticked {
                    // behind: what arrived since the last send first, without waiting (a
                    // timer's tick came from the wait set that also holds the echoes)
                    self.take_ready(now)?;
                }
                self.sent_last = true;
                let slot = self.pacer.take(now);
                match self.send(slot) {
                    Ok(()) => {}
                    Err(TransportError::Closed) => {
                        return Err(self.peer_gone("the peer closed the connection"))
                    }
                    Err(e) => return Err(Stop::Failed(format!("send failed: {e}"))),
                }
            } else {
                self.receive(waiter, due.min(now + 100_000_000))?;
            }
        }
    }

    fn drain(&mut self, waiter: &Waiter) -> Result<(), Stop> {
        let largest = self.col.response.max().unwrap_or(self.first_rtt_ns);
        let limit = drain_limit(
            self.args.peer_timeout.saturating_add(self.paced_ns),
            largest,
            self.retransmits,
        );
        let end = self.last_send_ns + limit;
        let blocking = Waiter {
            busy_poll: waiter.busy_poll,
            spin_margin_ns: 0,
        };
        while self.col.seq.distinct() < self.pacer.measured_sent && now_ns() < end {
            if signals::stopped() {
                return Err(Stop::Partial("interrupted by signal".into()));
            }
            self.receive(&blocking, end.min(now_ns() + 100_000_000))?;
        }
        Ok(())
    }
}

/// Discovery, then probes until the first echo; Err = the outcome of a run that cannot start.
fn first_contact(
    args: &SenderArgs,
    ep: &mut dyn Endpoint,
    peer: &str,
    run_id: u32,
) -> Result<mwperf_core::result::Discovery, Box<RoleOutcome>> {
    let matched_ns = super::contact::matched(ep, args.common.discovery_timeout)
        .map_err(|e| Box::new(RoleOutcome::failed(e.to_string())))?;
    // Socket transports have no discovery: the peer must answer within --peer-timeout.
    let bound = if args.common.transport.has_discovery() {
        args.common.discovery_timeout
    } else {
        args.peer_timeout
    };
    super::contact::probe(
        ep,
        peer,
        run_id,
        args.payload,
        bound,
        args.common.busy_poll,
        matched_ns,
    )
    .map_err(|reason| {
        let status = if signals::stopped() {
            Status::Partial
        } else {
            Status::Failed
        };
        Box::new(RoleOutcome {
            status,
            ..RoleOutcome::failed(reason)
        })
    })
}

/// One topic's round trips to the pong at `peer`; `lane` = its place among several topics.
pub fn run(
    args: &SenderArgs,
    mut ep: Box<dyn Endpoint>,
    peer: &str,
    waiter: &Waiter,
    lane: Option<Lane<'_>>,
) -> RoleOutcome {
    let run_id = args.common.run_id.unwrap_or_else(super::random_run_id);
    let retransmits = mwperf_transports::Reliability::parse(&args.common.reliability)
        .is_ok_and(|r| args.common.transport.descriptor().retransmits(r));
    let contact = first_contact(args, ep.as_mut(), peer, run_id);
    let start_ns = lane
        .as_ref()
        .map_or_else(|| now_ns() + 1_000_000, Lane::start_ns);
    let discovery = match contact {
        Ok(d) => d,
        Err(outcome) => return *outcome,
    };
    crate::allocs::setup_done();
    crate::phases::setup_done();
    let period = mwperf_core::schedule::period_ns(args.rate);
    let col = match Collector::new(start_ns + args.warmup, period, args.samples.as_deref()) {
        Ok(mut c) => {
            c.watch_outage(args.common.outage_window);
            // the whole sequence bitmap now: no allocation per message later (--count-allocs)
            c.seq.reserve(
                args.count
                    .unwrap_or_else(|| (args.duration as f64 * args.rate / 1e9) as u64)
                    .max(args.min_count.unwrap_or(0))
                    .saturating_add(1024)
                    .min(1 << 27),
            ); // at most 16 MiB up front
            let by_count = |n: u64| {
                if args.rate > 0.0 {
                    n as f64 / args.rate
                } else {
                    0.0
                }
            };
            let seconds = match args.count {
                Some(n) => by_count(n),
                None => (args.duration as f64 / 1e9).max(by_count(args.min_count.unwrap_or(0))),
            };
            // and its per-second rows: at most 65 536 s (about 5 MiB) up front
            c.reserve_series((seconds as usize).saturating_add(2).min(1 << 16));
            c
        }
        Err(e) => {
            return RoleOutcome::failed(format!(
                "--samples: cannot write '{}': {e}",
                args.samples.as_deref().unwrap_or("")
            ))
        }
    };
    let pacer = match Pacer::for_sender(args, start_ns, lane.as_ref().map_or(0, Lane::topic)) {
        Ok(p) => p,
        Err(e) => return RoleOutcome::failed(e),
    };
    let paced_ns = ep.paced_ns();
    let mut p = Ping {
        args,
        peer,
        ep,
        out: Outgoing::new(run_id, lane.as_ref().map_or(0, Lane::topic), args.payload)
            .test_allocs(args.test_allocs_per_msg)
            .test_delay(args.test_send_delay),
        col,
        pacer,
        rx: Vec::with_capacity(HEADER_LEN + args.payload),
        awaiting: None,
        sent_last: false,
        last_heard_ns: None,
        last_send_ns: start_ns,
        start_ns,
        first_rtt_ns: discovery.first_reply_ns.unwrap_or(0),
        lane,
        retransmits,
        paced_ns,
        book: crate::layers::Book::new(crate::layers::book::Side::Ping, super::expected(args)),
        down: false,
        last_reopen_ns: 0,
    };
    let sending = p.send_phase(waiter);
    p.lane = None; // this topic sends no more: the next one must not wait for it
    let stop = match sending.and_then(|_| p.drain(waiter)) {
        Ok(()) => Stop::Done,
        Err(s) => s,
    };
    drop(p.book.take()); // its rows, before the report is built
    crate::phases::drained_then_idle(if matches!(stop, Stop::Done) {
        args.idle
    } else {
        0
    });
    let (status, reason) = match stop {
        Stop::Done => (Status::Complete, None),
        Stop::Partial(r) => (Status::Partial, Some(r)),
        Stop::Failed(r) => (Status::Failed, Some(r)),
    };
    let sent = p.pacer.measured_sent;
    let schedule = p.pacer.schedule.summary();
    let end = p
        .pacer
        .planned_end_ns()
        .map_or(p.last_send_ns, |e| e.min(now_ns()));
    let outage = p.col.outage_counts(true);
    let measurement = p.col.finish(
        "roundtrip",
        sent,
        p.pacer.warmup_sent,
        args.payload as u64,
        end,
        schedule,
    );
    super::park(p.ep); // closed once the report is out
    RoleOutcome {
        status,
        reason,
        measurement: Some(measurement),
        counters: None,
        sent: Some(sent),
        schedule: None,
        warmup_ns: Some(args.warmup),
        discovery: Some(discovery),
        per_topic: Vec::new(),
        outage,
        serving: None,
        throughput: None,
    }
}
