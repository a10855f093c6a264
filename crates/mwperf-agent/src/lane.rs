//! The sending side of several topics (`--topics N`, ping and pub): one thread per topic, each
//! with its own endpoint, pacer, sequence numbers and statistics, all on one schedule. Every topic
//! makes first contact on its own; then all start at the same instant, so tick k is due at the
//! same time on every topic. At a tick, topic i sends right after topic i−1 (like one timer
//! callback publishing on each topic in turn), so on the receiving side the messages of a tick
//! arrive in topic order — what lets a single-threaded executor's queueing show (seed 001: topic 3
//! waits on topics 1–2). Closed loop (rate 0) has no ticks: topics then run unordered.
//! Cost: topic i spins (yielding) for the few µs between topic i−1's send and its own.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};

use mwperf_core::clock::now_ns;

use crate::signals;

/// Shared by the topics' threads.
pub struct Lanes {
    contact: Barrier,
    start_ns: Mutex<Option<u64>>,
    /// Per topic: 1 + the last schedule index it sent (0 = none yet).
    sent_upto: Vec<AtomicU64>,
    /// Per topic: its thread has stopped sending.
    done: Vec<AtomicBool>,
    ordered: bool,
}

/// One topic's view of the lanes (marks its topic done when dropped).
pub struct Lane<'a> {
    lanes: &'a Lanes,
    index: usize,
}

impl Lanes {
    /// `topics` lanes; `ordered` = send in topic order at each tick (scheduled rate).
    pub fn new(topics: usize, ordered: bool) -> Self {
        Lanes {
            contact: Barrier::new(topics),
            start_ns: Mutex::new(None),
            sent_upto: (0..topics).map(|_| AtomicU64::new(0)).collect(),
            done: (0..topics).map(|_| AtomicBool::new(false)).collect(),
            ordered,
        }
    }

    pub fn lane(&self, index: usize) -> Lane<'_> {
        Lane { lanes: self, index }
    }
}

impl Lane<'_> {
    /// The topic index this lane sends (carried in every header).
    pub fn topic(&self) -> u16 {
        self.index as u16
    }

    /// Call exactly once, after first contact (also when it failed): waits for every topic's
    /// first contact and returns the common start of the schedule.
    pub fn start_ns(&self) -> u64 {
        self.lanes.contact.wait();
        let mut start = self
            .lanes
            .start_ns
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        *start.get_or_insert_with(|| now_ns() + 1_000_000)
    }

    /// Before sending tick `index`: wait until the previous topic has sent it (or passed it, or
    /// stopped).
    #[inline]
    pub fn before_send(&self, index: u64) {
        if !self.lanes.ordered || self.index == 0 {
            return;
        }
        let prev = self.index - 1;
        while self.lanes.sent_upto[prev].load(Ordering::Acquire) <= index
            && !self.lanes.done[prev].load(Ordering::Acquire)
            && !signals::stopped()
        {
            std::thread::yield_now();
        }
    }

    /// Tick `index` has been sent on this topic.
    #[inline]
    pub fn after_send(&self, index: u64) {
        self.lanes.sent_upto[self.index].fetch_max(index + 1, Ordering::Release);
    }
}

impl Drop for Lane<'_> {
    fn drop(&mut self) {
        self.lanes.done[self.index].store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_send_each_tick_in_order_and_start_together() {
        let lanes = Lanes::new(3, true);
        let log = Mutex::new(Vec::new());
        let starts: Vec<u64> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..3usize)
                .rev() // start the last topic first: order must not depend on thread start order
                .map(|i| {
                    let (lanes, log) = (&lanes, &log);
                    s.spawn(move || {
                        let lane = lanes.lane(i);
                        let start = lane.start_ns();
                        for k in 0..50 {
                            lane.before_send(k);
                            log.lock().unwrap().push((k, i));
                            lane.after_send(k);
                        }
                        start
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(starts.iter().all(|&t| t == starts[0]));
        let log = log.into_inner().unwrap();
        for k in 0..50u64 {
            let order: Vec<usize> = log
                .iter()
                .filter(|(t, _)| *t == k)
                .map(|(_, i)| *i)
                .collect();
            assert_eq!(order, vec![0, 1, 2], "tick {k}");
        }
    }

    #[test]
    fn a_stopped_topic_does_not_block_the_next() {
        let lanes = Lanes::new(2, true);
        drop(lanes.lane(0)); // topic 0 gave up
        lanes.lane(1).before_send(5); // returns at once
    }
}
