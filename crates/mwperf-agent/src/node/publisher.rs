//! A timer-driven publisher of a graph node: one message every period on an absolute schedule
//! (the due time is the message's intended time, so a late send is seen, not hidden), the
//! warm-up's messages flagged, to every address of its topic. A period of 0 (a graph file's
//! `rate: max`) saturates: messages back to back, each as soon as the middleware accepted the
//! one before (a reliable QoS's flow control blocks the send), its intended time its send's;
//! such a publisher is a publishing loop on a thread of its own, not a timer callback, so it
//! never takes the node's single executor (the other callbacks of its node are held up by the
//! CPU it takes, as a worker thread's, not by the executor's turn).

use mwperf_core::clock::{now_ns, sleep_until_ns};
use mwperf_core::wire::{fill_payload, Header, FLAG_WARMUP, HEADER_LEN};
use mwperf_transports::Endpoint;
use serde::Serialize;

use crate::pacer::{Pacer, Slot};
use crate::signals;

/// What a publisher (or a stage's outlet) sent.
#[derive(Serialize, serde::Deserialize, Debug, Default, Clone)]
pub struct Sent {
    pub topic: String,
    pub id: u16,
    /// measured messages (after the warm-up)
    pub sent: u64,
    pub warmup_sent: u64,
    /// sends the transport refused (each counted once per address)
    pub send_errors: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// the largest delay of a send past its due time (timer publishers)
    pub max_send_lag_ns: u64,
    /// a paced publisher's sends against their due times (the measured ones): lateness
    /// statistics and how many were more than a period late (pacer.rs, as ping's and pub's)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<mwperf_core::result::Schedule>,
    /// a round-trip publisher's (spec.rs `round_trip`) echoes: the round trip of each measured
    /// message, as ping measures it (node/round_trip.rs)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trip: Option<mwperf_core::result::Measurement>,
    /// a restarted node's publisher (spec `resume`): the number of the first measured message
    /// it could still send; those before were sent by the process it replaces or were due
    /// while none ran
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_at_seq: Option<u64>,
    /// spec `progress`: its counts, written over after every send (a killed process's last
    /// counts survive it there: [`Progress`])
    #[serde(skip)]
    pub progress: Option<Progress>,
}

/// A file that always holds what a publisher has sent so far: 24 bytes, its warm-up messages,
/// its measured messages and the number of its first measured message (0, or where a restarted
/// process resumed: [`Timer::resumed`]) as u64 little-endian, written over in place after
/// every send. A node that may be killed mid-run (`--restart`) keeps it so the control plane
/// knows what the killed process sent (one pwrite to the page cache: it survives SIGKILL).
#[derive(Debug, Clone)]
pub struct Progress {
    file: std::sync::Arc<std::fs::File>,
    first_seq: u64,
}

impl Progress {
    pub fn create(path: &str) -> Result<Self, String> {
        let file = std::fs::File::create(path).map_err(|e| format!("progress {path}: {e}"))?;
        let p = Progress {
            file: std::sync::Arc::new(file),
            first_seq: 0,
        };
        p.write(0, 0);
        Ok(p)
    }

    /// The number of the first measured message (a restarted chain stage's: its spec's).
    pub fn first_seq(mut self, seq: u64) -> Self {
        self.first_seq = seq;
        self.write(0, 0);
        self
    }

    fn write(&self, warmup_sent: u64, sent: u64) {
        use std::os::unix::fs::FileExt;
        let mut bytes = [0u8; 24];
        bytes[..8].copy_from_slice(&warmup_sent.to_le_bytes());
        bytes[8..16].copy_from_slice(&sent.to_le_bytes());
        bytes[16..].copy_from_slice(&self.first_seq.to_le_bytes());
        let _ = self.file.write_all_at(&bytes, 0); // lost: the restart's figures say unknown
    }
}

/// One message's header and payload into `buf` (payload first: a large payload's pattern is
/// written before the send time is taken), then sent to every endpoint, and what a byte stream
/// queued pushed out (waiting at most `drain_ns` for the peer: a publisher receives nothing, so
/// nothing else would flush its message's tail before its next send).
/// With `reopen` (spec `reopen`) an endpoint whose connection or broker went away is opened
/// again before a later send ([`super::reopen::Reopen`]).
pub fn send(
    eps: &mut [Box<dyn Endpoint>],
    buf: &mut Vec<u8>,
    mut h: Header,
    sent: &mut Sent,
    drain_ns: u64,
    mut reopen: Option<&mut super::reopen::Reopen>,
) -> u64 {
    if let Some(r) = reopen.as_deref_mut() {
        r.heal(eps);
    }
    buf.resize(HEADER_LEN + h.payload_len as usize, 0);
    fill_payload(&mut buf[HEADER_LEN..], h.seq);
    // counted before it is handed over (a refused send is counted too, and in send_errors): a
    // kill between the two leaves a message counted that never left, never one that left
    // uncounted (the progress file then says what the restarted process's numbers follow)
    if h.flags & FLAG_WARMUP != 0 {
        sent.warmup_sent += 1;
    } else {
        sent.sent += 1;
    }
    if let Some(p) = &sent.progress {
        p.write(sent.warmup_sent, sent.sent);
    }
    h.sent_ns = super::clock::stamp(now_ns()); // the reference's clock (node/clock.rs)
    h.encode(buf);
    let down =
        |r: &Option<&mut super::reopen::Reopen>, i: usize| r.as_ref().is_some_and(|r| r.is_down(i));
    for (i, ep) in eps.iter_mut().enumerate() {
        if down(&reopen, i) {
            continue; // gone until opened again: the message goes nowhere
        }
        if let Err(e) = ep.send(buf) {
            sent.send_errors += 1;
            sent.first_error.get_or_insert_with(|| e.to_string());
            if let Some(r) = reopen.as_deref_mut() {
                r.failed(i, &e);
            }
        }
    }
    for (i, ep) in eps.iter_mut().enumerate() {
        if !down(&reopen, i) {
            ep.drain(drain_ns);
        }
    }
    h.sent_ns
}

pub struct Schedule {
    pub start_ns: u64,
    pub warmup_end_ns: u64,
    pub end_ns: u64,
    /// sleep until this long before each due time, then spin: the wake-up's delay is not the
    /// message's (as ping and pub do, `--spin-margin`)
    pub spin_margin_ns: u64,
    /// the publisher's endpoints stay open until then (the node's linger), as a running node's
    /// do: a middleware that writes in the background still delivers (and retransmits) its last
    /// messages
    pub open_until_ns: u64,
}

/// A timer-driven publisher's state: its pacer (pacer.rs, as ping's and pub's: what is due
/// next, warm-up or measured, and each send's lateness) and what it sent. [`run`] drives it on
/// a thread of its own, the node's one-thread loop (event_loop.rs) beside a subscription.
pub struct Timer {
    id: u16,
    payload_bytes: u32,
    /// message k's payload is entry k mod len; empty: `payload_bytes` (graph/sizes.py)
    sizes: Vec<u32>,
    pacer: Pacer,
    eps: Vec<Box<dyn Endpoint>>,
    at: Schedule,
    buf: Vec<u8>,
    sent: Sent,
    /// `--layers-out`: each measured message's due time and write call
    book: Option<crate::layers::Book>,
    /// send the end-of-stream marker after the last message (spec.rs `end_marker`); then false
    end_marker: bool,
    /// a replayed recording's times pace it (`offsets`), not a period
    replayed: bool,
    /// spec `reopen`: its endpoints opened again when their connection or broker went away
    reopen: Option<super::reopen::Reopen>,
}

impl Timer {
    /// Every `period_ns` (0: back to back) from `at.start_ns`; with `offsets` (a replayed
    /// recording's times, graph file `replay:`) message k is due at the start + `offsets[k mod
    /// n]`, the list looped every last offset + the period.
    pub fn new(
        topic: &str,
        id: u16,
        payload_bytes: u32,
        period_ns: u64,
        offsets: Vec<u64>,
        eps: Vec<Box<dyn Endpoint>>,
        at: Schedule,
    ) -> Self {
        let replayed = !offsets.is_empty();
        let schedule = mwperf_core::schedule::Schedule::looped(at.start_ns, period_ns, offsets);
        let pacer = Pacer::between(schedule, at.start_ns, at.warmup_end_ns, at.end_ns);
        let expected = (at.end_ns.saturating_sub(at.warmup_end_ns))
            .checked_div(period_ns)
            .unwrap_or(1 << 16);
        Timer {
            book: crate::layers::Book::new(crate::layers::book::Side::Pub, expected + 1),
            id,
            payload_bytes,
            sizes: Vec::new(),
            pacer,
            eps,
            at,
            buf: Vec::with_capacity(HEADER_LEN + payload_bytes as usize),
            sent: Sent {
                topic: topic.to_string(),
                id,
                ..Default::default()
            },
            end_marker: false,
            replayed,
            reopen: None,
        }
    }

    /// Send the end-of-stream marker once its schedule has ended ([`Timer::end_of_stream`]).
    pub fn with_end_marker(mut self, on: bool) -> Self {
        self.end_marker = on;
        self
    }

    /// Its schedule has ended: the end-of-stream marker to every address (once, when asked
    /// for), carrying what it sent and the node's index `source` (node/end_of_stream.rs).
    pub fn end_of_stream(&mut self, run_id: u32, source: u32) {
        if !std::mem::take(&mut self.end_marker) {
            return;
        }
        let h = super::end_of_stream::marker(
            run_id,
            self.id,
            self.sent.sent,
            self.sent.warmup_sent,
            source as u64,
        );
        let eps = &mut self.eps;
        super::end_of_stream::send_marker(&h, |buf| {
            for ep in eps.iter_mut() {
                let _ = ep.send(buf); // as pub's: a marker lost ends the subscriber at its window
            }
        });
    }

    /// Its endpoints opened again when their connection or broker went away (spec `reopen`).
    pub fn with_reopen(mut self, reopen: Option<super::reopen::Reopen>) -> Self {
        self.reopen = reopen;
        self
    }

    /// Its counts kept in `progress` after every send (spec `progress`).
    pub fn with_progress(mut self, progress: Option<Progress>) -> Self {
        self.sent.progress = progress;
        self
    }

    /// A restarted node's publisher (spec `resume`) joins its schedule at `at_ns`: nothing due
    /// before then is sent, and its messages keep the schedule's numbers.
    pub fn resumed(mut self, at_ns: Option<u64>) -> Self {
        if let Some(at) = at_ns {
            self.sent.resumed_at_seq = self.pacer.skip_to(at);
            if let Some(p) = self.sent.progress.as_mut() {
                p.first_seq = self.sent.resumed_at_seq.unwrap_or(0);
                p.write(0, 0);
            }
        }
        self
    }

    /// Message k's payload from `sizes`, cycled (a distribution, a recording's topic).
    pub fn with_sizes(mut self, sizes: Vec<u32>) -> Self {
        if let Some(&largest) = sizes.iter().max() {
            self.buf.reserve(HEADER_LEN + largest as usize);
        }
        self.sizes = sizes;
        self
    }

    /// When the next message is due; None once the schedule has ended. Saturating: now (or
    /// the start, before it).
    pub fn due(&self) -> Option<u64> {
        let now = now_ns();
        match self.pacer.next_due(now) {
            Ok(Some(due)) => Some(due),
            Ok(None) => Some(now.max(self.at.start_ns)),
            Err(()) => None,
        }
    }

    /// Back to back (period 0, `rate: max`): as fast as the middleware accepts.
    pub fn saturating(&self) -> bool {
        self.pacer.period_ns() == 0
    }

    /// A timer of the transport's paces this publisher (`--opt timer=rcl` on ros2): a periodic
    /// one, so only for a periodic schedule (a replayed recording's times and a saturating
    /// publisher keep mwperf's).
    pub fn own_timer(&self) -> bool {
        !self.saturating() && !self.replayed && self.eps.first().is_some_and(|e| e.own_timer())
    }

    /// Wait for the transport timer's tick of the slot due at `due` (in slices, so a stop is
    /// seen within one); false = stopped, or the timer failed (its error is the report's
    /// first error).
    pub fn wait_tick(&mut self, due: u64) -> bool {
        let period = self.pacer.period_ns();
        loop {
            if signals::stopped() {
                return false;
            }
            if now_ns() >= due {
                return true; // late (a stall): the catch-up sends it now, as the pacer would
            }
            match self.eps[0].wait_tick(due, period) {
                Some(Ok(true)) | None => return true,
                Some(Ok(false)) => {}
                Some(Err(e)) => {
                    self.sent
                        .first_error
                        .get_or_insert_with(|| format!("waiting for the timer: {e}"));
                    return false;
                }
            }
        }
    }

    /// The spin margin before each due time.
    pub fn spin_margin_ns(&self) -> u64 {
        self.at.spin_margin_ns
    }

    /// Send the message due now (spinning until its due time first): its slot (its due time
    /// on the reference's clock) and when it was sent; None when nothing is due any more.
    pub fn fire(&mut self, run_id: u32, source: u32) -> Option<(Slot, u64)> {
        let due = self.due()?;
        while now_ns() < due {
            std::hint::spin_loop();
        }
        let slot = self.pacer.take(due);
        let h = Header {
            flags: if slot.warmup { FLAG_WARMUP } else { 0 },
            run_id,
            topic: self.id,
            seq: slot.seq,
            intended_ns: super::clock::stamp(slot.intended_ns),
            sent_ns: 0,
            peer_rx_ns: source as u64,
            payload_len: if self.sizes.is_empty() {
                self.payload_bytes
            } else {
                self.sizes[(slot.index % self.sizes.len() as u64) as usize]
            },
        };
        // saturating: each message wholly handed over before the next, as a blocking write
        // (a byte stream's queue would otherwise grow to its bound: seconds of data in flight)
        let drain_ns = if self.saturating() {
            SATURATED_DRAIN_NS
        } else {
            self.pacer.period_ns()
        };
        let at_ns = send(
            &mut self.eps,
            &mut self.buf,
            h,
            &mut self.sent,
            drain_ns,
            self.reopen.as_mut(),
        );
        // both on the reference's clock; a saturating publisher has no schedule to lag behind
        let slot = Slot {
            intended_ns: h.intended_ns,
            ..slot
        };
        self.pacer.sent(&slot, at_ns);
        if !self.saturating() {
            let lag = at_ns.saturating_sub(h.intended_ns);
            self.sent.max_send_lag_ns = self.sent.max_send_lag_ns.max(lag);
        }
        if !slot.warmup {
            crate::allocs::message();
            if let Some(b) = &mut self.book {
                b.node_sent(run_id, self.id, source, h.seq, h.intended_ns, at_ns, None);
            }
        }
        Some((slot, at_ns))
    }

    /// Its topic's number (the header's `topic`).
    pub fn topic_id(&self) -> u16 {
        self.id
    }

    /// Its first endpoint: a round trip's one address, where the echoes come back.
    pub fn endpoint(&mut self) -> Option<&mut Box<dyn Endpoint>> {
        self.eps.first_mut()
    }

    /// Measured messages sent so far.
    pub fn measured_sent(&self) -> u64 {
        self.sent.sent
    }

    /// The end of its measured messages as planned: the due time after the last (None when
    /// saturating).
    pub fn planned_end_ns(&self) -> Option<u64> {
        self.pacer.planned_end_ns()
    }

    /// What it sent, with its sends' lateness against their due times (a paced publisher's).
    pub fn finish(self) -> Sent {
        Sent {
            schedule: self.pacer.schedule.summary(),
            ..self.sent
        }
    }
}

/// Publish with `timer` on this thread until its schedule ends (or a stop signal): sleep until
/// the spin margin before each due time (in slices, so a stop is seen within one), then fire —
/// holding the node's single executor when it has one, as a timer callback would (a saturating
/// publisher does not: it is a loop on its own thread, see the module doc). What a byte stream
/// still has queued after the last message is pushed out before the endpoints close.
///
/// With a transport's own timer (`--opt timer=rcl` on ros2: [`Timer::own_timer`]) the
/// publisher waits for that timer's tick of each slot instead (the timer started at the first
/// due time, so its ticks fall on the schedule; [`Endpoint::wait_tick`]), and a failing timer
/// ends the publisher, named in its report.
pub fn run(mut timer: Timer, node: &super::subscription::NodeContext<'_>) -> Sent {
    while let Some(due) = timer.due() {
        if timer.own_timer() {
            if !timer.wait_tick(due) {
                break;
            }
        } else {
            let wake = due.saturating_sub(timer.spin_margin_ns());
            loop {
                let now = now_ns();
                if now >= wake || signals::stopped() {
                    break;
                }
                sleep_until_ns(wake.min(now + STOP_CHECK_NS));
            }
        }
        if signals::stopped() {
            break;
        }
        let _turn = node
            .executor
            .filter(|_| !timer.saturating())
            .map(|m| m.lock().unwrap_or_else(|p| p.into_inner()));
        timer.fire(node.run_id, node.source);
    }
    if !signals::stopped() {
        timer.end_of_stream(node.run_id, node.source);
    }
    for ep in timer.eps.iter_mut() {
        ep.drain(timer.at.open_until_ns.saturating_sub(now_ns()));
    }
    while !signals::stopped() && now_ns() < timer.at.open_until_ns {
        sleep_until_ns(timer.at.open_until_ns.min(now_ns() + STOP_CHECK_NS));
    }
    timer.finish()
}

/// The longest a sleeping publisher goes without looking for a stop request.
const STOP_CHECK_NS: u64 = 50_000_000;

/// How long a saturating publisher waits for a byte stream's peer to take a message's tail
/// before its next send (a stream's own send gives up on a peer stalled for 10 s).
const SATURATED_DRAIN_NS: u64 = 10_000_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    fn at(start_ns: u64, warmup_ns: u64, end_ns: u64) -> Schedule {
        Schedule {
            start_ns,
            warmup_end_ns: start_ns + warmup_ns,
            end_ns,
            spin_margin_ns: 0,
            open_until_ns: end_ns,
        }
    }

    #[test]
    fn a_saturating_publisher_sends_back_to_back_until_its_end() {
        let start = now_ns();
        let mut t = Timer::new(
            "/load",
            1,
            64,
            0,
            Vec::new(),
            Vec::new(),
            at(start, 1_000_000, start + 20_000_000),
        );
        assert!(t.saturating());
        while t.due().is_some() {
            t.fire(7, 1);
        }
        assert!(now_ns() >= start + 20_000_000);
        // far more than any paced rate in 20 ms, the warm-up's flagged, no lag counted
        assert!(t.sent.sent > 100, "{:?}", t.sent);
        assert!(t.sent.warmup_sent > 0, "{:?}", t.sent);
        assert_eq!(t.sent.max_send_lag_ns, 0);
        assert!(t.finish().schedule.is_none());
    }

    #[test]
    fn progress_holds_what_was_sent_after_every_send_and_a_resumed_one_skips() {
        let path = std::env::temp_dir().join(format!("mwperf-progress-{}", std::process::id()));
        let path = path.to_str().unwrap().to_string();
        let read = || {
            let b = std::fs::read(&path).unwrap();
            let at = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap());
            (at(0), at(1), at(2))
        };
        // 1 ms period from 0: slots 0, 1 warm-up, 2..9 measured
        let timer = |resume: Option<u64>| {
            Timer::new(
                "/a",
                0,
                8,
                1_000_000,
                Vec::new(),
                Vec::new(),
                at(0, 2_000_000, 10_000_000),
            )
            .with_progress(Some(Progress::create(&path).unwrap()))
            .resumed(resume)
        };
        let mut t = timer(None);
        assert_eq!(read(), (0, 0, 0));
        for _ in 0..5 {
            t.fire(1, 1);
        }
        assert_eq!(read(), (2, 3, 0)); // as its report would say
        assert_eq!(t.sent.resumed_at_seq, None);
        let mut t = timer(Some(6_500_000)); // restarted at 6.5 ms: measured #5 is next
        assert_eq!(read(), (0, 0, 5));
        assert_eq!(t.sent.resumed_at_seq, Some(5));
        let (slot, _) = t.fire(1, 1).unwrap();
        assert_eq!(
            (slot.seq, slot.intended_ns, slot.warmup),
            (5, 7_000_000, false)
        );
        assert_eq!(read(), (0, 1, 5));
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_paced_publisher_keeps_its_schedule() {
        let start = now_ns();
        let mut t = Timer::new(
            "/ping",
            0,
            64,
            1_000_000,
            Vec::new(),
            Vec::new(),
            at(start, 0, start + 5_000_000),
        );
        assert!(!t.saturating());
        let mut dues = Vec::new();
        while let Some(due) = t.due() {
            dues.push(due - start);
            t.fire(7, 1);
        }
        assert_eq!(dues, [0, 1_000_000, 2_000_000, 3_000_000, 4_000_000]);
        assert_eq!(t.sent.sent, 5);
        // the pacer's lateness, one per measured send; its (exact) max is the largest lag
        let sent = t.finish();
        let schedule = sent.schedule.expect("a paced publisher's schedule");
        assert_eq!(schedule.period_ns, 1_000_000);
        assert_eq!(schedule.lateness.count, 5);
        assert_eq!(schedule.lateness.max_ns, Some(sent.max_send_lag_ns));
    }

    #[test]
    fn an_end_marker_follows_the_last_message_once_carrying_the_counts() {
        let start = now_ns();
        let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        struct Keep(std::sync::Arc<std::sync::Mutex<Vec<Vec<u8>>>>);
        impl Endpoint for Keep {
            fn send(&mut self, msg: &[u8]) -> Result<(), mwperf_transports::TransportError> {
                self.0.lock().unwrap().push(msg.to_vec());
                Ok(())
            }
            fn recv(
                &mut self,
                _buf: &mut Vec<u8>,
                _wait_ns: u64,
            ) -> Result<Option<usize>, mwperf_transports::TransportError> {
                Ok(None)
            }
            fn local_addr(&self) -> String {
                "keep".into()
            }
        }
        let mut t = Timer::new(
            "/t",
            4,
            16,
            1_000_000,
            Vec::new(),
            vec![Box::new(Keep(out.clone()))],
            at(start, 1_000_000, start + 4_000_000),
        )
        .with_end_marker(true);
        while t.due().is_some() {
            t.fire(7, 9);
        }
        t.end_of_stream(7, 9);
        t.end_of_stream(7, 9); // once only
        let sent: Vec<_> = out
            .lock()
            .unwrap()
            .iter()
            .map(|m| Header::decode(m).unwrap())
            .collect();
        // 1 warm-up, 3 measured, then the marker three times
        assert_eq!(sent.len(), 4 + 3);
        for m in &sent[4..] {
            assert_eq!(
                (m.flags, m.topic, m.seq, m.intended_ns, m.peer_rx_ns),
                (mwperf_core::wire::FLAG_FIN, 4, 3, 1, 9)
            );
        }
    }

    #[test]
    fn a_replayed_recording_keeps_its_times_looped() {
        let start = now_ns();
        let mut t = Timer::new(
            "/scan",
            0,
            64,
            1_000_000,
            vec![0, 500_000, 2_000_000],
            Vec::new(),
            at(start, 0, start + 7_000_000),
        );
        let mut dues = Vec::new();
        while let Some(due) = t.due() {
            dues.push(due - start);
            t.fire(7, 1);
        }
        // looped every 2 ms + one period
        assert_eq!(
            dues,
            [0, 500_000, 2_000_000, 3_000_000, 3_500_000, 5_000_000, 6_000_000, 6_500_000]
        );
        assert_eq!(t.sent.sent, 8);
    }
}
