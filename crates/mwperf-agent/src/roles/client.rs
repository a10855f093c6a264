//! client: calls a service's server through the middleware's own request/response
//! (mwperf_transports::service) and measures every call.
//!
//! `--clients N` clients, each its own endpoint and thread, each calling on its own schedule at
//! `--rate` from one common start, with at most `--in-flight` calls outstanding. A call slot
//! that comes due while the client has no room waits for a reply: its latency from the
//! intended time (`response`, coordinated omission corrected) then includes that wait, its
//! latency from the actual call (`service`) does not. At `--rate 0` a client keeps
//! `--in-flight` calls outstanding back to back.
//!
//! A call is answered (a latency sample), an error (the server said so), a send error, or a
//! timeout (no reply `--call-timeout` after it was sent: given up, and a reply that comes later
//! counts as unmatched). A client whose server stays silent `--peer-timeout` while calls are
//! outstanding stops (partial); so a client never hangs longer than --call-timeout +
//! --peer-timeout after its server went away.
//!
//! First contact: each client calls with probe requests (FLAG_PROBE, never measured) until one
//! is answered, within --discovery-timeout (middleware) or --peer-timeout (sockets).

use std::sync::{Barrier, OnceLock};

use mwperf_core::clock::{now_ns, sleep_until_ns};
use mwperf_core::result::{Discovery, Measurement, Status, TopicMeasurement};
use mwperf_core::stats::pool::pool_measurements;
use mwperf_core::units::format_ns;
use mwperf_core::wire::{fill_payload, Header, FLAG_PROBE, FLAG_WARMUP, HEADER_LEN};
use mwperf_transports::{Client, Reply, TransportError};

use super::call_book::{CallBook, ReplyCheck};
use super::outstanding::Call;
use super::RoleOutcome;
use crate::cli::ClientArgs;
use crate::collector::Collector;
use crate::signals;

/// Warm-up calls' seqs start here (measured calls count from 0).
pub const WARMUP_SEQ: u64 = 1 << 62;
/// First-contact probes' seqs start here.
const PROBE_SEQ: u64 = 3 << 62;
/// The longest single wait inside the loop: signals are checked at least this often.
const MAX_WAIT_NS: u64 = 50_000_000;

/// Usage errors of a client's flags that clap cannot see; Err names the flag.
pub fn check(args: &ClientArgs) -> Result<(), String> {
    let s = &args.sender;
    let not = |flag: &str, why: &str| Err(format!("{flag}: {why}"));
    if s.subscribers > 1 {
        return not(
            "--subscribers",
            "a client calls one server; use --clients N for several clients",
        );
    }
    if s.common.topics > 1 {
        return not(
            "--topics",
            "a client calls one service; use --clients N for several clients",
        );
    }
    if s.replay_trace.is_some() {
        return not(
            "--replay-trace",
            "replays are one-way or round-trip streams, not calls",
        );
    }
    if s.clock_serve.is_some() {
        return not(
            "--clock-serve",
            "a call's latency is measured on the client's clock alone",
        );
    }
    let kind = s.common.transport;
    if !kind.descriptor().services.supported() {
        return Err(format!(
            "--transport {}: request/response is not supported ({}); transports with services: {}",
            kind.name(),
            kind.descriptor().services.text(),
            with_services()
        ));
    }
    for (flag, bytes) in [
        ("--payload", Some(s.payload)),
        ("--reply-payload", args.reply_payload),
    ] {
        if let Some(b) = bytes {
            crate::roles::check_size(kind, flag, b)?;
        }
    }
    Ok(())
}

/// The transports of this build that have services, for error messages.
pub fn with_services() -> String {
    mwperf_transports::Kind::ALL
        .iter()
        .filter(|k| k.descriptor().services.supported())
        .map(|k| k.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What every client shares: the common start, and the arguments.
struct Shared<'a> {
    args: &'a ClientArgs,
    run_id: u32,
    start: OnceLock<u64>,
    barrier: Barrier,
}

/// Run `--clients` clients of the server at `--connect`; their measurements pooled.
pub fn run(args: &ClientArgs) -> RoleOutcome {
    let run_id = args
        .sender
        .common
        .run_id
        .unwrap_or_else(super::random_run_id);
    let spec = match args.sender.common.spec(&args.sender.connect) {
        Ok(s) => s,
        Err(e) => return RoleOutcome::failed(e),
    };
    let n = args.clients as usize;
    let mut clients = Vec::with_capacity(n);
    let t0 = now_ns();
    for _ in 0..n {
        match mwperf_transports::open_client(args.sender.common.transport, &spec) {
            Ok(c) => clients.push(c),
            Err(e) => return RoleOutcome::failed(format!("cannot open the client: {e}")),
        }
    }
    crate::phases::opened(now_ns() - t0);
    let shared = Shared {
        args,
        run_id,
        start: OnceLock::new(),
        barrier: Barrier::new(n),
    };
    let names: Vec<String> = (1..=n).map(|i| format!("client {i}")).collect();
    // one client: the file given; several: one each, `.<client name>` before the extension
    let samples = if n == 1 {
        vec![args.sender.samples.clone()]
    } else {
        crate::topic_names::samples_paths(args.sender.samples.as_deref(), &names)
    };
    let outcomes: Vec<RoleOutcome> = std::thread::scope(|scope| {
        let handles: Vec<_> = clients
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let (shared, samples) = (&shared, samples[i].clone());
                scope.spawn(move || one_client(shared, c, i as u16, samples))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| RoleOutcome::failed("a client thread panicked"))
            })
            .collect()
    });
    combine(outcomes, &names)
}

/// All clients as one outcome: the worst status, the measurements pooled (each client's in
/// per_topic when there are several), the slowest first contact.
fn combine(mut outcomes: Vec<RoleOutcome>, names: &[String]) -> RoleOutcome {
    if outcomes.len() == 1 {
        return outcomes.pop().expect("one");
    }
    let per_topic: Vec<TopicMeasurement> = outcomes
        .iter()
        .enumerate()
        .filter_map(|(i, o)| {
            o.measurement.clone().map(|m| TopicMeasurement {
                topic: i as u32,
                name: names[i].clone(),
                address: None,
                measurement: m,
            })
        })
        .collect();
    let measured: Vec<&Measurement> = per_topic.iter().map(|t| &t.measurement).collect();
    let worst = outcomes
        .iter()
        .max_by_key(|o| match o.status {
            Status::Complete => 0,
            Status::Partial => 1,
            Status::Failed => 2,
        })
        .expect("clients");
    let discoveries: Vec<&Discovery> = outcomes
        .iter()
        .filter_map(|o| o.discovery.as_ref())
        .collect();
    RoleOutcome {
        status: worst.status,
        reason: worst.reason.clone(),
        measurement: (!measured.is_empty()).then(|| pool_measurements(&measured)),
        counters: None,
        sent: Some(outcomes.iter().filter_map(|o| o.sent).sum()),
        schedule: None,
        warmup_ns: worst.warmup_ns,
        discovery: (!discoveries.is_empty()).then(|| Discovery {
            open_ns: None, // the report's: phases::open_ns
            matched_ns: discoveries.iter().map(|d| d.matched_ns).max().unwrap_or(0),
            first_reply_ns: discoveries.iter().filter_map(|d| d.first_reply_ns).max(),
            probes: discoveries.iter().map(|d| d.probes).sum(),
        }),
        per_topic,
        outage: None,
        serving: None,
        throughput: None,
    }
}

struct OneClient<'a> {
    shared: &'a Shared<'a>,
    c: Box<dyn Client>,
    index: u16,
    tx: Vec<u8>,
    rx: Vec<u8>,
    book: CallBook,
    col: Collector,
    last_heard_ns: u64,
    measured_sent: u64,
    warmup_sent: u64,
}

enum Stop {
    Partial(String),
    Failed(String),
}

/// The schedule of one client: when call `k` is due (None = no more calls), warm-up or not.
struct Schedule {
    start_ns: u64,
    period_ns: u64,
    measure_start_ns: u64,
    /// Measured calls to make (count, or rate × duration, at least --min-count); None at rate 0
    /// with a duration: until `measure_end_ns`.
    measured: Option<u64>,
    measure_end_ns: u64,
    min_count: u64,
}

impl Schedule {
    fn new(args: &ClientArgs, start_ns: u64) -> Schedule {
        let s = &args.sender;
        let period_ns = mwperf_core::schedule::period_ns(s.rate);
        let measure_start_ns = start_ns + s.warmup;
        let measured = match (s.count, period_ns) {
            (Some(c), _) => Some(c),
            (None, 0) => None,
            (None, p) => Some((s.duration / p).max(1).max(s.min_count.unwrap_or(0))),
        };
        Schedule {
            start_ns,
            period_ns,
            measure_start_ns,
            measured,
            measure_end_ns: measure_start_ns + s.duration,
            min_count: s.min_count.unwrap_or(0),
        }
    }

    /// Warm-up slots before the first measured one (rate > 0).
    fn warmup_slots(&self) -> u64 {
        if self.period_ns == 0 {
            0
        } else {
            (self.measure_start_ns - self.start_ns).div_ceil(self.period_ns)
        }
    }

    /// The next call's intended time and whether it is warm-up, given what was sent; None =
    /// done. At rate 0 the intended time is now.
    fn next(&self, warmup_sent: u64, measured_sent: u64, now: u64) -> Option<(u64, bool)> {
        if self.period_ns == 0 {
            if now < self.measure_start_ns {
                return Some((now, true));
            }
            let more = match self.measured {
                Some(n) => measured_sent < n,
                None => now < self.measure_end_ns || measured_sent < self.min_count,
            };
            return more.then_some((now, false));
        }
        let w = self.warmup_slots();
        if warmup_sent < w {
            return Some((self.start_ns + warmup_sent * self.period_ns, true));
        }
        let n = self.measured.expect("a count at a rate");
        (measured_sent < n).then(|| (self.start_ns + (w + measured_sent) * self.period_ns, false))
    }
}

fn one_client(
    shared: &Shared,
    mut c: Box<dyn Client>,
    index: u16,
    samples: Option<String>,
) -> RoleOutcome {
    let args = shared.args;
    let s = &args.sender;
    let probe = Probe {
        run_id: shared.run_id,
        topic: index,
        payload: s.payload,
        discovery_timeout_ns: s.common.discovery_timeout,
        bound_ns: if s.common.transport.has_discovery() {
            s.common.discovery_timeout
        } else {
            s.peer_timeout
        },
        server: &s.connect,
    };
    let contact = first_contact(c.as_mut(), &probe);
    shared.barrier.wait(); // every client made contact (or failed): one common start
    let (discovery, probes) = match contact {
        Ok(found) => found,
        Err(reason) => {
            let status = if signals::stopped() {
                Status::Partial
            } else {
                Status::Failed
            };
            return RoleOutcome {
                status,
                ..RoleOutcome::failed(reason)
            };
        }
    };
    crate::allocs::setup_done();
    crate::phases::setup_done();
    let start_ns = *shared.start.get_or_init(|| now_ns() + 1_000_000);
    let schedule = Schedule::new(args, start_ns);
    let col = match Collector::new(
        schedule.measure_start_ns,
        schedule.period_ns,
        samples.as_deref(),
    ) {
        Ok(mut col) => {
            col.seq.reserve(
                schedule
                    .measured
                    .unwrap_or(1 << 16)
                    .saturating_add(1024)
                    .min(1 << 27),
            );
            col
        }
        Err(e) => {
            return RoleOutcome::failed(format!(
                "--samples: cannot write '{}': {e}",
                samples.unwrap_or_default()
            ))
        }
    };
    let in_flight = (args.in_flight as usize)
        .min(c.max_in_flight().unwrap_or(usize::MAX))
        .max(1);
    let mut one = OneClient {
        shared,
        c,
        index,
        tx: vec![0; HEADER_LEN + args.sender.payload],
        rx: Vec::with_capacity(HEADER_LEN + args.reply_payload.unwrap_or(args.sender.payload) + 64),
        book: CallBook::new(in_flight, probes),
        col,
        last_heard_ns: start_ns,
        measured_sent: 0,
        warmup_sent: 0,
    };
    let stop = one.calls(&schedule).and_then(|_| one.drain());
    let (status, reason) = match stop {
        Ok(()) => (Status::Complete, None),
        Err(Stop::Partial(r)) => (Status::Partial, Some(r)),
        Err(Stop::Failed(r)) => (Status::Failed, Some(r)),
    };
    crate::phases::drained_then_idle(0);
    let end = if schedule.period_ns > 0 {
        (schedule.measure_start_ns + schedule.measured.unwrap_or(0) * schedule.period_ns)
            .min(now_ns())
    } else {
        now_ns().min(schedule.measure_end_ns.max(one.last_heard_ns))
    };
    // calls still outstanding at the end were never answered: timeouts too
    one.book.expire(u64::MAX, one.c.as_mut());
    let sent = one.measured_sent;
    let mut m = one.col.finish(
        "service",
        sent,
        one.warmup_sent,
        args.sender.payload as u64,
        end,
        None,
    );
    m.calls = Some(one.book.calls(
        m.accounting.received,
        args.call_timeout,
        in_flight,
        one.c.as_ref(),
    ));
    RoleOutcome {
        status,
        reason,
        measurement: Some(m),
        counters: None,
        sent: Some(sent),
        schedule: None,
        warmup_ns: Some(args.sender.warmup),
        discovery: Some(discovery),
        per_topic: Vec::new(),
        outage: None,
        serving: None,
        throughput: None,
    }
}

/// How a client makes first contact: its run and header topic, its request's payload, how long
/// discovery and then the probe calls may take, and the server's name for the error.
pub struct Probe<'a> {
    pub run_id: u32,
    pub topic: u16,
    pub payload: usize,
    pub discovery_timeout_ns: u64,
    pub bound_ns: u64,
    pub server: &'a str,
}

/// Discovery, then probe calls until one is answered; Err = why the client cannot start.
/// Ok: the first contact, and the probe calls that were still unanswered (their late replies
/// are not counted as unmatched). Graph nodes' clients make theirs with it too (node/).
pub fn first_contact(
    c: &mut dyn Client,
    probe: &Probe,
) -> Result<(Discovery, Vec<mwperf_transports::CallId>), String> {
    let t0 = now_ns();
    c.wait_matched(probe.discovery_timeout_ns)
        .map_err(|e| e.to_string())?;
    let matched_ns = now_ns() - t0;
    let bound = probe.bound_ns;
    let t1 = now_ns();
    let end = t1 + bound;
    let mut tx = vec![0; HEADER_LEN + probe.payload];
    let mut rx = Vec::new();
    let mut probes = 0u64;
    let mut sent_ids = Vec::new();
    while now_ns() < end {
        if signals::stopped() {
            return Err("interrupted by signal".into());
        }
        fill(
            &mut tx,
            probe.run_id,
            probe.topic,
            PROBE_SEQ + probes,
            FLAG_PROBE,
            now_ns(),
            now_ns(),
        );
        match c.call(&tx) {
            Ok(id) => sent_ids.push(id),
            Err(e) if e.is_usage() => return Err(e.to_string()),
            Err(_) => {} // nothing there yet
        }
        probes += 1;
        let wait_end = (now_ns() + 100_000_000).min(end);
        while now_ns() < wait_end {
            match c.recv_reply(&mut rx, (wait_end - now_ns()).min(MAX_WAIT_NS)) {
                Ok(Some(r)) if sent_ids.contains(&r.call) => {
                    sent_ids.retain(|id| *id != r.call);
                    for id in &sent_ids {
                        c.abandon(*id);
                    }
                    let discovery = Discovery {
                        open_ns: None,
                        matched_ns,
                        first_reply_ns: Some(now_ns() - t1),
                        probes,
                    };
                    return Ok((discovery, sent_ids));
                }
                Ok(_) => {}
                Err(TransportError::Closed) | Err(TransportError::Unreachable { .. }) => {
                    sleep_until_ns(wait_end);
                }
                Err(e) => return Err(format!("receive failed: {e}")),
            }
        }
    }
    Err(format!(
        "no answer from the server at {} within {} ({probes} probe calls); is a server running there?",
        probe.server,
        format_ns(bound as f64)
    ))
}

/// Write request `seq` into `tx`: the pattern, then the header.
fn fill(
    tx: &mut [u8],
    run_id: u32,
    topic: u16,
    seq: u64,
    flags: u8,
    intended_ns: u64,
    sent_ns: u64,
) {
    fill_payload(&mut tx[HEADER_LEN..], seq);
    Header {
        flags,
        run_id,
        topic,
        seq,
        intended_ns,
        sent_ns,
        peer_rx_ns: 0,
        payload_len: (tx.len() - HEADER_LEN) as u32,
    }
    .encode(tx);
}

impl OneClient<'_> {
    fn args(&self) -> &ClientArgs {
        self.shared.args
    }

    fn calls(&mut self, schedule: &Schedule) -> Result<(), Stop> {
        loop {
            if signals::stopped() {
                return Err(Stop::Partial("interrupted by signal".into()));
            }
            let now = now_ns();
            self.expire(now);
            self.check_peer(now)?;
            let Some((due, warmup)) = schedule.next(self.warmup_sent, self.measured_sent, now)
            else {
                return Ok(());
            };
            if now >= due && self.book.out.has_room() {
                self.call(due, warmup)?;
                continue;
            }
            // wait for the slot (sleeping in receive until the spin margin) or for room
            let until = if self.book.out.has_room() {
                due.saturating_sub(self.args().sender.spin_margin)
            } else {
                now + MAX_WAIT_NS
            };
            let wait = if self.args().sender.common.busy_poll {
                0
            } else {
                until
                    .saturating_sub(now)
                    .min(MAX_WAIT_NS)
                    .min(self.timeout_wait(now))
            };
            if self.book.out.is_empty() {
                if wait > 0 {
                    sleep_until_ns(now + wait);
                }
            } else {
                self.receive(wait)?;
            }
        }
    }

    /// The longest wait before the next outstanding call times out.
    fn timeout_wait(&self, now: u64) -> u64 {
        self.book.out.oldest_sent_ns().map_or(u64::MAX, |s| {
            (s + self.args().call_timeout).saturating_sub(now).max(1)
        })
    }

    fn call(&mut self, intended_ns: u64, warmup: bool) -> Result<(), Stop> {
        let seq = if warmup {
            WARMUP_SEQ + self.warmup_sent
        } else {
            self.measured_sent
        };
        let flags = if warmup { FLAG_WARMUP } else { 0 };
        fill_payload(&mut self.tx[HEADER_LEN..], seq);
        let sent_ns = now_ns();
        Header {
            flags,
            run_id: self.shared.run_id,
            topic: self.index,
            seq,
            intended_ns,
            sent_ns,
            peer_rx_ns: 0,
            payload_len: (self.tx.len() - HEADER_LEN) as u32,
        }
        .encode(&mut self.tx);
        let result = self.c.call(&self.tx);
        crate::phases::sent(intended_ns, sent_ns, !warmup);
        if warmup {
            self.warmup_sent += 1;
        } else {
            self.measured_sent += 1;
            self.col.window_start(intended_ns);
            self.col.sent(sent_ns);
            crate::allocs::message();
        }
        if let Err(e) = &result {
            if e.is_usage() {
                return Err(Stop::Failed(format!("call failed: {e}")));
            }
        }
        let call = Call {
            id: 0,
            seq,
            intended_ns,
            sent_ns,
            warmup,
        };
        self.book.sent(call, result.map_err(|_| ()));
        Ok(())
    }

    /// Give up calls older than --call-timeout.
    fn expire(&mut self, now: u64) {
        let cut = now.saturating_sub(self.args().call_timeout);
        self.book.expire(cut, self.c.as_mut());
    }

    fn check_peer(&self, now: u64) -> Result<(), Stop> {
        let silent = now.saturating_sub(self.last_heard_ns);
        let timeout = self.args().sender.peer_timeout;
        if !self.book.out.is_empty() && silent > timeout + self.args().call_timeout {
            return Err(Stop::Partial(format!(
                "the server was silent for {} with calls outstanding, after {} answered calls",
                format_ns(silent as f64),
                self.col.seq.received
            )));
        }
        Ok(())
    }

    /// Receive at most one reply within `wait_ns`.
    fn receive(&mut self, wait_ns: u64) -> Result<(), Stop> {
        let got = self.c.recv_reply(&mut self.rx, wait_ns);
        let recv_ns = now_ns();
        match got {
            Ok(Some(reply)) => {
                self.last_heard_ns = recv_ns;
                self.on_reply(reply, recv_ns);
                Ok(())
            }
            Ok(None) | Err(TransportError::Unreachable { .. }) => Ok(()),
            Err(TransportError::Closed) => {
                // the server went away: outstanding calls will time out
                Ok(())
            }
            Err(e) => Err(Stop::Failed(format!("receive failed: {e}"))),
        }
    }

    fn on_reply(&mut self, reply: Reply, recv_ns: u64) {
        let check = ReplyCheck {
            run_id: Some(self.shared.run_id),
            expected: self.args().reply_payload,
            foreign_is_answer: true,
        };
        self.book
            .reply(&mut self.col, reply, &self.rx, recv_ns, check);
    }

    /// After the last call: wait for the outstanding replies, each at most its call timeout.
    fn drain(&mut self) -> Result<(), Stop> {
        while !self.book.out.is_empty() {
            if signals::stopped() {
                return Err(Stop::Partial("interrupted by signal".into()));
            }
            let now = now_ns();
            self.expire(now);
            if self.book.out.is_empty() {
                break;
            }
            self.check_peer(now)?;
            self.receive(self.timeout_wait(now).min(MAX_WAIT_NS))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(line: &str) -> ClientArgs {
        #[derive(Parser)]
        struct T {
            #[command(flatten)]
            a: ClientArgs,
        }
        let mut argv = vec!["t", "--transport", "udp", "--connect", "127.0.0.1:9"];
        argv.extend(line.split_whitespace());
        T::try_parse_from(argv).expect("parses").a
    }

    #[test]
    fn at_a_rate_warmup_slots_come_first_then_the_measured_ones_on_one_grid() {
        let a = args("--rate 1000 --warmup 2ms --count 3");
        let s = Schedule::new(&a, 1_000_000_000);
        assert_eq!(s.next(0, 0, 0), Some((1_000_000_000, true)));
        assert_eq!(s.next(1, 0, 0), Some((1_001_000_000, true)));
        assert_eq!(s.next(2, 0, 0), Some((1_002_000_000, false)));
        assert_eq!(s.next(2, 2, 0), Some((1_004_000_000, false)));
        assert_eq!(s.next(2, 3, 0), None);
    }

    #[test]
    fn a_duration_at_a_rate_is_rate_times_duration_calls() {
        let a = args("--rate 100 --duration 1s");
        assert_eq!(Schedule::new(&a, 0).measured, Some(100));
    }

    #[test]
    fn back_to_back_calls_run_until_the_duration_and_the_min_count() {
        let a = args("--rate 0 --duration 10ms --min-count 5");
        let s = Schedule::new(&a, 0);
        assert_eq!(s.next(0, 0, 5_000_000), Some((5_000_000, false)));
        assert_eq!(
            s.next(0, 4, 20_000_000),
            Some((20_000_000, false)),
            "min count not reached"
        );
        assert_eq!(s.next(0, 5, 20_000_000), None);
    }

    #[test]
    fn flags_that_do_not_apply_to_calls_are_refused_naming_them() {
        for (line, flag) in [
            ("--subscribers 2", "--subscribers"),
            ("--topics 2", "--topics"),
            ("--payload 70000", "--payload"),
            ("--reply-payload 70000", "--reply-payload"),
        ] {
            let e = check(&args(line)).expect_err(line);
            assert!(e.starts_with(flag), "{line}: {e}");
        }
        assert!(check(&args("--payload 1000")).is_ok());
    }
}
