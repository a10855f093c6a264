//! pub: sends on the pacer's schedule, one way, then an end-of-stream marker (FLAG_FIN, seq =
//! measured messages sent, intended_ns = warm-up messages sent, peer_rx_ns = period in ns, 0 for
//! rate 0) three times, 1 ms apart.
//!
//! With `--reopen` (a restarted sub, `mwperf run --restart sub@T`) a closed connection does not
//! end the stream: the pub opens its endpoint again every 10 ms (printing `REOPENED <ns>`) and
//! keeps to its schedule meanwhile, counting what it could not send as sent (the sub's loss).
//!
//! With several subscribers on a middleware (`--subscribers N`, native fan-out) one subscriber
//! leaving (e.g. mqtt's shared ready flag cleared) does not end the stream for the others: the
//! pub keeps sending and notes how often it was told a subscriber left.

use mwperf_core::clock::now_ns;
use mwperf_core::result::Status;
use mwperf_transports::{Endpoint, Side, TransportError};

use super::RoleOutcome;
use crate::cli::SenderArgs;
use crate::lane::Lane;
use crate::outgoing::Outgoing;
use crate::pacer::Pacer;
use crate::signals;
use crate::throughput::SendMeter;
use crate::wait::Waiter;

/// `--reopen`: how often a closed endpoint is tried to be opened again.
const REOPEN_EVERY_NS: u64 = 10_000_000;

/// `--reopen`: open the endpoint to `peer` again; prints `REOPENED <ns>` on stdout when it opens.
fn reopen(args: &SenderArgs, peer: &str) -> Option<Box<dyn Endpoint>> {
    let common = &args.common;
    let ep = common
        .spec(peer)
        .map_err(TransportError::Address)
        .and_then(|spec| mwperf_transports::open(common.transport, Side::Pub, &spec))
        .ok()?;
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "REOPENED {}", now_ns());
    let _ = out.flush();
    Some(ep)
}

/// One topic's stream to the sub (at `peer`); `lane` = its place among several topics.
pub fn run(
    args: &SenderArgs,
    mut ep: Box<dyn Endpoint>,
    peer: &str,
    waiter: &Waiter,
    lane: Option<Lane<'_>>,
) -> RoleOutcome {
    let run_id = args.common.run_id.unwrap_or_else(super::random_run_id);
    let matched = super::contact::matched_all(
        ep.as_mut(),
        args.common.discovery_timeout,
        args.subscribers,
        args.common.transport.name(),
    );
    let start_ns = lane
        .as_ref()
        .map_or_else(|| now_ns() + 1_000_000, Lane::start_ns);
    let matched_ns = match matched {
        Ok(t) => t,
        Err(e) => return RoleOutcome::failed(e.to_string()),
    };
    let mut pacer = match Pacer::for_sender(args, start_ns, lane.as_ref().map_or(0, Lane::topic)) {
        Ok(p) => p,
        Err(e) => return RoleOutcome::failed(e),
    };
    let topic = lane.as_ref().map_or(0, Lane::topic);
    let mut out = Outgoing::new(run_id, topic, args.payload)
        .test_allocs(args.test_allocs_per_msg)
        .test_delay(args.test_send_delay)
        .sampled(args.throughput);
    let mut book = crate::layers::Book::new(crate::layers::book::Side::Pub, super::expected(args));
    let mut meter = args.throughput.then(SendMeter::default);
    // a throughput stream over a byte stream: each message wholly handed to the socket before
    // the next, as a blocking write (its queue in mwperf would otherwise grow to its bound:
    // seconds of data in flight, and what is left when the pub ends is lost)
    let blocking_write = args.throughput
        && args.common.transport.descriptor().framing == mwperf_transports::Framing::Stream;
    let mut last_taken_ns = now_ns();
    // a subscriber is gone when nothing was taken for --peer-timeout beyond what the
    // middleware may hold every send back for by its own design (Fast DDS: its heartbeat)
    let paced_ns = ep.paced_ns();
    let give_up_ns = args.peer_timeout.saturating_add(paced_ns);
    crate::allocs::setup_done();
    crate::phases::setup_done();
    let mut rx = Vec::new();
    let mut send_errors = 0u64;
    // one subscriber leaving must not end a natively fanned-out stream for the others
    let shared = args.subscribers > 1 && args.common.transport.has_discovery();
    let mut left = 0u64;
    let mut outage = args
        .common
        .outage_window
        .map(|(start, end)| mwperf_core::stats::OutageWatch::new(start, end));
    let mut stop: Option<(Status, String)> = None;
    let reopening = args.common.reopen;
    // --reopen: the connection closed and is not open again yet; when it was last tried
    let (mut down, mut tried_ns) = (false, 0u64);
    let mut reopened = 0u64;
    // a throughput stream: the instant the last send call returned (read to meter it) is the
    // next message's "now", one clock read per message fewer (None: read the clock)
    let mut returned_ns: Option<u64> = None;
    loop {
        if signals::stopped() {
            stop = Some((Status::Partial, "interrupted by signal".into()));
            break;
        }
        let now = returned_ns.take().unwrap_or_else(now_ns);
        let due = match pacer.next_due(now) {
            Err(()) => break,
            Ok(due) => due.unwrap_or(now),
        };
        if down && now >= tried_ns + REOPEN_EVERY_NS {
            tried_ns = now;
            if let Some(new) = reopen(args, peer) {
                (ep, down) = (new, false);
                reopened += 1;
            }
        }
        if now < due && down {
            mwperf_core::clock::sleep_until_ns(due.min(tried_ns + REOPEN_EVERY_NS).max(now));
            continue;
        }
        // --opt timer= of a transport with its own timer (ros2's rcl timer) instead of the pacer
        let mut ticked = false;
        if now < due {
            match ep.wait_tick(due, pacer.period_ns()) {
                Some(Ok(true)) => ticked = true, // this slot goes now
                Some(Ok(false)) => continue,
                Some(Err(e)) => {
                    stop = Some((Status::Failed, format!("waiting for the timer: {e}")));
                    break;
                }
                None => {}
            }
        }
        if now < due && !ticked {
            // what a batching middleware holds leaves before the pause
            ep.drain(0);
            // Nothing is expected back; receiving keeps stream backlogs moving and notices a close.
            match waiter.recv_until(ep.as_mut(), &mut rx, due.min(now + 100_000_000)) {
                Err(TransportError::Closed) if shared => {
                    left += 1; // and wait as a receive would have (a closed link returns at once)
                    mwperf_core::clock::sleep_until_ns(due.min(now + 100_000_000));
                    continue;
                }
                Err(TransportError::Closed) if reopening => {
                    down = true;
                    continue;
                }
                Err(TransportError::Closed) => {
                    stop = Some((
                        Status::Partial,
                        "the subscriber closed the connection".into(),
                    ));
                    break;
                }
                _ => continue,
            }
        }
        let slot = pacer.take(now);
        if let Some(lane) = &lane {
            lane.before_send(slot.index);
        }
        if let Some(recorded) = pacer.replay_bytes() {
            out.load(recorded);
        }
        let (sent_ns, r) = match meter.as_mut() {
            // --reopen, the connection down: sent into the void (counted sent, and lost)
            _ if down => (now_ns(), Err(TransportError::Closed)),
            None => out.send(ep.as_mut(), &slot),
            Some(m) => {
                let (sent_ns, end_ns, r) = send_until_taken(
                    &mut out,
                    ep.as_mut(),
                    &slot,
                    m,
                    give_up_ns,
                    &mut last_taken_ns,
                    blocking_write,
                );
                returned_ns = Some(end_ns);
                (sent_ns, r)
            }
        };
        if let Some(lane) = &lane {
            lane.after_send(slot.index);
        }
        match r {
            Ok(()) => {}
            Err(TransportError::Unreachable { .. }) => send_errors += 1,
            Err(TransportError::Closed) if shared => left += 1,
            Err(TransportError::Closed) if reopening => down = true,
            Err(TransportError::Closed) => {
                stop = Some((
                    Status::Partial,
                    "the subscriber closed the connection".into(),
                ));
                break;
            }
            Err(TransportError::Blocked { .. }) if meter.is_some() && signals::stopped() => {
                stop = Some((Status::Partial, "interrupted by signal".into()));
                break;
            }
            Err(e @ TransportError::Blocked { .. }) if meter.is_some() => {
                stop = Some((
                    Status::Partial,
                    format!(
                        "the subscriber stopped reading: the middleware took no message for --peer-timeout {}{} (last refusal: {e})",
                        mwperf_core::units::format_ns(args.peer_timeout as f64),
                        if paced_ns > 0 {
                            format!(
                                " + {} it may hold sends back by design (its heartbeat period)",
                                mwperf_core::units::format_ns(paced_ns as f64)
                            )
                        } else {
                            String::new()
                        }
                    ),
                ));
                break;
            }
            // --reopen: a broker gone fails a send in its own words (as the ping: any failure
            // but "nothing listens")
            Err(_) if reopening && meter.is_none() => down = true,
            Err(e) => {
                stop = Some((Status::Failed, format!("send failed: {e}")));
                break;
            }
        }
        pacer.sent(&slot, sent_ns);
        crate::phases::sent(slot.intended_ns, sent_ns, !slot.warmup);
        if let (Some(w), false) = (&mut outage, slot.warmup) {
            w.sent(sent_ns);
        }
        if !slot.warmup {
            crate::allocs::message();
            if let Some(b) = &mut book {
                b.sent(run_id, topic, slot.seq, slot.intended_ns, sent_ns);
            }
        }
    }
    drop(book);
    let throughput = meter.and_then(|m| m.finish(now_ns()));
    // a batch, a backlog or unacknowledged messages left: out before the end marker. A run that
    // ended as planned waits up to --peer-timeout for them (a reliable Fast DDS or ROS 2 writer
    // drops with itself what its readers had not acknowledged: leaving earlier counted the
    // middleware's backlog lost, 68-100 % of a saturating 1 MiB keep-all stream that a 1 s wait
    // cut off); a stopped one (a reader that stopped reading, a signal) 1 s at most
    // (and what the middleware paces its repairs by: a Fast DDS reader's missed samples are
    // acknowledged at the writer's next heartbeat, 3 s apart, beyond a 2 s --peer-timeout)
    let delivered = ep.finish(finish_limit(give_up_ns, stop.is_some()));
    drop(lane); // this topic sends no more ticks: the next one must not wait for it
                // the sub ends at the FIN below: the idle session comes first
    crate::phases::drained_then_idle(if stop.is_none() { args.idle } else { 0 });
    let fin = crate::node::end_of_stream::marker(
        run_id,
        topic,
        pacer.measured_sent,
        pacer.warmup_sent,
        pacer.period_ns(),
    );
    crate::node::end_of_stream::send_marker(&fin, |buf| {
        let _ = ep.send(buf);
    });
    // and the markers themselves: a reliable ros2 writer destroyed with them unacknowledged
    // dropped them (an rclpy sub of sensor_msgs/Image got all 300 messages and no marker);
    // a sub that leaves on the first one unmatches, which ends the wait too
    ep.finish(args.peer_timeout.min(1_000_000_000));
    let (status, reason) = match stop {
        Some((s, r)) => (s, Some(r)),
        None if !delivered => (
            Status::Complete,
            Some(format!(
                "left with messages its subscribers had not acknowledged after {} (--peer-timeout {} and the middleware's repair pace {}): the middleware dropped them with the writer (not delivered: undelivered where the subscriber never saw the end-of-stream marker of a reliable queue, else lost; a longer --peer-timeout waits longer)",
                mwperf_core::units::format_ns(give_up_ns as f64),
                mwperf_core::units::format_ns(args.peer_timeout as f64),
                mwperf_core::units::format_ns(paced_ns as f64)
            )),
        ),
        None if send_errors > 0 => (
            Status::Complete,
            Some(format!("{send_errors} sends found nobody listening")),
        ),
        None if reopened > 0 => (
            Status::Complete,
            Some(format!(
                "the connection closed and was opened again {reopened} time(s) (--reopen)"
            )),
        ),
        None if left > 0 => (
            Status::Complete,
            Some(format!(
                "told {left} times that a subscriber left; kept sending to the others"
            )),
        ),
        None => (Status::Complete, None),
    };
    // The schedule accuracy belongs to the sender; the sub owns the latency measurement.
    let schedule = pacer.schedule.summary();
    super::park(ep); // closed once the report is out
    RoleOutcome {
        status,
        reason,
        measurement: None,
        counters: None,
        sent: Some(pacer.measured_sent),
        schedule,
        warmup_ns: Some(args.warmup),
        discovery: Some(mwperf_core::result::Discovery {
            open_ns: None, // the report's: phases::open_ns
            matched_ns,
            first_reply_ns: None,
            probes: 0,
        }),
        per_topic: Vec::new(),
        outage: outage.map(|w| w.counts(true, false)),
        serving: None,
        throughput,
    }
}

/// How long a sender waits at its end for what is still in flight (`Endpoint::finish`): up to
/// `peer_timeout` after a run that ended as planned, at most 1 s after a stopped one.
fn finish_limit(peer_timeout: u64, stopped: bool) -> u64 {
    if stopped {
        peer_timeout.min(1_000_000_000)
    } else {
        peer_timeout
    }
}

/// A throughput pub's send (`--throughput`): a send the middleware refuses after its own
/// blocking bound (`TransportError::Blocked`) is tried again until it is taken, a signal
/// comes, or nothing was taken for `give_up_ns` (then that refusal is returned); every call is
/// metered (warm-up ones not). `blocking_write`: a taken message is also pushed out of the
/// transport's own queue before the call ends (a byte stream), its wait metered with the call.
/// Returns when the message was stamped, when the last call returned, and its outcome.
fn send_until_taken(
    out: &mut Outgoing,
    ep: &mut dyn Endpoint,
    slot: &crate::pacer::Slot,
    meter: &mut SendMeter,
    give_up_ns: u64,
    last_taken_ns: &mut u64,
    blocking_write: bool,
) -> (u64, u64, Result<(), TransportError>) {
    loop {
        let (start_ns, r) = out.send(ep, slot);
        if blocking_write && r.is_ok() {
            ep.drain(give_up_ns);
        }
        let end_ns = now_ns();
        let blocked = matches!(r, Err(TransportError::Blocked { .. }));
        if !slot.warmup && (r.is_ok() || blocked) {
            meter.call(start_ns, end_ns, r.is_ok());
        }
        if r.is_ok() {
            *last_taken_ns = end_ns;
        }
        if !blocked || signals::stopped() || end_ns >= *last_taken_ns + give_up_ns {
            return (start_ns, end_ns, r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pacer::Slot;

    #[test]
    fn a_planned_end_waits_the_peer_timeout_for_acknowledgements_a_stopped_one_1_s_at_most() {
        assert_eq!(finish_limit(5_000_000_000, false), 5_000_000_000);
        assert_eq!(finish_limit(5_000_000_000, true), 1_000_000_000);
        assert_eq!(finish_limit(300_000_000, true), 300_000_000);
    }

    /// Refuses (`Blocked`) its first `refusals` sends, then takes every one.
    struct Stubborn {
        refusals: u32,
        taken: u32,
    }

    impl Endpoint for Stubborn {
        fn send(&mut self, _msg: &[u8]) -> Result<(), TransportError> {
            if self.refusals > 0 {
                self.refusals -= 1;
                std::thread::sleep(std::time::Duration::from_millis(1));
                return Err(TransportError::Blocked {
                    transport: "test",
                    detail: "full".into(),
                });
            }
            self.taken += 1;
            Ok(())
        }
        fn recv(&mut self, _: &mut Vec<u8>, _: u64) -> Result<Option<usize>, TransportError> {
            Ok(None)
        }
        fn local_addr(&self) -> String {
            String::new()
        }
    }

    const SLOT: Slot = Slot {
        intended_ns: 0,
        warmup: false,
        seq: 0,
        index: 0,
    };

    #[test]
    fn a_refused_send_is_tried_again_until_taken_and_each_call_is_metered() {
        let mut ep = Stubborn {
            refusals: 3,
            taken: 0,
        };
        let (mut out, mut meter, mut last) =
            (Outgoing::new(1, 0, 64), SendMeter::default(), now_ns());
        let (_, _, r) = send_until_taken(
            &mut out,
            &mut ep,
            &SLOT,
            &mut meter,
            5_000_000_000,
            &mut last,
            false,
        );
        assert!(r.is_ok());
        assert_eq!(ep.taken, 1);
        let side = meter.finish(now_ns()).unwrap();
        let sending = side.sending.unwrap();
        assert_eq!((side.messages, sending.refused), (1, 3));
        assert!(sending.in_send_s >= 0.003, "{}", sending.in_send_s);
    }

    #[test]
    fn a_reader_that_never_makes_room_ends_the_retries_after_the_give_up_time() {
        let mut ep = Stubborn {
            refusals: u32::MAX,
            taken: 0,
        };
        let (mut out, mut meter) = (Outgoing::new(1, 0, 64), SendMeter::default());
        let start = now_ns();
        let mut last = start;
        let (_, _, r) = send_until_taken(
            &mut out, &mut ep, &SLOT, &mut meter, 50_000_000, &mut last, false,
        );
        let waited = now_ns() - start;
        assert!(matches!(r, Err(TransportError::Blocked { .. })));
        assert!((50_000_000..2_000_000_000).contains(&waited), "{waited}");
        assert_eq!(ep.taken, 0);
    }
}
