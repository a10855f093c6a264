//! A service client of a graph node (graph file `clients:`): calls its service on an absolute
//! schedule (a call slot every period from its phase, the warm-up's calls flagged), with at most
//! `in_flight` calls outstanding, on a thread of its own.
//!
//! Why a thread per client rather than the node's one-thread loop (event_loop.rs): a client
//! waits for replies, and a slot that comes due while it has no room waits for one; on the
//! node's loop that wait would hold back the node's timers and subscription (or theirs the
//! client's). On its own thread each client keeps its schedule as a publisher's timer thread
//! does, and under a single-threaded executor it still takes the node's turn for each callback
//! (sending a call, handling a reply), so a long callback elsewhere in the node delays it as it
//! would in rclcpp. First contact (probe calls until one is answered) is made before READY,
//! by roles/client.rs's `first_contact`.
//!
//! A call's latency is taken on this node's clock alone: `response` from the slot's intended
//! time (coordinated omission corrected: a slot that waited for room keeps its time), `service`
//! from the actual call, both to the reply's callback. The accounting is roles/client.rs's: a
//! call is answered, an error (the server said so), a send error, or a timeout (no reply
//! `timeout` after it was sent: given up; a later reply counts as unmatched). Slots the client
//! could not call before the node's linger was half over (no room all that time) are `skipped`.

use mwperf_core::clock::{now_ns, sleep_until_ns};
use mwperf_core::result::{Discovery, Measurement};
use mwperf_core::wire::{fill_payload, Header, FLAG_WARMUP, HEADER_LEN};
use mwperf_transports::{CallId, Client, Reply, TransportError};
use serde::Serialize;

use super::spec::ClientSpec;
use super::subscription::NodeContext;
use crate::collector::Collector;
use crate::roles::call_book::{CallBook, ReplyCheck};
use crate::roles::client::WARMUP_SEQ;
use crate::roles::outstanding::Call;
use crate::signals;

/// What one client of the node did.
#[derive(Serialize, Debug)]
pub struct CallerReport {
    pub service: String,
    pub id: u16,
    /// measured call slots (due between the warm-up's end and the measurement's)
    pub slots: u64,
    /// measured slots never called: no room until the calls stopped
    pub skipped: u64,
    /// the calls (`measurement.calls`), their latencies: `response` from the intended time,
    /// `service` from the actual call
    pub measurement: Measurement,
    /// discovery and first contact
    pub discovery: Discovery,
}

/// When a client calls: slot k is due at `start_ns + k * period`, warm-up before
/// `warmup_end_ns`, none from `end_ns`; calls stop at `call_until_ns`, replies are awaited
/// until `drain_until_ns`.
pub struct CallSchedule {
    pub start_ns: u64,
    pub warmup_end_ns: u64,
    pub end_ns: u64,
    pub spin_margin_ns: u64,
    pub call_until_ns: u64,
    pub drain_until_ns: u64,
}

/// The longest single wait: stop signals are seen at least this often.
const MAX_WAIT_NS: u64 = 50_000_000;

#[derive(Default)]
struct Tally {
    warmup_sent: u64,
    sent: u64,
}

/// One client's state while it calls.
pub struct Caller {
    spec: ClientSpec,
    c: Box<dyn Client>,
    discovery: Discovery,
    book: CallBook,
    col: Collector,
    tally: Tally,
    tx: Vec<u8>,
    rx: Vec<u8>,
    /// the next slot
    k: u64,
    at: CallSchedule,
}

impl Caller {
    /// A client that made first contact (`discovery`; `probes`: its unanswered probe calls).
    pub fn new(
        spec: ClientSpec,
        c: Box<dyn Client>,
        contact: (Discovery, Vec<CallId>),
        at: CallSchedule,
    ) -> Self {
        let in_flight = (spec.in_flight as usize)
            .min(c.max_in_flight().unwrap_or(usize::MAX))
            .max(1);
        let col = Collector::new(at.warmup_end_ns, spec.period_ns, None)
            .expect("no samples file: cannot fail");
        Caller {
            tx: vec![0; HEADER_LEN + spec.request_bytes as usize],
            rx: Vec::with_capacity(
                HEADER_LEN + spec.reply_bytes.unwrap_or(spec.request_bytes) as usize + 64,
            ),
            spec,
            c,
            discovery: contact.0,
            book: CallBook::new(in_flight, contact.1),
            col,
            tally: Tally::default(),
            k: 0,
            at,
        }
    }

    fn slot(&self, k: u64) -> Option<u64> {
        let due = self.at.start_ns + k * self.spec.period_ns;
        (due < self.at.end_ns).then_some(due)
    }
}

/// The slots due in [`warmup_end_ns`, `end_ns`) of a schedule from `start_ns` every `period_ns`.
fn measured_slots(start_ns: u64, warmup_end_ns: u64, end_ns: u64, period_ns: u64) -> u64 {
    let first = warmup_end_ns.saturating_sub(start_ns).div_ceil(period_ns);
    let end = end_ns.saturating_sub(start_ns).div_ceil(period_ns);
    end.saturating_sub(first)
}

/// Call on `caller`'s schedule until it ends, then wait for the outstanding replies; the
/// report.
pub fn run(mut me: Caller, node: &NodeContext<'_>) -> CallerReport {
    loop {
        let now = now_ns();
        if signals::stopped() {
            break;
        }
        expire(&mut me, now);
        let due = me.slot(me.k).filter(|_| now < me.at.call_until_ns);
        let Some(due) = due else {
            if me.book.out.is_empty() || now >= me.at.drain_until_ns {
                break;
            }
            let wait = timeout_wait(&me, now).min(me.at.drain_until_ns - now);
            receive(&mut me, node, wait);
            continue;
        };
        if me.book.out.has_room() && now + me.at.spin_margin_ns >= due {
            while now_ns() < due {
                std::hint::spin_loop();
            }
            call(&mut me, node, due);
            continue;
        }
        let until = if me.book.out.has_room() {
            due - me.at.spin_margin_ns.min(due)
        } else {
            now + MAX_WAIT_NS
        };
        let wait = if node.busy_poll {
            0
        } else {
            until
                .saturating_sub(now)
                .clamp(1, MAX_WAIT_NS)
                .min(timeout_wait(&me, now))
        };
        if me.book.out.is_empty() {
            sleep_until_ns(now + wait);
        } else {
            receive(&mut me, node, wait);
        }
    }
    finish(me)
}

fn call(me: &mut Caller, node: &NodeContext<'_>, due: u64) {
    let warmup = due < me.at.warmup_end_ns;
    let seq = if warmup {
        WARMUP_SEQ + me.tally.warmup_sent
    } else {
        me.tally.sent
    };
    let _turn = node
        .executor
        .map(|m| m.lock().unwrap_or_else(|p| p.into_inner()));
    fill_payload(&mut me.tx[HEADER_LEN..], seq);
    let sent_ns = now_ns();
    Header {
        flags: if warmup { FLAG_WARMUP } else { 0 },
        run_id: node.run_id,
        topic: me.spec.id,
        seq,
        intended_ns: due,
        sent_ns,
        peer_rx_ns: node.source as u64, // the calling node, for the server's per-client count
        payload_len: me.spec.request_bytes,
    }
    .encode(&mut me.tx);
    let result = me.c.call(&me.tx);
    me.k += 1;
    if warmup {
        me.tally.warmup_sent += 1;
    } else {
        me.tally.sent += 1;
        me.col.window_start(due);
        me.col.sent(sent_ns);
        crate::allocs::message();
    }
    let call = Call {
        id: 0,
        seq,
        intended_ns: due,
        sent_ns,
        warmup,
    };
    me.book.sent(call, result.map_err(|_| ()));
}

/// Give up calls sent longer than the timeout ago.
fn expire(me: &mut Caller, now: u64) {
    let cut = now.saturating_sub(me.spec.timeout_ns);
    me.book.expire(cut, me.c.as_mut());
}

/// The longest wait before the oldest outstanding call times out.
fn timeout_wait(me: &Caller, now: u64) -> u64 {
    me.book.out.oldest_sent_ns().map_or(MAX_WAIT_NS, |s| {
        (s + me.spec.timeout_ns)
            .saturating_sub(now)
            .clamp(1, MAX_WAIT_NS)
    })
}

/// Receive at most one reply within `wait_ns` and run its callback.
fn receive(me: &mut Caller, node: &NodeContext<'_>, wait_ns: u64) {
    let reply = match me.c.recv_reply(&mut me.rx, wait_ns) {
        Ok(Some(r)) => r,
        Ok(None) | Err(TransportError::Unreachable { .. }) | Err(TransportError::Closed) => return,
        Err(_) => {
            sleep_until_ns(now_ns() + 1_000_000); // a failing receive does not spin
            return;
        }
    };
    let _turn = node
        .executor
        .map(|m| m.lock().unwrap_or_else(|p| p.into_inner()));
    on_reply(me, reply, now_ns()); // the reply's callback starts
}

fn on_reply(me: &mut Caller, reply: Reply, recv_ns: u64) {
    let check = ReplyCheck {
        run_id: None,
        expected: Some(me.spec.reply_bytes.unwrap_or(me.spec.request_bytes) as usize),
        foreign_is_answer: false,
    };
    me.book.reply(&mut me.col, reply, &me.rx, recv_ns, check);
}

fn finish(mut me: Caller) -> CallerReport {
    me.book.expire(u64::MAX, me.c.as_mut()); // never answered: timeouts
    let slots = measured_slots(
        me.at.start_ns,
        me.at.warmup_end_ns,
        me.at.end_ns,
        me.spec.period_ns,
    );
    let t = &me.tally;
    let in_flight = me.spec.in_flight as u64;
    let mut m = me.col.finish(
        "service",
        t.sent,
        t.warmup_sent,
        me.spec.request_bytes as u64,
        me.at.end_ns,
        None,
    );
    m.calls = Some(me.book.calls(
        m.accounting.received,
        me.spec.timeout_ns,
        in_flight as usize,
        me.c.as_ref(),
    ));
    CallerReport {
        service: me.spec.service.clone(),
        id: me.spec.id,
        slots,
        skipped: slots.saturating_sub(t.sent),
        measurement: m,
        discovery: me.discovery,
    }
}

#[cfg(test)]
mod tests {
    use super::measured_slots;

    #[test]
    fn measured_slots_are_those_due_inside_the_window() {
        // slots at 5, 15, 25, ...: warm-up until 20, end at 60: 25, 35, 45, 55
        assert_eq!(measured_slots(5, 20, 60, 10), 4);
        // a slot due exactly at the warm-up's end is measured, one at the end is not
        assert_eq!(measured_slots(0, 20, 60, 10), 4);
        assert_eq!(measured_slots(0, 0, 1_000, 10), 100);
    }
}
