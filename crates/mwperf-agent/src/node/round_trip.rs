//! A publisher whose one address answers every message (spec.rs `round_trip`: an echo outlet,
//! a pong, a byte-exact foreign echo such as a relay's): it receives the echoes on the endpoint
//! it sends on, between its sends, on its own thread (one thread for both, as ping), and measures
//! each measured message's round trip as ping does (collector.rs: response from its due time,
//! service from its send). With period 0 it is a closed loop: the next message goes when the
//! reply is back — one in flight — or once `reply_timeout_ns` passed without it (that one is
//! counted lost). After the last send the missing replies are awaited as ping awaits them
//! ([`drain_limit`]).

use mwperf_core::clock::now_ns;
use mwperf_core::result::Measurement;
use mwperf_core::wire::{Header, FLAG_FIN, FLAG_PROBE, FLAG_WARMUP};

use super::publisher::{Sent, Timer};
use super::subscription::NodeContext;
use crate::collector::Collector;
use crate::signals;

/// How long the last replies are awaited after the last send: over a transport that
/// retransmits (a byte stream, a middleware asked for `reliable`) the whole `peer_timeout_ns`,
/// where a missing reply is late, not lost (TCP's retransmission timer alone starts at 200 ms
/// and doubles); else 20 x the largest round trip seen, at least 200 ms, at most
/// `peer_timeout_ns`. ping's and a round-trip publisher's.
pub fn drain_limit(peer_timeout_ns: u64, largest_rtt_ns: u64, retransmits: bool) -> u64 {
    if retransmits {
        peer_timeout_ns
    } else {
        peer_timeout_ns.min(200_000_000u64.max(largest_rtt_ns.saturating_mul(20)))
    }
}

/// The longest a receive waits before the loop looks for a stop request again.
const STOP_CHECK_NS: u64 = 50_000_000;

/// What a round-trip publisher keeps besides its timer.
pub struct RoundTrip {
    col: Collector,
    rx: Vec<u8>,
    /// the last message sent and not yet answered (a closed loop's): seq, warm-up, sent at
    awaiting: Option<(u64, bool, u64)>,
    reply_timeout_ns: u64,
    retransmits: bool,
    last_send_ns: u64,
    /// the receive failed (the endpoint is unusable): the first error
    pub error: Option<String>,
}

impl RoundTrip {
    /// `origin_ns`: its measured phase's start (the per-second series'); `period_ns`: late
    /// above it (0: no lateness); `retransmits`: its transport and QoS resend what was lost.
    pub fn new(origin_ns: u64, period_ns: u64, reply_timeout_ns: u64, retransmits: bool) -> Self {
        RoundTrip {
            col: Collector::new(origin_ns, period_ns, None).expect("no samples file: cannot fail"),
            rx: Vec::with_capacity(64 * 1024),
            awaiting: None,
            reply_timeout_ns,
            retransmits,
            last_send_ns: origin_ns,
            error: None,
        }
    }

    /// A message left: (its seq, warm-up, due time) at `sent_ns`.
    fn sent(&mut self, seq: u64, warmup: bool, intended_ns: u64, sent_ns: u64) {
        if !warmup {
            self.col.window_start(intended_ns);
            self.col.sent(sent_ns);
        }
        self.awaiting = Some((seq, warmup, sent_ns));
        self.last_send_ns = sent_ns;
    }

    /// One echo (or nothing) on `timer`'s endpoint until `until_ns`.
    fn receive(&mut self, timer: &mut Timer, until_ns: u64, node: &NodeContext<'_>) {
        let topic = timer.topic_id();
        let Some(ep) = timer.endpoint() else { return };
        let wait = if node.busy_poll {
            0
        } else {
            until_ns.saturating_sub(now_ns()).min(STOP_CHECK_NS)
        };
        match ep.recv(&mut self.rx, wait) {
            Ok(Some(_)) => {
                let recv_ns = super::clock::stamp(now_ns()); // as its sends: the reference's
                self.arrive(topic, node.run_id, recv_ns);
            }
            Ok(None) => {}
            Err(e) => {
                self.error
                    .get_or_insert_with(|| format!("receive failed: {e}"));
                mwperf_core::clock::sleep_until_ns(until_ns.min(now_ns() + STOP_CHECK_NS));
            }
        }
    }

    /// The buffer's message: an echo of ours (stamped or byte-exact) measured, a late probe
    /// ignored, anything else counted foreign or malformed.
    fn arrive(&mut self, topic: u16, run_id: u32, recv_ns: u64) {
        let h = match Header::decode(&self.rx) {
            Ok(h) if h.run_id == run_id && h.flags & (FLAG_PROBE | FLAG_FIN) != 0 => return,
            Ok(h) if h.run_id == run_id && h.topic == topic => h,
            Ok(_) => return self.col.seq.foreign += 1,
            Err(r) => return self.col.reject(r),
        };
        let warmup = h.flags & FLAG_WARMUP != 0;
        if warmup {
            self.col.seq.warmup_received += 1;
        } else {
            self.col.arrive(&h, &self.rx, recv_ns);
        }
        if self
            .awaiting
            .is_some_and(|(seq, w, _)| seq == h.seq && w == warmup)
        {
            self.awaiting = None;
        }
    }

    /// The round trips' measurement: `sent` by the publisher, the window until `end_ns`.
    fn finish(self, sent: &Sent, payload_bytes: u64, end_ns: u64) -> Measurement {
        self.col.finish(
            "roundtrip",
            sent.sent,
            sent.warmup_sent,
            payload_bytes,
            end_ns,
            sent.schedule.clone(),
        )
    }
}

/// Publish with `timer` and measure the echoes with `rt` on this thread until its schedule
/// ends and the missing replies were awaited (or a stop signal). Under the single executor a
/// send takes the node's turn, as a timer callback does; receiving does not (it is the
/// middleware's wait, not a callback).
pub fn run(
    mut timer: Timer,
    mut rt: RoundTrip,
    node: &NodeContext<'_>,
    payload_bytes: u32,
) -> Sent {
    let closed = timer.saturating();
    // the last step was a send with no receive tried since (see below)
    let mut sent_last = false;
    while !signals::stopped() && rt.error.is_none() {
        let now = now_ns();
        if let Some((_, _, sent_ns)) = rt.awaiting.filter(|_| closed) {
            let give_up = sent_ns + rt.reply_timeout_ns;
            if now < give_up {
                rt.receive(&mut timer, give_up, node);
                sent_last = false;
                continue;
            }
            rt.awaiting = None; // no reply in time: lost, the next one goes
        }
        let Some(due) = timer.due() else { break };
        let wake = due.saturating_sub(timer.spin_margin_ns());
        // a closed loop's next is due now (its due time is read after `now`)
        if !closed && now < wake {
            rt.receive(&mut timer, wake, node);
            sent_last = false;
            continue;
        }
        if sent_last {
            // behind its schedule, sending back to back: what arrived since the last send is
            // taken first, without waiting (else the echoes wait unread, and the peer blocks
            // writing them)
            rt.receive(&mut timer, now, node);
        }
        sent_last = true;
        let _turn = node
            .executor
            .map(|m| m.lock().unwrap_or_else(|p| p.into_inner()));
        if let Some((slot, sent_ns)) = timer.fire(node.run_id, node.source) {
            rt.sent(slot.seq, slot.warmup, slot.intended_ns, sent_ns);
        }
    }
    let largest = rt.col.response.max().unwrap_or(0);
    // and what the middleware may hold a lost message's repair back for (a reliable Fast DDS
    // writer: its next heartbeat), as ping waits
    let paced_ns = timer.endpoint().map_or(0, |ep| ep.paced_ns());
    let end = rt.last_send_ns
        + drain_limit(
            rt.reply_timeout_ns.saturating_add(paced_ns),
            largest,
            rt.retransmits,
        );
    while !signals::stopped()
        && rt.error.is_none()
        && rt.col.seq.distinct() < timer.measured_sent()
        && now_ns() < end
    {
        rt.receive(&mut timer, end, node);
    }
    if !signals::stopped() {
        timer.end_of_stream(node.run_id, node.source); // after the replies: the echo's end
    }
    let end_ns = timer
        .planned_end_ns()
        .map_or(rt.last_send_ns, |e| e.min(now_ns()));
    let error = rt.error.take();
    let mut sent = timer.finish();
    sent.round_trip = Some(rt.finish(&sent, payload_bytes as u64, end_ns));
    if let Some(e) = error {
        sent.first_error.get_or_insert(e);
    }
    sent
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use mwperf_transports::{Endpoint, TransportError};

    use super::*;
    use crate::node::publisher::Schedule;

    /// A peer that answers as an echo outlet does, at once, except the measured messages in
    /// `drop` (never answered); it records how many were outstanding at each send.
    struct Echo {
        queue: VecDeque<Vec<u8>>,
        drop: Vec<u64>,
        most_in_flight: Arc<AtomicUsize>,
    }

    impl Endpoint for Echo {
        fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
            self.most_in_flight
                .fetch_max(self.queue.len() + 1, Ordering::Relaxed);
            let h = Header::decode(msg).unwrap();
            if h.flags & FLAG_WARMUP == 0 && self.drop.contains(&h.seq) {
                return Ok(());
            }
            let mut reply = msg.to_vec();
            crate::node::echo::stamped(h, now_ns()).encode(&mut reply);
            self.queue.push_back(reply);
            Ok(())
        }
        fn recv(
            &mut self,
            buf: &mut Vec<u8>,
            _wait_ns: u64,
        ) -> Result<Option<usize>, TransportError> {
            Ok(self.queue.pop_front().map(|m| {
                buf.clear();
                buf.extend_from_slice(&m);
                m.len()
            }))
        }
        fn local_addr(&self) -> String {
            "echo".into()
        }
    }

    /// 2 ms of warm-up and 10 ms measured with `period_ns` (0: a closed loop) against [`Echo`]
    /// dropping `drop`; what was sent and the most messages ever in flight.
    fn closed_loop(drop: Vec<u64>, period_ns: u64, reply_timeout_ns: u64) -> (Sent, usize) {
        looped(now_ns(), drop, period_ns, reply_timeout_ns)
    }

    /// [`closed_loop`] with its schedule starting at `start`.
    fn looped(start: u64, drop: Vec<u64>, period_ns: u64, reply_timeout_ns: u64) -> (Sent, usize) {
        let at = Schedule {
            start_ns: start,
            warmup_end_ns: start + 2_000_000,
            end_ns: start + 12_000_000,
            spin_margin_ns: 0,
            open_until_ns: start + 12_000_000,
        };
        let in_flight = Arc::new(AtomicUsize::new(0));
        let peer = Echo {
            queue: VecDeque::new(),
            drop,
            most_in_flight: in_flight.clone(),
        };
        let timer = Timer::new(
            "/ping",
            3,
            32,
            period_ns,
            Vec::new(),
            vec![Box::new(peer)],
            at,
        );
        let node = NodeContext {
            run_id: 7,
            source: 1,
            executor: None,
            busy_poll: false,
        };
        let rt = RoundTrip::new(start + 2_000_000, period_ns, reply_timeout_ns, false);
        let sent = run(timer, rt, &node, 32);
        let most = in_flight.load(Ordering::Relaxed);
        (sent, most)
    }

    #[test]
    fn a_closed_loop_sends_the_next_when_the_reply_is_back_and_gives_up_after_the_timeout() {
        // every answer is there at the next receive and no wait ever gives up: one in flight
        let (sent, in_flight) = closed_loop(Vec::new(), 0, u64::MAX / 4);
        let m = sent.round_trip.clone().expect("a round trip");
        assert!(sent.sent > 10, "{sent:?}");
        assert_eq!(in_flight, 1); // each sent when the one before was answered
        assert_eq!(m.accounting.received, sent.sent);
        assert_eq!(m.accounting.lost, 0);
        assert_eq!(m.response.count, sent.sent);
        // measured 2 and 5 never answered: each waited for 1 ms, counted lost, the loop went on
        // (an answer given up on by a stalled thread is still taken later: not lost)
        let before = now_ns();
        let (sent, _) = closed_loop(vec![2, 5], 0, 1_000_000);
        let m = sent.round_trip.clone().expect("a round trip");
        assert!(sent.sent > 5, "{sent:?}");
        assert_eq!(m.accounting.received + 2, sent.sent, "{m:?}");
        assert_eq!(m.accounting.lost, 2);
        assert!(now_ns() - before >= 12_000_000); // its 12 ms, the 2 ms waited within them
    }

    #[test]
    fn a_paced_round_trip_keeps_its_schedule_and_measures_every_echo() {
        let (sent, _) = closed_loop(Vec::new(), 1_000_000, 1_000_000);
        // 10 ms measured at 1 kHz, every echo back
        assert_eq!(sent.sent, 10);
        let m = sent.round_trip.clone().expect("a round trip");
        assert_eq!(m.accounting.received, 10);
        assert_eq!(sent.schedule.as_ref().map(|s| s.lateness.count), Some(10));
    }

    #[test]
    fn a_sender_behind_its_schedule_takes_each_echo_before_its_next_send() {
        // the schedule began 8 ms ago: 8 sends are due at once and go back to back; each echo
        // is taken before the next send, so never more than one is in flight (unread echoes
        // would pile up, as they did in front of a pong blocked writing them)
        let (sent, in_flight) = looped(now_ns() - 8_000_000, Vec::new(), 1_000_000, 1_000_000);
        let m = sent.round_trip.clone().expect("a round trip");
        assert_eq!(sent.sent, 10);
        assert_eq!(in_flight, 1);
        assert_eq!(m.accounting.received, 10);
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn the_final_wait_scales_with_the_largest_rtt_between_200_ms_and_the_peer_timeout() {
        assert_eq!(drain_limit(2000 * MS, MS, false), 200 * MS);
        assert_eq!(drain_limit(2000 * MS, 30 * MS, false), 600 * MS);
        assert_eq!(drain_limit(2000 * MS, 500 * MS, false), 2000 * MS);
    }

    #[test]
    fn a_retransmitting_transport_is_awaited_for_the_whole_peer_timeout() {
        // TCP at 100 Hz over a 5 % lossy link: a 20 ms largest RTT so far, and the last segment
        // lost twice (200 + 400 ms of retransmission timer) must still arrive.
        assert_eq!(drain_limit(2000 * MS, 20 * MS, true), 2000 * MS);
    }
}
